// Writes an environment's demonstration transcripts, for a default tiny model's warm start, as
// JSON lines ({"messages": [...]}) for make_tiny_model.py: COUNT instances, three transcripts each
// at turn 0 and, for about two in five, three more at a later turn (envs/puzzle/demos.ts); with
// --reading, the reading corpus of the same instances instead (only answers that read their prompt).
// planpath-helper is Plan-Path with the tool helper (envs/planpath/helper.ts, a miniature).
//   node --import tsx services/engine/corpus/demos.ts planpath|planpath-helper|sokoban COUNT SEED [--reading] > FILE
import type { DemoKind } from '../../../envs/puzzle/demos.js';
import type { ChatMessage } from '../../../envs/types.js';
import { demoTranscripts as planpath, helperDemoTranscripts as planpathHelper } from '../../../envs/planpath/demoTranscripts.js';
import { demoTranscripts as sokoban } from '../../../envs/sokoban/demoTranscripts.js';

const DEMOS: Record<string, (count: number, seed: number, kind: DemoKind) => Generator<ChatMessage[]>> = { planpath, 'planpath-helper': planpathHelper, sokoban };
const args = process.argv.slice(2);
const kind: DemoKind = args.includes('--reading') ? 'reading' : 'task';
const [env = '', count = '1500', seed = '1'] = args.filter((a) => a !== '--reading');
const demos = DEMOS[env];
if (!demos) throw new Error(`demos.ts: the environment is one of ${Object.keys(DEMOS).join(', ')}, not '${env}'`);
for (const messages of demos(Number(count), Number(seed), kind)) process.stdout.write(`${JSON.stringify({ messages })}\n`);
