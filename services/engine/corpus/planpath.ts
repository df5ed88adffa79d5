// Writes the Plan-Path demonstration transcripts as JSON lines ({"messages": [...]}) for
// make_tiny_model.py:  node --import tsx services/engine/corpus/planpath.ts COUNT SEED > FILE
import { demoTranscripts } from '../../../envs/planpath/demoTranscripts.js';

const [count = '2000', seed = '1'] = process.argv.slice(2);
for (const messages of demoTranscripts(Number(count), Number(seed))) process.stdout.write(`${JSON.stringify({ messages })}\n`);
