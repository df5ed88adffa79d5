// `tandem episodes list|show|verify`: the audit of a run's episodes (services/audit/).
import { InvalidArgumentError, type Command } from 'commander';
import { and, asc, eq, type SQL } from 'drizzle-orm';
import { formatTranscript, loadTranscript } from '../audit/transcript.js';
import { verifyEpisode, verifyRun, type EpisodeVerdict, type RunVerdict } from '../audit/verify.js';
import { episodes } from '../../infra/db/schema.js';
import { printJson, usageError, type Act } from './args.js';
import { withDatabase } from '../client/database.js';

export function registerEpisodes(program: Command, act: Act): void {
  const group = program.command('episodes').description("the audit of a run's episodes, from the record in Postgres");
  group
    .command('list')
    .description("a run's episodes from the record")
    .requiredOption('--run <RUN_ID>', 'the training run')
    .option(
      '--filter <KEY=VALUE,...>',
      'only episodes with these values, comma-separated or repeated; keys: success=true|false, iteration=N, phase=train|eval, status=running|finished, seed=N, turns=N',
      (value: string, previous: SQL[] = []) => [...previous, ...episodeFilters([value])],
    )
    .option('--json', 'print the episodes as one JSON array')
    .action(act(list));
  group
    .command('show')
    .description('the transcript: prompts, responses, observations, rewards, advantages, updates')
    .argument('<EPISODE_ID>', 'the episode: <run>/it<i>/ep<j>, or <run>/eval/it<i>/ep<j>')
    .option('--json', 'print the transcript as JSON')
    .action(act(show));
  group
    .command('verify')
    .description('re-execute episodes from the record and check its hash chains (exit 1 naming the first difference)')
    .argument('[EPISODE_ID]', 'one episode')
    .option('--run <RUN_ID>', 'every episode of the run, its evaluations included')
    .option('--json', 'print the verdicts as JSON')
    .action(act(verify));
}

/** `--filter` pairs as SQL conditions on the episodes read model; an unknown key or bad value names itself. */
export function episodeFilters(specs: string[]): SQL[] {
  const int = (key: string, v: string) => {
    if (!/^-?\d+$/.test(v)) throw new InvalidArgumentError(`${key}=${v}: not an integer`);
    return Number(v);
  };
  return specs
    .flatMap((s) => s.split(','))
    .filter((s) => s.trim() !== '')
    .map((pair) => {
      const eqAt = pair.indexOf('=');
      if (eqAt < 0) throw new InvalidArgumentError(`${pair}: expected KEY=VALUE`);
      const key = pair.slice(0, eqAt).trim();
      const value = pair.slice(eqAt + 1).trim();
      switch (key) {
        case 'success':
          if (value !== 'true' && value !== 'false') throw new InvalidArgumentError(`success=${value}: expected true or false`);
          return eq(episodes.success, value === 'true');
        case 'iteration':
          return eq(episodes.iteration, int(key, value));
        case 'seed':
          return eq(episodes.problemSeed, int(key, value));
        case 'turns':
          return eq(episodes.turns, int(key, value));
        case 'status':
          return eq(episodes.status, value);
        case 'phase':
          if (value !== 'train' && value !== 'eval') throw new InvalidArgumentError(`phase=${value}: expected train or eval`);
          return eq(episodes.phase, value);
        default:
          throw new InvalidArgumentError(`${key}: unknown key (success, iteration, phase, status, seed, turns)`);
      }
    });
}

async function list(opts: { run: string; filter?: SQL[]; json?: boolean }): Promise<number> {
  const where = and(eq(episodes.runId, opts.run), ...(opts.filter ?? []));
  const rows = await withDatabase((db) =>
    db.select().from(episodes).where(where).orderBy(asc(episodes.iteration), asc(episodes.episodeId)),
  );
  if (opts.json) {
    printJson(rows.map((r) => ({ episodeId: r.episodeId, iteration: r.iteration, phase: r.phase, seed: r.problemSeed, status: r.status, success: r.success, turns: r.turns, rewardByAgent: r.rewardByAgent })));
  } else {
    console.log(['episode', 'iteration', 'phase', 'seed', 'status', 'success', 'turns', 'reward by agent'].join('\t'));
    for (const r of rows) {
      const rewards = r.rewardByAgent ? Object.entries(r.rewardByAgent as Record<string, number>).map(([a, x]) => `${a}=${x.toFixed(3)}`).join(' ') : '-';
      console.log([r.episodeId, r.iteration, r.phase, r.problemSeed, r.status, r.success ?? '-', r.turns ?? '-', rewards].join('\t'));
    }
  }
  console.error(`${rows.length} episode(s)`);
  return 0;
}

async function show(episodeId: string, opts: { json?: boolean }): Promise<number> {
  const t = await withDatabase((db) => loadTranscript(db, episodeId));
  console.log(opts.json ? JSON.stringify(t, null, 2) : formatTranscript(t));
  return 0;
}

function report(v: EpisodeVerdict): void {
  if (v.problems.length === 0) console.log(`ok    ${v.episodeId} (${v.steps} steps re-executed, hash chains intact)`);
  else {
    console.log(`FAIL  ${v.episodeId}`);
    for (const p of v.problems) console.log(`      ${p}`);
  }
}

async function verify(episodeId: string | undefined, opts: { run?: string; json?: boolean }, cmd: Command): Promise<number> {
  const runId = opts.run;
  if ((episodeId === undefined) === (runId === undefined)) usageError(cmd, 'give EPISODE_ID or --run RUN_ID (one of them)');
  const verdict: RunVerdict = runId
    ? await withDatabase((db) => verifyRun(db, runId, opts.json ? () => {} : report))
    : { episodes: [await withDatabase((db) => verifyEpisode(db, episodeId!))], problems: [] };
  const failed = verdict.episodes.filter((v) => v.problems.length > 0).length;
  if (opts.json) printJson({ ...(runId ? { runId } : {}), ...verdict, verified: verdict.episodes.length - failed, failed });
  else if (!runId) report(verdict.episodes[0]);
  else {
    for (const p of verdict.problems) console.log(`FAIL  run ${runId}: ${p}`);
    console.log(`${verdict.episodes.length - failed}/${verdict.episodes.length} episodes verified${verdict.problems.length ? `; ${verdict.problems.length} run problem(s)` : ''}`);
  }
  return failed === 0 && verdict.problems.length === 0 ? 0 : 1;
}
