// The algorithms' numeric core: which episodes an iteration runs, which candidate an episode
// continues from, and group-relative advantages. Pure functions, shared by workflows (planning,
// selection) and the update activity (advantages).
//
//   at_grpo  AT-GRPO: at every (turn, agent) K candidates from the same state form one group,
//            keyed (problem, turn, agent); each candidate is scored by its own turn reward.
//   grpo     plain GRPO, the paper's baseline: K independent trajectories per problem (one
//            sample per turn); the K trajectories form one group per (problem, agent), and every
//            turn of a trajectory gets that trajectory's advantage.

export type Algorithm = 'at_grpo' | 'grpo';

/**
 * Group key of AT-GRPO: the K candidates sampled at one (problem, turn, agent) from the same
 * state form one group. The problem is the env instance (its seed); the iteration is implied,
 * since an update only ever reads one iteration's samples.
 */
export function groupKey(problemSeed: number, turn: number, agent: string): string {
  return `p${problemSeed}/t${turn}/${agent}`;
}

/** Group key of plain GRPO: the K trajectories of one problem, per agent. */
export function trajectoryGroupKey(problemSeed: number, agent: string): string {
  return `p${problemSeed}/${agent}`;
}

/** The group a candidate of (problem, turn, agent) belongs to under `algorithm`. */
export function groupKeyOf(algorithm: Algorithm, problemSeed: number, turn: number, agent: string): string {
  return algorithm === 'at_grpo' ? groupKey(problemSeed, turn, agent) : trajectoryGroupKey(problemSeed, agent);
}

export interface PlannedEpisode {
  /** Index within the iteration: the episode's id is `<run>/it<i>/ep<index>`. */
  index: number;
  problemSeed: number;
  /** Candidates sampled at every (turn, agent). */
  candidates: number;
}

/**
 * The episodes of one training iteration. at_grpo: one episode per problem, K candidates per
 * turn. grpo: K episodes per problem (consecutive indices), one candidate per turn. Problem
 * seeds count up from `seed` across iterations, so no problem is seen twice.
 */
export function planIteration(algorithm: Algorithm, seed: number, iteration: number, problems: number, k: number): PlannedEpisode[] {
  const first = seed + iteration * problems;
  if (algorithm === 'at_grpo') return Array.from({ length: problems }, (_, j) => ({ index: j, problemSeed: first + j, candidates: k }));
  return Array.from({ length: problems * k }, (_, j) => ({ index: j, problemSeed: first + Math.floor(j / k), candidates: 1 }));
}

/** Greedy continuation: the argmax of the rewards, the first on ties; candidate 0 when not greedy. */
export function chooseCandidate(rewards: number[], greedy: boolean): number {
  if (!greedy) return 0;
  let best = 0;
  for (let i = 1; i < rewards.length; i++) if (rewards[i] > rewards[best]) best = i;
  return best;
}

/** What an advantage is computed from, per sample. */
export interface AdvantageInput {
  sampleId: string;
  groupKey: string;
  /**
   * The group member the sample belongs to: the sample itself under at_grpo, its trajectory
   * (episode) under grpo. Group statistics count each member once, whatever its sample count.
   */
  member: string;
  /** The member's score: the turn reward (at_grpo) or the agent's trajectory return (grpo). */
  score: number;
}

/** One scored group of an episode, as the update and the audit see it. */
export interface ScoredGroup {
  episodeId: string;
  groupKey: string;
  agent: string;
  /** The candidate the episode continued from. */
  chosen: number;
  samples: { sampleId: string; reward: number }[];
}

/**
 * The one rule for each sample's group member and score, over the groups of one or more
 * episodes (results in the groups' order, then the samples'). at_grpo: the member is the sample,
 * its score its own turn reward. grpo: the member is the episode (the trajectory), and every turn
 * of an agent scores the agent's trajectory return: the sum of its chosen candidates' rewards.
 */
export function advantageInputs(algorithm: Algorithm, groups: ScoredGroup[]): AdvantageInput[] {
  if (algorithm === 'at_grpo') {
    return groups.flatMap((g) => g.samples.map((s) => ({ sampleId: s.sampleId, groupKey: g.groupKey, member: s.sampleId, score: s.reward })));
  }
  const trajectory = (g: ScoredGroup) => `${g.episodeId} ${g.agent}`;
  const returns = new Map<string, number>();
  for (const g of groups) returns.set(trajectory(g), (returns.get(trajectory(g)) ?? 0) + g.samples[g.chosen].reward);
  return groups.flatMap((g) => g.samples.map((s) => ({ sampleId: s.sampleId, groupKey: g.groupKey, member: g.episodeId, score: returns.get(trajectory(g))! })));
}

