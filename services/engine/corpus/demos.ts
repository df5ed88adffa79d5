// Writes an environment's demonstration transcripts, for a default tiny model's warm start, as
// JSON lines ({"messages": [...]}) for make_tiny_model.py: COUNT instances, three transcripts each.
//   node --import tsx services/engine/corpus/demos.ts planpath|sokoban COUNT SEED > FILE
import type { ChatMessage } from '../../../envs/types.js';
import { demoTranscripts as planpath } from '../../../envs/planpath/demoTranscripts.js';
import { demoTranscripts as sokoban } from '../../../envs/sokoban/demoTranscripts.js';

const DEMOS: Record<string, (count: number, seed: number) => Generator<ChatMessage[]>> = { planpath, sokoban };
const [env = '', count = '2000', seed = '1'] = process.argv.slice(2);
const demos = DEMOS[env];
if (!demos) throw new Error(`demos.ts: the environment is one of ${Object.keys(DEMOS).join(', ')}, not '${env}'`);
for (const messages of demos(Number(count), Number(seed))) process.stdout.write(`${JSON.stringify({ messages })}\n`);
