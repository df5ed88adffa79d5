// Writes an environment's demonstration transcripts, for a default tiny model's warm start, as
// JSON lines ({"messages": [...]}) for make_tiny_model.py: COUNT instances, three transcripts each
// at turn 0 and, for about two in five, three more at a later turn (envs/puzzle/demos.ts).
// planpath-helper is Plan-Path with the tool helper (envs/planpath/helper.ts, a miniature).
//   node --import tsx services/engine/corpus/demos.ts planpath|planpath-helper|sokoban COUNT SEED > FILE
import type { ChatMessage } from '../../../envs/types.js';
import { demoTranscripts as planpath, helperDemoTranscripts as planpathHelper } from '../../../envs/planpath/demoTranscripts.js';
import { demoTranscripts as sokoban } from '../../../envs/sokoban/demoTranscripts.js';

const DEMOS: Record<string, (count: number, seed: number) => Generator<ChatMessage[]>> = { planpath, 'planpath-helper': planpathHelper, sokoban };
const [env = '', count = '1500', seed = '1'] = process.argv.slice(2);
const demos = DEMOS[env];
if (!demos) throw new Error(`demos.ts: the environment is one of ${Object.keys(DEMOS).join(', ')}, not '${env}'`);
for (const messages of demos(Number(count), Number(seed))) process.stdout.write(`${JSON.stringify({ messages })}\n`);
