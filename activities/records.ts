// The records Tandem writes to Kafka's data-plane topics (JSON values), and the packing of a
// rollout's token arrays: the one place that writes and reads that shape, older records included.

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

/**
 * A rollout record as it travels: its token arrays packed as base64 of little-endian int32 (ids)
 * and float32 (log-probs, which the engine computes in float32, so nothing is lost), about half
 * their size as JSON numbers (test/unit/records.unit.test.ts). Typed arrays are in the machine's
 * byte order, little-endian on every platform torch and Node run on here (x86-64, arm64).
 */
interface PackedRollout extends Omit<RolloutRecord, 'promptIds' | 'responseIds' | 'logprobs'> {
  packing: 'le-i32-f32-base64';
  promptIds: string;
  responseIds: string;
  logprobs: string;
}

const pack = (xs: Int32Array | Float32Array) => Buffer.from(xs.buffer, xs.byteOffset, xs.byteLength).toString('base64');

function unpack<T extends Int32Array | Float32Array>(text: string, Kind: { new (b: ArrayBuffer): T }): number[] {
  const bytes = Buffer.from(text, 'base64');
  return Array.from(new Kind(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
}

export function encodeRollout(r: RolloutRecord): string {
  const packed: PackedRollout = {
    ...r,
    packing: 'le-i32-f32-base64',
    promptIds: pack(Int32Array.from(r.promptIds)),
    responseIds: pack(Int32Array.from(r.responseIds)),
    logprobs: pack(Float32Array.from(r.logprobs)),
  };
  return JSON.stringify(packed);
}

/** A rollout record from its parsed Kafka value (the upcaster: records written before packing carry plain arrays). */
export function rolloutOf(parsed: unknown): RolloutRecord {
  const r = parsed as RolloutRecord | PackedRollout;
  if (!('packing' in r)) return r;
  const { packing: _, ...rest } = r;
  return { ...rest, promptIds: unpack(r.promptIds, Int32Array), responseIds: unpack(r.responseIds, Int32Array), logprobs: unpack(r.logprobs, Float32Array) };
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
