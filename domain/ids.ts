// Every id and name Tandem builds from other ids, and the parsing back, in one place:
//   run            <run>                        (tandem train: run-<UTC yyyymmddhhmmss>-<6 hex>)
//   episode        <run>/it<i>/ep<j>            a training episode (child workflow id = episode id)
//   evaluation     <run>/eval/it<n>             after n iterations; on demand: eval-<...>
//   eval episode   <evaluation>/ep<j>
//   sample         <episode>/t<turn>/<agent>/c<i>/a<attempt>   (scripted: .../c<i>/scripted)
//   streams        run:<run>  episode:<episode>  eval:<evaluation>  update:<run>/<policy>/v<from>
//   Kafka          record key <run>/<policy>; the update's consumer group per iteration
//                  tandem-update.<run>.<policy>.it<i>, and per replica <that>.replica-<rank>
// Pure: workflows, activities and services import it.

/** A fresh run or on-demand evaluation id: `<prefix>-<UTC yyyymmddhhmmss>-<6 hex>` (the CLI's). */
export const freshId = (prefix: 'run' | 'eval', at: Date, hex6: string) => `${prefix}-${at.toISOString().slice(0, 19).replace(/[-:T]/g, '')}-${hex6}`;

export const episodeIdOf = (runId: string, iteration: number, index: number) => `${runId}/it${iteration}/ep${index}`;
/** The prefix every episode id of one iteration starts with. */
export const iterationEpisodesPrefix = (runId: string, iteration: number) => `${runId}/it${iteration}/`;
export const evaluationIdOf = (runId: string, iterationsDone: number) => `${runId}/eval/it${iterationsDone}`;
export const evaluationEpisodeIdOf = (evalId: string, index: number) => `${evalId}/ep${index}`;

/** A sample id names its attempt: a retried agent turn samples afresh under new ids. */
export const sampleIdOf = (episode: string, turn: number, agent: string, candidate: number, attempt: number) => `${episode}/t${turn}/${agent}/c${candidate}/a${attempt}`;
/** A scripted player's answer: the same on every attempt (a script does not sample). */
export const scriptedSampleIdOf = (episode: string, turn: number, agent: string, candidate: number) => `${episode}/t${turn}/${agent}/c${candidate}/scripted`;

export const runStream = (runId: string) => `run:${runId}`;
const EPISODE = 'episode:';
export const episodeStream = (episode: string) => `${EPISODE}${episode}`;
/** The episode id of an episode stream's name. */
export const episodeOfStream = (stream: string) => (stream.startsWith(EPISODE) ? stream.slice(EPISODE.length) : null);
export const evaluationStream = (evalId: string) => `eval:${evalId}`;
/** One stream per update (a policy's step from one version): written once, by the update activity. */
export const updateStream = (runId: string, policy: string, fromVersion: number) => `update:${runId}/${policy}/v${fromVersion}`;

/** Kafka record key: records of one run and policy share it, so they stay in order on one partition. */
export const policyKey = (runId: string, policy: string) => `${runId}/${policy}`;
/** The consumer group whose offsets mark where iteration `iteration`'s update of a policy starts reading. */
export const updateConsumerGroup = (runId: string, policy: string, iteration: number) => `tandem-update.${runId}.${policy}.it${iteration}`;
/** A replica's reader group for that range: each replica reads all of it, as a group of its own. */
export const updateReaderGroup = (runId: string, policy: string, iteration: number, rank: number) => `${updateConsumerGroup(runId, policy, iteration)}.replica-${rank}`;
/**
 * The run ids an update group's name can belong to: `tandem-update.<run>.<policy>.it<i>` (and
 * `.replica-<r>`), split at each dot a run id and a policy name could meet at, since both may
 * contain dots. None for a group that is not an update group.
 */
export function updateGroupRunIds(groupId: string): string[] {
  const m = /^tandem-update\.(.+)\.it\d+(?:\.replica-\d+)?$/.exec(groupId);
  if (!m) return [];
  const runAndPolicy = m[1];
  const ids: string[] = [];
  for (let i = runAndPolicy.indexOf('.'); i > 0 && i < runAndPolicy.length - 1; i = runAndPolicy.indexOf('.', i + 1)) ids.push(runAndPolicy.slice(0, i));
  return ids;
}
/** Every group iteration `iteration`'s update of a policy uses: its own, and a reader per replica when it has replicas. */
export function updateGroupsOf(runId: string, policy: string, iteration: number, replicas = 1): string[] {
  const readers = replicas > 1 ? Array.from({ length: replicas }, (_, rank) => updateReaderGroup(runId, policy, iteration, rank)) : [];
  return [updateConsumerGroup(runId, policy, iteration), ...readers];
}

/** A stable 31-bit sampling seed per (episode, turn, agent) (FNV-1a of the three). */
export function samplingSeed(episode: string, turn: number, agent: string): number {
  const s = `${episode}/${turn}/${agent}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0) & 0x7fffffff;
}