/** What becomes of a group whose scores are all equal (zero variance: no signal). */
export type ZeroVarianceGroups = 'keep' | 'drop';

/**
 * The reference's group filter (`filter_method`, `filter_ratio` of its ppo_trainer_config;
 * `_assign_consistent_uids` in pettingllms/trainer/multi_agents_ppo_trainer.py): before the
 * advantages, the floor(ratio x groups) groups ranked lowest are left out of the update.
 *   mean  ranked by the mean of their members' scores: the groups that did worst are dropped;
 *   std   ranked by their range-normalised variance, var / (max - min)^2 (0 when all are equal):
 *         the groups that separate their members least are dropped.
 * A group of one member ranks as 0 under both, as in the reference. Ties fall to the group key's
 * order (the reference's fall to the order its batch happens to be in).
 */
export interface GroupFilter {
  method: 'none' | 'mean' | 'std';
  ratio: number;
}

export interface AdvantageOptions {
  normByStd: boolean;
  zeroVariance: ZeroVarianceGroups;
  filter?: GroupFilter;
}

/** The advantage settings of a run's `update` section, as the update and the audit both read them. */
export function advantageOptions(update: { norm_adv_by_std: boolean; zero_variance_groups: ZeroVarianceGroups; group_filter: GroupFilter }): AdvantageOptions {
  return { normByStd: update.norm_adv_by_std, zeroVariance: update.zero_variance_groups, filter: update.group_filter };
}

/** Each member's score once (a grpo trajectory has one score however many turns it has). */
const memberScores = (members: AdvantageInput[]) => [...new Map(members.map((s) => [s.member, s.score])).values()];

/** The rank of a group under the filter: lower is dropped first. */
function filterRank(method: 'mean' | 'std', scores: number[]): number {
  if (scores.length < 2) return 0;
  const mean = scores.reduce((a, x) => a + x, 0) / scores.length;
  if (method === 'mean') return mean;
  const range = Math.max(...scores) - Math.min(...scores);
  return range === 0 ? 0 : scores.reduce((a, x) => a + (x - mean) ** 2, 0) / scores.length / range ** 2;
}

/** The keys of the groups the filter leaves out. */
export function filteredGroups(groups: Map<string, AdvantageInput[]>, filter: GroupFilter | undefined): Set<string> {
  if (!filter || filter.method === 'none' || filter.ratio <= 0) return new Set();
  const method = filter.method;
  const ranked = [...groups].map(([key, members]) => ({ key, rank: filterRank(method, memberScores(members)) }));
  ranked.sort((a, b) => a.rank - b.rank || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return new Set(ranked.slice(0, Math.floor(groups.size * filter.ratio)).map((g) => g.key));
}

/**
 * GRPO advantage within each group: A = (s - mean(s)) / (std(s) + eps), or s - mean(s)
 * without the std normalisation; std is the population std (divide by the member count), where
 * the reference's verl uses torch.std (n - 1): with K members every advantage is
 * sqrt((K - 1) / K) of the reference's (0.87 at K = 4), a constant factor. Groups the filter
 * leaves out are not in the returned map (the update never sees them). A group whose scores are
 * all equal carries no signal: with 'keep' its samples stay in the batch with advantage 0 (they
 * still count in token-mean denominators); with 'drop' they are left out too.
 */
export function groupAdvantages(samples: AdvantageInput[], opts: AdvantageOptions, eps = 1e-6): Map<string, number> {
  const groups = new Map<string, AdvantageInput[]>();
  for (const s of samples) {
    const g = groups.get(s.groupKey);
    if (g) g.push(s);
    else groups.set(s.groupKey, [s]);
  }
  const filtered = filteredGroups(groups, opts.filter);
  const advantages = new Map<string, number>();
  for (const [key, members] of groups) {
    if (filtered.has(key)) continue;
    const scores = memberScores(members);
    const mean = scores.reduce((a, x) => a + x, 0) / scores.length;
    const std = Math.sqrt(scores.reduce((a, x) => a + (x - mean) ** 2, 0) / scores.length);
    if (std < eps && opts.zeroVariance === 'drop') continue;
    for (const s of members) {
      const centred = s.score - mean;
      advantages.set(s.sampleId, std < eps ? 0 : opts.normByStd ? centred / (std + eps) : centred);
    }
  }
  return advantages;
}
