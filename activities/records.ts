// The records Tandem writes to Kafka's data-plane topics (JSON values).

/** tandem.rollouts: what the policy generated for one candidate, token by token. */
export interface RolloutRecord {
  sampleId: string;
  runId: string;
  iteration: number;
  policy: string;
  policyVersion: number;
  promptIds: number[];
  responseIds: number[];
  /** Log-prob of each response token under the policy that sampled it. */
  logprobs: number[];
  finishReason: string;
}

/** tandem.trajectories: one scored candidate, published by its episode. */
export interface TrajectoryRecord {
  sampleId: string;
  runId: string;
  iteration: number;
  episodeId: string;
  problemSeed: number;
  turn: number;
  agent: string;
  policy: string;
  policyVersion: number;
  groupKey: string;
  /** The group member this sample belongs to: itself (at_grpo) or its episode (grpo). */
  member: string;
  /** What its advantage is computed from: the turn reward (at_grpo) or the agent's trajectory return (grpo). */
  score: number;
  candidate: number;
  local: number;
  global: number;
  reward: number;
  chosen: boolean;
}
