// Writes an environment's demonstration transcripts, for a default tiny model's warm start, as
// JSON lines ({"messages": [...]}) for make_tiny_model.py: COUNT instances, three transcripts each
// at turn 0 and, for about two in five, three more at a later turn (envs/puzzle/demos.ts); with
// --reading plan|tool, a reading corpus of the same instances instead (that role's answers that
// read their prompt; the tool agent's only with the helper).
// planpath-helper is Plan-Path with the tool helper (envs/planpath/helper.ts, a miniature);
// planpath-helper-named the same under env.helper_grid named (the grid passed as `rows`).
//   node --import tsx services/engine/corpus/demos.ts planpath|planpath-helper|planpath-helper-named|sokoban COUNT SEED [--reading plan|tool] > FILE
import { DEMO_KINDS, type DemoKind } from '../../../envs/puzzle/demos.js';
import type { ChatMessage } from '../../../envs/types.js';
import { demoTranscripts as planpath, helperDemoTranscripts as planpathHelper } from '../../../envs/planpath/demoTranscripts.js';
import { demoTranscripts as sokoban } from '../../../envs/sokoban/demoTranscripts.js';

const DEMOS: Record<string, (count: number, seed: number, kind: DemoKind) => Generator<ChatMessage[]>> = {
  planpath,
  'planpath-helper': planpathHelper,
  'planpath-helper-named': (count, seed, kind) => planpathHelper(count, seed, kind, 'named'),
  sokoban,
};
const args = process.argv.slice(2);
const at = args.indexOf('--reading');
const kind = (at >= 0 ? `read-${args[at + 1]}` : 'task') as DemoKind;
if (!DEMO_KINDS.includes(kind)) throw new Error(`demos.ts: --reading plan or --reading tool, not '${args[at + 1] ?? ''}'`);
const [env = '', count = '1500', seed = '1'] = at >= 0 ? [...args.slice(0, at), ...args.slice(at + 2)] : args;
const demos = DEMOS[env];
if (!demos) throw new Error(`demos.ts: the environment is one of ${Object.keys(DEMOS).join(', ')}, not '${env}'`);
for (const messages of demos(Number(count), Number(seed), kind)) process.stdout.write(`${JSON.stringify({ messages })}\n`);
