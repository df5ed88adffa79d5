// What a grid-puzzle row's final evaluation answered, read back from its stored transcripts: for
// each run of a learning-bench results file, the plan agent's moves per answer, the success with no
// invalid move on the way and (Sokoban) the share of episodes a deadlock ended (the plan agent's
// recorded answers replayed from the recorded states with the env's own parser and reducer, under
// the run's rules; bench/learning/chance.ts gives what random move lists score). Separates a row
// that learned paths from one that learned to answer long lists, which reach the goal of a small
// grid by chance, or (Sokoban) short ones, which push no box into a corner.
//
// Usage: node --import tsx bench/learning/answers.ts --stamp S (needs the stack whose Postgres
// holds the runs: `npx tandem stack up`).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { and, asc, eq, like } from 'drizzle-orm';
import { applyMoves as planPathMoves, type PlanPathState } from '../../envs/planpath/index.js';
import { parseMoveAnswer } from '../../envs/puzzle/index.js';
import { applyMoves as sokobanMoves, type SokobanState } from '../../envs/sokoban/index.js';
import { turnGroups } from '../../infra/db/schema.js';
import { withDatabase } from '../../services/client/database.js';
import type { RunResult } from './resultsFile.js';
import { suiteOf } from './rows.js';

const { values } = parseArgs({ options: { stamp: { type: 'string' } } });
if (!values.stamp) throw new Error('--stamp: the learning-bench results file to read (bench/learning/results/<stamp>.jsonl)');
const lines = readFileSync(`bench/learning/results/${values.stamp}.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const finals: RunResult[] = lines.filter((l) => l.kind === 'final');

/** What an episode's end says, whichever grid puzzle it is. */
interface Ended { solved: boolean; invalidCount: number; deadlock: boolean }
type Replay = (state: unknown, moves: string[]) => Ended;
const REPLAYS: Record<string, Replay> = {
  'configs/planpath': (state, moves) => ({ ...planPathMoves(state as PlanPathState, moves).state, deadlock: false }),
  'configs/sokoban': (state, moves) => {
    const end = sokobanMoves(state as SokobanState, moves).state;
    return { ...end, deadlock: end.failure === 'deadlock' };
  },
};
const { dir } = suiteOf(lines[0].settings.suite);
const replay = REPLAYS[dir];
if (!replay) throw new Error(`--stamp ${values.stamp}: its suite plays ${dir}; answers.ts reads back ${Object.keys(REPLAYS).join(' and ')}`);
const sokoban = dir === 'configs/sokoban';

interface Sample { text: string }

await withDatabase(async (db) => {
  console.log(`| row | seed | test success | ... with no invalid move | moves per plan answer |${sokoban ? ' ended by a deadlock |' : ''}`);
  console.log(`|---|---|---|---|---|${sokoban ? '---|' : ''}`);
  for (const { row, seed, runId, success } of finals) {
    const groups = await db
      .select({ episode: turnGroups.episodeId, state: turnGroups.state, samples: turnGroups.samples, chosen: turnGroups.chosen })
      .from(turnGroups)
      .where(and(like(turnGroups.episodeId, `${runId}/test-eval/%`), eq(turnGroups.agent, 'plan_agent')))
      .orderBy(asc(turnGroups.episodeId), asc(turnGroups.turn));
    if (groups.length === 0) {
      console.log(`| ${row} | ${seed} | ${(100 * success).toFixed(1)}% | no transcripts of ${runId} in this database |`);
      continue;
    }
    const ended = new Map<string, Ended>();
    let moves = 0;
    for (const g of groups) {
      const answer = parseMoveAnswer((g.samples as Sample[])[g.chosen].text) ?? [];
      moves += answer.length;
      ended.set(g.episode, replay(g.state, answer));
    }
    const episodes = [...ended.values()];
    const clean = episodes.filter((s) => s.solved && s.invalidCount === 0).length;
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    const deadlocked = episodes.filter((e) => e.deadlock).length;
    console.log(`| ${row} | ${seed} | ${pct(success)} | ${pct(clean / episodes.length)} | ${(moves / groups.length).toFixed(1)} |${sokoban ? ` ${pct(deadlocked / episodes.length)} |` : ''}`);
  }
});
