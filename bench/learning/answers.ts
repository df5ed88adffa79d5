// What a row's final evaluation answered, read back from its stored transcripts, for each run of a
// learning-bench results file.
// Grid puzzles: the plan agent's moves per answer, the success with no invalid move on the way and
// (Sokoban) the share of episodes a deadlock ended (the plan agent's recorded answers replayed from
// the recorded states with the env's own parser and reducer, under the run's rules;
// bench/learning/chance.ts gives what random move lists score). Separates a row that learned paths
// from one that learned to answer long lists, which reach the goal of a small grid by chance, or
// (Sokoban) short ones, which push no box into a corner.
// Math (the two-agent arithmetic suites): per turn, how often the tool agent's program printed the
// right answer or failed, how often the reasoner answered right, how often the two agreed (which
// ends the episode), and what the second turn added; for the sampled evaluation and the greedy one.
// Separates a team that learned to compute (the program right) from one that learned to agree.
// Beside it, from each trained run's training turns: the reasoner's samples (every candidate the
// update read) in each third of the training, the share without a final answer, the share right
// and their mean length; and the reasoner turns an episode took, failed against solved (a failed
// trajectory with more turns gives its failures more samples, and so more weight in a token-mean
// loss). Separates a reasoner that learned to answer from one that drifted away from answering.
// And from its updates, by thirds: its policy's entropy (nats a token, the update's mean) and how
// the advantages its samples were trained with weigh, each times the sample's characters (a
// token-mean loss weighs a sample by its length): the negative mass over the positive. Separates
// updates that mostly push samples down, which spreads the policy, from balanced ones.
//
// Usage: node --import tsx bench/learning/answers.ts --stamp S [--save] (needs the stack whose
// Postgres holds the runs: `npx tandem stack up`). --save also writes the table to
// bench/learning/results/S.answers.md, where a run whose transcripts this database no longer holds
// (its stack lost with its machine) keeps the line saved while it had them: run it as rows land.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { and, asc, eq, isNotNull, like } from 'drizzle-orm';
import { applyMoves as planPathMoves, type PlanPathState } from '../../envs/planpath/index.js';
import { parseMoveAnswer } from '../../envs/puzzle/index.js';
import { applyMoves as sokobanMoves, type SokobanState } from '../../envs/sokoban/index.js';
import { samples, turnGroups, updates } from '../../infra/db/schema.js';
import { withDatabase } from '../../services/client/database.js';
import { withDefaults, type RunResult } from './resultsFile.js';
import { suiteOf } from './rows.js';

const { values } = parseArgs({ options: { stamp: { type: 'string' }, save: { type: 'boolean', default: false } } });
if (!values.stamp) throw new Error('--stamp: the learning-bench results file to read (bench/learning/results/<stamp>.jsonl)');
const savedFile = `bench/learning/results/${values.stamp}.answers.md`;
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
const MATH_DIR = 'configs/smollm2'; // every SmolLM2 suite plays the math configs (rows.ts)
const replay = REPLAYS[dir];
if (!replay && dir !== MATH_DIR) throw new Error(`--stamp ${values.stamp}: its suite plays ${dir}; answers.ts reads back ${[...Object.keys(REPLAYS), MATH_DIR].join(', ')}`);
const sokoban = dir === 'configs/sokoban';

/** A recorded candidate (the chosen one of its turn group): its text and what the env scored. */
interface Sample { text: string; global: number; local: number; done: boolean; solved: boolean; outcome: string }
const pct = (x: number, of: number) => (of === 0 ? '-' : `${(100 * x / of).toFixed(1)}%`);

/** The read-back's table: its lines printed, and with --save written to savedFile. A run whose
 * transcripts this database lacks takes its line from savedFile where that has one (by the line's
 * key, its first cells), else the "no transcripts" line. */
class Table {
  private readonly lines: string[] = [];
  private readonly saved: string[] = existsSync(savedFile) ? readFileSync(savedFile, 'utf8').split('\n') : [];
  constructor(private readonly head: string) {}
  line(text: string) {
    this.lines.push(text);
  }
  missing(key: string, text: string) {
    this.lines.push(this.saved.find((l) => l.startsWith(key + ' ') && !l.includes('no transcripts of')) ?? text);
  }
  text(): string {
    return [this.head, this.head.replace(/[^|]+/g, '---'), ...this.lines].join('\n');
  }
}

/** Prints the tables, and with --save writes them to savedFile. */
function print(...tables: Table[]) {
  const text = tables.map((t) => t.text()).join('\n\n');
  console.log(text);
  if (values.save) writeFileSync(savedFile, `${text}\n`);
}

if (dir === MATH_DIR) await mathAnswers();
else await gridAnswers(replay);

