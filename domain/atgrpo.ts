// AT-GRPO's numeric core: which candidate an episode continues from, and group-relative
// advantages. Pure functions, shared by workflows (selection) and the update activity.

/**
 * Group key of AT-GRPO: the K candidates sampled at one (problem, turn, agent) from the same
 * state form one group. The problem is the env instance (its seed); the iteration is implied,
 * since an update only ever reads one iteration's samples.
 */
export function groupKey(problemSeed: number, turn: number, agent: string): string {
  return `p${problemSeed}/t${turn}/${agent}`;
}

/** Greedy continuation: the argmax of the rewards, the first on ties; candidate 0 when not greedy. */
export function chooseCandidate(rewards: number[], greedy: boolean): number {
  if (!greedy) return 0;
  let best = 0;
  for (let i = 1; i < rewards.length; i++) if (rewards[i] > rewards[best]) best = i;
  return best;
}

export interface ScoredSample {
  sampleId: string;
  groupKey: string;
  reward: number;
}

/**
 * GRPO advantage within each group: A_i = (r_i - mean(r)) / (std(r) + eps), or r_i - mean(r)
 * without the std normalisation. A group whose rewards are all equal carries no signal: every
 * advantage in it is 0. The std is the population std (divide by K), as in the reference.
 */
export function groupAdvantages(samples: ScoredSample[], normByStd: boolean, eps = 1e-6): Map<string, number> {
  const groups = new Map<string, ScoredSample[]>();
  for (const s of samples) {
    const g = groups.get(s.groupKey);
    if (g) g.push(s);
    else groups.set(s.groupKey, [s]);
  }
  const advantages = new Map<string, number>();
  for (const members of groups.values()) {
    const mean = members.reduce((a, s) => a + s.reward, 0) / members.length;
    const std = Math.sqrt(members.reduce((a, s) => a + (s.reward - mean) ** 2, 0) / members.length);
    for (const s of members) {
      const centred = s.reward - mean;
      advantages.set(s.sampleId, std < eps ? 0 : normByStd ? centred / (std + eps) : centred);
    }
  }
  return advantages;
}
