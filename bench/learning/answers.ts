// What a Plan-Path row's final evaluation answered, read back from its stored transcripts: for
// each run of a learning-bench results file, the plan agent's moves per answer and the success
// with no invalid move on the way (the plan agent's recorded answers replayed from the recorded
// states with the env's own parser and reducer, under the run's rule; bench/learning/chance.ts
// gives what random move lists score). Separates a row that learned paths from one that learned
// to answer long lists, which reach the goal of a small grid by chance.
//
// Usage: node --import tsx bench/learning/answers.ts --stamp S (needs the stack whose Postgres
// holds the runs: `npx tandem stack up`).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { and, asc, eq, like } from 'drizzle-orm';
import { applyMoves, parseActionList, type PlanPathState } from '../../envs/planpath/index.js';
import { turnGroups } from '../../infra/db/schema.js';
import { withDatabase } from '../../services/client/database.js';
import type { RunResult } from './resultsFile.js';

const { values } = parseArgs({ options: { stamp: { type: 'string' } } });
if (!values.stamp) throw new Error('--stamp: the learning-bench results file to read (bench/learning/results/<stamp>.jsonl)');
const lines = readFileSync(`bench/learning/results/${values.stamp}.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const finals: RunResult[] = lines.filter((l) => l.kind === 'final');

interface Sample { text: string }

await withDatabase(async (db) => {
  console.log('| row | seed | test success | ... with no invalid move | moves per plan answer |');
  console.log('|---|---|---|---|---|');
  for (const { row, seed, runId, success } of finals) {
    const groups = await db
      .select({ episode: turnGroups.episodeId, state: turnGroups.state, samples: turnGroups.samples, chosen: turnGroups.chosen })
      .from(turnGroups)
      .where(and(like(turnGroups.episodeId, `${runId}/test-eval/%`), eq(turnGroups.agent, 'plan_agent')))
      .orderBy(asc(turnGroups.episodeId), asc(turnGroups.turn));
    const ended = new Map<string, PlanPathState>();
    let moves = 0;
    for (const g of groups) {
      const answer = parseActionList((g.samples as Sample[])[g.chosen].text) ?? [];
      moves += answer.length;
      ended.set(g.episode, applyMoves(g.state as PlanPathState, answer).state);
    }
    const episodes = [...ended.values()];
    const clean = episodes.filter((s) => s.solved && s.invalidCount === 0).length;
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    console.log(`| ${row} | ${seed} | ${pct(success)} | ${pct(clean / episodes.length)} | ${(moves / groups.length).toFixed(1)} |`);
  }
});
