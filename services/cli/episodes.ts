// `tandem episodes list|show|verify`: the audit of a run's episodes (services/audit/).
import { and, asc, eq, type SQL } from 'drizzle-orm';
import { formatTranscript, loadTranscript } from '../audit/transcript.js';
import { verifyEpisode, verifyRun, type EpisodeVerdict } from '../audit/verify.js';
import { episodes } from '../../infra/db/schema.js';
import { withDatabase } from './database.js';

const USAGE = `usage: tandem episodes list --run RUN_ID [--filter KEY=VALUE[,KEY=VALUE ...]] ...
         keys: success=true|false, iteration=N, phase=train|eval, status=running|finished, seed=N, turns=N
       tandem episodes show EPISODE_ID [--json]
       tandem episodes verify EPISODE_ID | --run RUN_ID`;

class UsageError extends Error {}

/** `--filter` pairs as SQL conditions on the episodes read model; an unknown key or bad value names itself. */
export function episodeFilters(specs: string[]): SQL[] {
  const int = (key: string, v: string) => {
    if (!/^-?\d+$/.test(v)) throw new UsageError(`--filter ${key}=${v}: not an integer`);
    return Number(v);
  };
  return specs
    .flatMap((s) => s.split(','))
    .filter((s) => s.trim() !== '')
    .map((pair) => {
      const eqAt = pair.indexOf('=');
      if (eqAt < 0) throw new UsageError(`--filter ${pair}: expected KEY=VALUE`);
      const key = pair.slice(0, eqAt).trim();
      const value = pair.slice(eqAt + 1).trim();
      switch (key) {
        case 'success':
          if (value !== 'true' && value !== 'false') throw new UsageError(`--filter success=${value}: expected true or false`);
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
          if (value !== 'train' && value !== 'eval') throw new UsageError(`--filter phase=${value}: expected train or eval`);
          return eq(episodes.phase, value);
        default:
          throw new UsageError(`--filter ${key}: unknown key (success, iteration, phase, status, seed, turns)`);
      }
    });
}

/** The values of every `--name VALUE` in args, and the remaining positional args. */
function options(args: string[], names: string[]): { values: Record<string, string[]>; flags: Set<string>; positional: string[] } {
  const values: Record<string, string[]> = {};
  const flags = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (names.includes(a)) {
      if (i + 1 >= args.length) throw new UsageError(`${a} needs a value`);
      (values[a] ??= []).push(args[++i]);
    } else if (a.startsWith('--')) flags.add(a);
    else positional.push(a);
  }
  return { values, flags, positional };
}

async function list(args: string[]): Promise<number> {
  const { values, flags, positional } = options(args, ['--run', '--filter']);
  const runId = values['--run']?.[0];
  if (!runId || positional.length > 0 || flags.size > 0) throw new UsageError('episodes list needs --run RUN_ID');
  const where = and(eq(episodes.runId, runId), ...episodeFilters(values['--filter'] ?? []));
  const rows = await withDatabase((db) =>
    db.select().from(episodes).where(where).orderBy(asc(episodes.iteration), asc(episodes.episodeId)),
  );
  console.log(['episode', 'iteration', 'phase', 'seed', 'status', 'success', 'turns', 'reward by agent'].join('\t'));
  for (const r of rows) {
    const rewards = r.rewardByAgent ? Object.entries(r.rewardByAgent as Record<string, number>).map(([a, x]) => `${a}=${x.toFixed(3)}`).join(' ') : '-';
    console.log([r.episodeId, r.iteration, r.phase, r.problemSeed, r.status, r.success ?? '-', r.turns ?? '-', rewards].join('\t'));
  }
  console.error(`${rows.length} episode(s)`);
  return 0;
}

async function show(args: string[]): Promise<number> {
  const { flags, positional } = options(args, []);
  const [episodeId] = positional;
  if (!episodeId || positional.length > 1 || [...flags].some((f) => f !== '--json')) throw new UsageError('episodes show needs one EPISODE_ID');
  const t = await withDatabase((db) => loadTranscript(db, episodeId));
  console.log(flags.has('--json') ? JSON.stringify(t, null, 2) : formatTranscript(t));
  return 0;
}

function report(v: EpisodeVerdict): void {
  if (v.problems.length === 0) console.log(`ok    ${v.episodeId} (${v.steps} steps re-executed, hash chains intact)`);
  else {
    console.log(`FAIL  ${v.episodeId}`);
    for (const p of v.problems) console.log(`      ${p}`);
  }
}

async function verify(args: string[]): Promise<number> {
  const { values, flags, positional } = options(args, ['--run']);
  const runId = values['--run']?.[0];
  if (flags.size > 0 || (runId ? positional.length > 0 : positional.length !== 1)) throw new UsageError('episodes verify needs EPISODE_ID or --run RUN_ID');
  if (!runId) {
    const v = await withDatabase((db) => verifyEpisode(db, positional[0]));
    report(v);
    return v.problems.length === 0 ? 0 : 1;
  }
  const verdict = await withDatabase((db) => verifyRun(db, runId, report));
  for (const p of verdict.problems) console.log(`FAIL  run ${runId}: ${p}`);
  const failed = verdict.episodes.filter((v) => v.problems.length > 0).length;
  console.log(`${verdict.episodes.length - failed}/${verdict.episodes.length} episodes verified${verdict.problems.length ? `; ${verdict.problems.length} run problem(s)` : ''}`);
  return failed === 0 && verdict.problems.length === 0 ? 0 : 1;
}

export async function episodesCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  try {
    switch (sub) {
      case 'list':
        return await list(rest);
      case 'show':
        return await show(rest);
      case 'verify':
        return await verify(rest);
      default:
        console.error(USAGE);
        return 2;
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`tandem episodes: ${err.message}\n${USAGE}`);
    return 2;
  }
}
