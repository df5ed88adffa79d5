// What `tandem status` shows of a run's progress query: an ETA, a progress bar and the fields,
// as plain text. Pure functions of the progress and the current time.
import type { IterationSummary, RunProgress } from '../../workflows/messages.js';
import type { RolloutSync } from '../../domain/events.js';

const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : String(x));

export function formatRewards(rewards: Record<string, number>): string {
  return Object.entries(rewards)
    .map(([agent, r]) => `${agent}=${fmt(r)}`)
    .join(' ');
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

const ended = (p: RunProgress) => p.status === 'completed' || p.status === 'stopped';

/**
 * No iteration is in progress: the run is evaluating its policies after `p.iteration` iterations
 * (the progress counts them done by then, so after the last one it equals the total), or has done
 * them all and is about to end. The view then names the last iteration done, never one past the total.
 */
const betweenIterations = (p: RunProgress) => ended(p) || p.status === 'evaluating' || p.iteration >= p.totalIterations;

/** The iteration shown, 1-based: the one in progress, else the last one done (`5/5 done`; full: `5 of 5 done`). */
export function iterationText(p: RunProgress, full: boolean): string {
  if (!betweenIterations(p)) return `${p.iteration + 1}/${p.totalIterations}`;
  const done = Math.min(p.iteration, p.totalIterations);
  return full ? `${done} of ${p.totalIterations} done` : `${done}/${p.totalIterations} done`;
}

/**
 * Time left, from the measured durations of the recent iterations (workflow time, paused time
 * excluded): the rest of the current iteration at their mean, plus the mean for each iteration
 * after it (between iterations: the mean for each one left). Null until one iteration has
 * finished; 0 once the run has ended. While paused the estimate stands still.
 */
export function etaMs(p: RunProgress, now: number): number | null {
  if (ended(p)) return 0;
  if (p.recent.length === 0) return null;
  const perIteration = p.recent.reduce((t, r) => t + r.durationMs, 0) / p.recent.length;
  if (betweenIterations(p)) return Math.max(0, p.totalIterations - p.iteration) * perIteration;
  const active = now - p.iterationStartedAt - p.iterationPausedMs - (p.pausedSince === null ? 0 : now - p.pausedSince);
  const left = p.totalIterations - p.iteration;
  return Math.max(0, perIteration - active) + Math.max(0, left - 1) * perIteration;
}

/** Share of the run done: each iteration counts its episodes and its update as one step each. */
export function fractionDone(p: RunProgress): number {
  if (p.totalIterations === 0) return 1;
  if (ended(p)) return p.iteration / p.totalIterations;
  return Math.min(1, (p.iteration + p.episodesDone / (p.episodesPerIteration + 1)) / p.totalIterations);
}

export function progressBar(fraction: number, width = 24): string {
  const filled = Math.round(Math.max(0, Math.min(1, fraction)) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%`;
}

/** One line: the bar, iteration, episodes (while one runs), status and ETA. */
export function progressLine(p: RunProgress, now: number): string {
  const eta = etaMs(p, now);
  const etaText = ended(p) ? '' : `  ETA ${eta === null ? '?' : formatDuration(eta)}${p.status === 'paused' ? ' (paused)' : ''}`;
  const episodes = betweenIterations(p) ? '' : `  episodes ${p.episodesDone}/${p.episodesPerIteration}`;
  return `${progressBar(fractionDone(p))}  iteration ${iterationText(p, false)}${episodes}  ${p.status}${etaText}`;
}

/**
 * Each policy's entropy a token over the recent updates, first to last: a steady rise is the policy
 * spreading (its sampled answers wander while its greedy ones may stay right).
 */
function entropyLine(recent: IterationSummary[]): string | null {
  const policies = [...new Set(recent.flatMap((r) => Object.keys(r.updates)))].sort();
  const spans = policies.flatMap((k) => {
    const seen = recent.filter((r) => r.updates[k]?.entropy !== undefined);
    if (seen.length === 0) return [];
    const [first, last] = [seen[0], seen[seen.length - 1]];
    return [seen.length === 1 ? `${k} ${fmt(last.updates[k].entropy!)} (iteration ${last.iteration + 1})` : `${k} ${fmt(first.updates[k].entropy!)} -> ${fmt(last.updates[k].entropy!)} (iterations ${first.iteration + 1}-${last.iteration + 1})`];
  });
  return spans.length === 0 ? null : `  entropy          ${spans.join(', ')}, nats a token in the updates`;
}

/** The full view: the progress line, then one field a line. */
export function progressLines(p: RunProgress, now: number): string[] {
  const last = p.recent[p.recent.length - 1];
  const lines = [
    `run ${p.runId}: ${progressLine(p, now)}`,
    `  status           ${p.status}`,
    `  iteration        ${iterationText(p, true)}`,
    ...(betweenIterations(p) ? [] : [`  episodes done    ${p.episodesDone}/${p.episodesPerIteration} this iteration, ${p.episodesInFlight} in flight`]),
    `  policy versions  ${Object.entries(p.versions).map(([k, v]) => `${k}=v${v}${p.training?.[k] === undefined ? '' : ` (training v${p.training[k]}->v${p.training[k] + 1})`}`).join(' ') || '-'}`,
    ...(p.playingIteration === undefined ? [] : [`  playing          iteration ${p.playingIteration + 1} (asynchronous: its episodes generate while earlier iterations' updates run)`]),
    `  updates applied  ${p.updatesApplied}${p.tokensTrained === undefined ? '' : `, ${p.tokensTrained} response tokens trained on`}`,
    `  last checkpoint  ${p.lastCheckpoint ?? '-'}`,
  ];
  if (last) {
    const stale = Object.entries(last.updates).filter(([, u]) => u.staleness);
    const dtypes = Object.entries(last.updates).filter(([, u]) => u.dtype);
    if (dtypes.length > 0) lines.push(`  dtype            ${dtypes.map(([k, u]) => `${k} ${u.dtype}${u.dtypeNote ? ` (${u.dtypeNote})` : ''}`).join(', ')} (iteration ${last.iteration + 1}'s update)`);
    const synced = Object.entries(last.updates).filter(([, u]) => u.rolloutSync);
    const how = (r: RolloutSync) => (r.by === 'broadcast' ? 'by broadcast ' : r.fallback ? `by file (the broadcast failed: ${r.fallback}) ` : '');
    if (synced.length > 0) lines.push(`  rollout engines  ${synced.map(([k, u]) => `${k} on ${u.rolloutSync!.engines}, synced ${how(u.rolloutSync!)}in ${fmt(u.rolloutSync!.seconds)} s`).join(', ')} (iteration ${last.iteration + 1}'s update)`);
    if (stale.length > 0) lines.push(`  sample staleness ${stale.map(([k, u]) => `${k} mean ${fmt(u.staleness!.mean)} max ${u.staleness!.max}`).join(', ')} versions (iteration ${last.iteration + 1}'s update)`);
    const zero = Object.entries(last.updates).filter(([, u]) => u.zeroAdvantage !== undefined);
    if (zero.length > 0) lines.push(`  no signal        ${zero.map(([k, u]) => `${k} ${u.zeroAdvantage} of ${u.samples}`).join(', ')} samples of advantage 0, their group's scores all equal (iteration ${last.iteration + 1}'s update)`);
    const entropy = entropyLine(p.recent);
    if (entropy) lines.push(entropy);
    lines.push(`  mean reward      ${formatRewards(last.rewardByAgent)} (iteration ${last.iteration + 1})`);
    lines.push(`  success rate     ${fmt(last.successRate)} (iteration ${last.iteration + 1}; shared by the agents of an episode)`);
    const cut = p.recent.reduce((n, r) => n + (r.truncatedEpisodes ?? 0), 0);
    if (cut > 0) {
      const span = p.recent.length === 1 ? `iteration ${last.iteration + 1}` : `iterations ${p.recent[0].iteration + 1}-${last.iteration + 1}`;
      lines.push(`  prompts cut      ${cut} of ${p.recent.reduce((n, r) => n + r.episodes, 0)} episodes (${span}) had a prompt over training.max_prompt_length, cut by training.truncation`);
    }
  }
  const eta = etaMs(p, now);
  if (!ended(p)) lines.push(`  ETA              ${eta === null ? 'after the first iteration' : formatDuration(eta)}${p.status === 'paused' ? ' (paused)' : ''}`);
  return lines;
}

/**
 * What `status --watch` writes for each progress it gets: on a terminal, the full view drawn
 * over the previous one (cursor up, clear to the end); otherwise the one-line view, only when
 * something other than the ETA changed.
 */
export function watchRenderer(tty: boolean): (p: RunProgress, now: number) => string {
  let drawn = 0;
  let lastKey = '';
  return (p, now) => {
    if (tty) {
      const lines = progressLines(p, now);
      const text = `${drawn > 0 ? `\x1b[${drawn}F\x1b[J` : ''}${lines.join('\n')}\n`;
      drawn = lines.length;
      return text;
    }
    const key = JSON.stringify([p.status, p.iteration, p.episodesDone, p.updatesApplied]);
    if (key === lastKey) return '';
    lastKey = key;
    return `${progressLine(p, now)}\n`;
  };
}
