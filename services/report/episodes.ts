// Which episodes a report links to a transcript page, and the pages' file names.
import type { RunData } from './load.js';

type Episode = RunData['episodes'][number];

/** Up to this many finished episodes, every one gets a page; past it, the best and worst of each iteration. */
export const LINK_ALL_UP_TO = 24;

/** An episode's score for ranking: the mean over agents of its chosen candidates' mean reward. */
export function episodeScore(e: Episode): number | undefined {
  const rewards = Object.values(e.rewardByAgent ?? {});
  return rewards.length === 0 ? undefined : rewards.reduce((a, b) => a + b, 0) / rewards.length;
}

export function episodesToLink(episodes: Episode[]): Set<string> {
  const finished = episodes.filter((e) => episodeScore(e) !== undefined);
  if (finished.length <= LINK_ALL_UP_TO) return new Set(finished.map((e) => e.episodeId));
  const linked = new Set<string>();
  for (const iteration of new Set(finished.map((e) => e.iteration))) {
    const ranked = finished.filter((e) => e.iteration === iteration).sort((a, b) => episodeScore(b)! - episodeScore(a)!);
    linked.add(ranked[0].episodeId);
    linked.add(ranked[ranked.length - 1].episodeId);
  }
  return linked;
}

/** `<run>/it3/ep1` -> `episodes/it3-ep1.html`: the part after the run id, made file-safe. */
export function episodePagePath(runId: string, episodeId: string): string {
  const local = episodeId.startsWith(`${runId}/`) ? episodeId.slice(runId.length + 1) : episodeId;
  return `episodes/${local.replace(/[^A-Za-z0-9_.-]+/g, '-')}.html`;
}