async function gridAnswers(replay: Replay) {
  await withDatabase(async (db) => {
    const table = new Table(`| row | seed | test success | ... with no invalid move | moves per plan answer |${sokoban ? ' ended by a deadlock |' : ''}`);
    for (const { row, seed, runId, success } of finals) {
      const groups = await db
        .select({ episode: turnGroups.episodeId, state: turnGroups.state, samples: turnGroups.samples, chosen: turnGroups.chosen })
        .from(turnGroups)
        .where(and(like(turnGroups.episodeId, `${runId}/test-eval/%`), eq(turnGroups.agent, 'plan_agent')))
        .orderBy(asc(turnGroups.episodeId), asc(turnGroups.turn));
      if (groups.length === 0) {
        table.missing(`| ${row} | ${seed} |`, `| ${row} | ${seed} | ${(100 * success).toFixed(1)}% | no transcripts of ${runId} in this database |`);
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
      const deadlocked = episodes.filter((e) => e.deadlock).length;
      table.line(`| ${row} | ${seed} | ${pct(success, 1)} | ${pct(clean, episodes.length)} | ${(moves / groups.length).toFixed(1)} |${sokoban ? ` ${pct(deadlocked, episodes.length)} |` : ''}`);
    }
    print(table);
  });
}

/** One math episode's chosen answers, in order: who acted in which turn and what it scored. */
type MathTurn = { agent: string; turn: number; sample: Sample };

/** The two-agent arithmetic: what each agent got right per turn, and how the episodes ended. */
async function mathAnswers() {
  const split = withDefaults(lines[0].settings).evalOn; // run.ts's evaluation ids: <run>/<split>-eval[-greedy]
  const EVALS = [{ phase: `${split}-eval`, name: 'sampled' }, { phase: `${split}-eval-greedy`, name: 'greedy' }];
  await withDatabase(async (db) => {
    console.log('Per turn (t1, t2): episodes whose tool program printed the right answer, whose program failed (no code, error, timeout), whose reasoner answered right; an episode ends in t1 when the two agree (the single agent: when it gives an answer); "solved" is the team\'s final answer right.');
    console.log('');
    const table = new Table('| row | seed | evaluation | episodes | solved | t1: program right | t1: program failed | t1: reasoner right | ended in t1 (solved) | reached t2 | t2: program right | t2: reasoner right | solved in t2 |');
    for (const { row, seed, runId } of finals) {
      for (const { phase, name } of EVALS) {
        const groups = await db
          .select({ episode: turnGroups.episodeId, agent: turnGroups.agent, turn: turnGroups.turn, samples: turnGroups.samples, chosen: turnGroups.chosen })
          .from(turnGroups)
          .where(like(turnGroups.episodeId, `${runId}/${phase}/%`))
          .orderBy(asc(turnGroups.episodeId), asc(turnGroups.turn), asc(turnGroups.position));
        if (groups.length === 0) {
          table.missing(`| ${row} | ${seed} | ${name} |`, `| ${row} | ${seed} | ${name} | no transcripts of ${runId}/${phase} in this database |`);
          continue;
        }
        const episodes = new Map<string, MathTurn[]>();
        for (const g of groups) {
          const turns = episodes.get(g.episode) ?? [];
          turns.push({ agent: g.agent, turn: g.turn, sample: (g.samples as Sample[])[g.chosen] });
          episodes.set(g.episode, turns);
        }
        const all = [...episodes.values()];
        const at = (turns: MathTurn[], agent: string, turn: number) => turns.find((t) => t.agent === agent && t.turn === turn)?.sample;
        const count = (f: (turns: MathTurn[]) => boolean) => all.filter(f).length;
        const team = all.some((turns) => turns.some((t) => t.agent === 'tool_generator'));
        const last = (turns: MathTurn[]) => turns[turns.length - 1].sample;
        const reachedT2 = count((turns) => turns.some((t) => t.turn === 1));
        const toolCol = (turn: number, f: (s: Sample) => boolean, of: number) => (team ? pct(count((turns) => { const s = at(turns, 'tool_generator', turn); return !!s && f(s); }), of) : '-');
        const reasonerRight = (turn: number) => count((turns) => at(turns, 'reasoning_generator', turn)?.global === 1);
        const endedT1 = count((turns) => !turns.some((t) => t.turn === 1) && last(turns).done);
        const solvedT1 = count((turns) => !turns.some((t) => t.turn === 1) && last(turns).solved);
        const solvedT2 = count((turns) => turns.some((t) => t.turn === 1) && last(turns).solved);
        const solved = count((turns) => last(turns).solved);
        const n = all.length;
        table.line(
          `| ${row} | ${seed} | ${name} | ${n} | ${pct(solved, n)} | ${toolCol(0, (s) => s.global === 1, n)} | ${toolCol(0, (s) => s.local < 0, n)} | ${pct(reasonerRight(0), n)} | ` +
            `${pct(endedT1, n)} (${pct(solvedT1, n)}) | ${pct(reachedT2, n)} | ${toolCol(1, (s) => s.global === 1, reachedT2)} | ${pct(reasonerRight(1), reachedT2)} | ${pct(solvedT2, reachedT2)} |`,
        );
      }
    }
    print(table, await reasonerTraining(db), await reasonerUpdates(db));
  });
}

/** The reasoner's training samples of each trained run, by thirds of its training, and its turns per episode. */
async function reasonerTraining(db: Parameters<Parameters<typeof withDatabase>[0]>[0]): Promise<Table> {
  const table = new Table("| row | seed | training | reasoner's samples, iterations in thirds: without a final answer / right / characters | reasoner turns per episode, failed / solved |");
  for (const { row, seed, runId, iterations } of finals) {
    if (iterations === 0) continue;
    const groups = await db
      .select({ episode: turnGroups.episodeId, iteration: turnGroups.iteration, samples: turnGroups.samples, chosen: turnGroups.chosen })
      .from(turnGroups)
      .where(and(like(turnGroups.episodeId, `${runId}/it%`), eq(turnGroups.agent, 'reasoning_generator')));
    if (groups.length === 0) {
      table.missing(`| ${row} | ${seed} | training |`, `| ${row} | ${seed} | training | no transcripts of ${runId}'s training in this database |`);
      continue;
    }
    const third = Math.ceil(iterations / 3);
    const thirds = [0, 1, 2].map((i) => {
      const samples = groups.filter((g) => Math.floor(g.iteration / third) === i).flatMap((g) => g.samples as Sample[]);
      const none = samples.filter((s) => s.outcome.startsWith('no final answer')).length;
      const right = samples.filter((s) => s.global === 1).length;
      const chars = samples.reduce((n, s) => n + s.text.length, 0);
      return `${i * third}-${Math.min(iterations, (i + 1) * third) - 1}: ${pct(none, samples.length)} / ${pct(right, samples.length)} / ${samples.length ? Math.round(chars / samples.length) : '-'}`;
    });
    // An episode's chosen reasoner turns, and whether its last one solved it.
    const episodes = new Map<string, Sample[]>();
    for (const g of groups) episodes.set(g.episode, [...(episodes.get(g.episode) ?? []), (g.samples as Sample[])[g.chosen]]);
    const turnsWhere = (solved: boolean) => {
      const eps = [...episodes.values()].filter((turns) => turns.some((s) => s.solved) === solved);
      return eps.length ? (eps.reduce((n, turns) => n + turns.length, 0) / eps.length).toFixed(2) : '-';
    };
    table.line(`| ${row} | ${seed} | training | ${thirds.join('; ')} | ${turnsWhere(false)} / ${turnsWhere(true)} |`);
  }
  return table;
}

/** The reasoner's updates of each trained run, by thirds of its training: its policy's entropy, and its samples' advantage mass, negative over positive. */
async function reasonerUpdates(db: Parameters<Parameters<typeof withDatabase>[0]>[0]): Promise<Table> {
  const table = new Table("| row | seed | updates | the reasoner's policy, entropy a token, iterations in thirds | its samples' advantage x characters, negative over positive, in thirds |");
  for (const { row, seed, runId, iterations } of finals) {
    if (iterations === 0) continue;
    const trained = await db
      .select({ iteration: samples.iteration, policy: samples.policy, advantage: samples.advantage, candidate: samples.candidate, texts: turnGroups.samples })
      .from(samples)
      .innerJoin(turnGroups, and(eq(turnGroups.episodeId, samples.episodeId), eq(turnGroups.turn, samples.turn), eq(turnGroups.agent, samples.agent)))
      .where(and(like(samples.episodeId, `${runId}/it%`), eq(samples.agent, 'reasoning_generator'), isNotNull(samples.advantage)));
    if (trained.length === 0) {
      table.missing(`| ${row} | ${seed} | updates |`, `| ${row} | ${seed} | updates | no samples of ${runId}'s training in this database |`);
      continue;
    }
    const entropies = await db
      .select({ iteration: updates.iteration, metrics: updates.metrics })
      .from(updates)
      .where(and(eq(updates.runId, runId), eq(updates.policy, trained[0].policy)));
    const third = Math.ceil(iterations / 3);
    const inThird = (i: number) => (it: { iteration: number }) => Math.floor(it.iteration / third) === i;
    const cells = [0, 1, 2].map((i) => {
      const e = entropies.filter(inThird(i)).map((u) => (u.metrics as { entropy?: number }).entropy).filter((x): x is number => typeof x === 'number');
      let positive = 0;
      let negative = 0;
      for (const t of trained.filter(inThird(i))) {
        const mass = t.advantage! * (t.texts as Sample[])[t.candidate].text.length;
        if (mass > 0) positive += mass;
        else negative -= mass;
      }
      return { entropy: e.length ? (e.reduce((a, x) => a + x, 0) / e.length).toFixed(2) : '-', ratio: positive > 0 ? `${(negative / positive).toFixed(2)}x` : '-' };
    });
    table.line(`| ${row} | ${seed} | updates | ${cells.map((c) => c.entropy).join(' / ')} | ${cells.map((c) => c.ratio).join(' / ')} |`);
  }
  return table;
}
