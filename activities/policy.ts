// A policy's life in an engine (policy worker): how it is loaded (from its newest complete
// checkpoint, else its base model; on first use), as its trainer or on one of its rollout engines;
// the `policyVersion`, `syncPolicy`, `publishPolicy` and `releasePolicy` activities; and where its checkpoints live.
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { EngineError, type EngineClient, type EngineOptim, type LoadSpec } from '../infra/engine/client.js';
import { projectPath } from '../infra/settings.js';
import { baseKey, engineKey, type PolicyRef } from '../policy/ref.js';

/** AdamW's betas: the one setting of the optimizer the run config does not have (torch's default). */
const ADAM_BETAS: EngineOptim['betas'] = [0.9, 0.999];

/** What a policy worker's activities share: its engine, its device and its data folder. */
export interface EngineDeps {
  engine: EngineClient;
  device: string;
  dataDir: string;
  /** The worker's task queue (--task-queue); absent in process (tests, benches): the policies' trainer. */
  taskQueue?: string;
}

/** Which of the policy's engines this worker's is: one of its rollout engines when it serves their queue. */
export function roleOf(deps: EngineDeps, spec: PolicyRef['spec']): 'trainer' | 'rollout' {
  return spec.rollout !== undefined && deps.taskQueue === spec.rollout.taskQueue ? 'rollout' : 'trainer';
}

/** `<data_dir>/runs/<run>`: a run's own folder, under its data_dir, else the worker's data folder. */
export function runFolder(runId: string, dataDir: string | undefined, workerDataDir: string): string {
  return join(dataDir ? projectPath(dataDir) : workerDataDir, 'runs', runId);
}

/** `<data_dir>/runs/<run>/checkpoints/<policy>`, or the checkpoint folder an evaluation was given. */
export function checkpointRoot(p: PolicyRef, workerDataDir: string): string {
  if (p.checkpointDir) return projectPath(p.checkpointDir);
  return join(runFolder(p.runId, p.dataDir, workerDataDir), 'checkpoints', p.spec.name);
}

/**
 * How the engine loads the policy (the `load` op's fields): from its newest complete checkpoint,
 * else its model. A generate request carries it, so that the engine loads a policy on first use
 * without a round trip of its own. Refuses a policy placed on another device than this worker's.
 */
export function loadSpec(deps: EngineDeps, policy: PolicyRef): LoadSpec {
  const { spec } = policy;
  const role = roleOf(deps, spec);
  const [device, queue] = role === 'rollout' ? [spec.rollout!.device, spec.rollout!.taskQueue] : [spec.device, spec.taskQueue];
  if (device !== deps.device && !(device === 'cuda' && deps.device.startsWith('cuda:'))) {
    throw ApplicationFailure.nonRetryable(
      `policy ${spec.name} is placed on ${device}, but the worker on task queue ${queue} runs on ${deps.device}`,
      'PlacementMismatch',
    );
  }
  return {
    kind: spec.kind as LoadSpec['kind'],
    role,
    model_path: projectPath(spec.modelPath),
    // (absent in specs recorded before placement.<base>.dtype: what the engine chose then, by device)
    dtype: spec.dtype ?? (spec.device === 'cpu' ? 'float32' : 'bfloat16'),
    base: baseKey(policy),
    ...(spec.lora ? { lora: spec.lora } : {}),
    // (warmup_start: absent in the settings of runs started before it existed, whose warm-up started at a fraction)
    optim: { ...policy.optim, warmup_start: policy.optim.warmup_start ?? 'fraction', betas: ADAM_BETAS },
    checkpoint_root: checkpointRoot(policy, deps.dataDir),
  };
}

/** An off-policy request (the engine's VersionMismatch) fails for good: a retry cannot fix it. */
export function offPolicy(err: unknown): unknown {
  return err instanceof EngineError && err.type === 'VersionMismatch'
    ? ApplicationFailure.nonRetryable(`${err.message} (off-policy request)`, 'VersionMismatch')
    : err;
}

/** The engine's answer to a sync: the version it holds, whether this sync installed it, the copy its rows in flight kept. */
export interface SyncResult {
  policy: string;
  version: number;
  installed: boolean;
  copy: 'adapter' | 'model' | null;
  seconds?: number;
}

/** The engine's answer to a publish: the rollout engines in the round, whether any needed the weights, their size. */
export interface PublishResult {
  policy: string;
  version: number;
  engines: number;
  sent: boolean;
  bytes: number;
  seconds: number;
  /** The round's phases: joining and agreeing, the broadcast, the checksums. */
  join_s: number;
  send_s: number;
  check_s: number;
}

/** One round of a broadcast of weights (workflows/updates.ts): its size and group, and a rollout engine's rank in it. */
export interface Round {
  world: number;
  group: string;
}

/** The engine's `broadcast` field for `rank` in `round`: where the trainer's engine serves it, and its timeouts. */
function broadcastField(policy: PolicyRef, round: Round, rank: number) {
  const b = policy.spec.rollout?.broadcast;
  if (!b) throw ApplicationFailure.nonRetryable(`policy ${policy.spec.name} gets its weights by file (placement.<base>.rollout.weights)`, 'PlacementMismatch');
  return { rank, world_size: round.world, store: b.rendezvous, group: round.group, timeout_s: b.timeoutS, join_timeout_s: b.joinTimeoutS };
}

/** Loads the policy into the engine (idempotent). -> its version. */
export async function ensurePolicy(deps: EngineDeps, policy: PolicyRef): Promise<number> {
  const loaded = await deps.engine.request<{ version: number }>('load', { policy: engineKey(policy), ...loadSpec(deps, policy) });
  return loaded.version;
}

export function createPolicyActivities(deps: EngineDeps) {
  return {
    /** The policy's current version, loading it (from its latest checkpoint) if needed. */
    async policyVersion(policy: PolicyRef): Promise<number> {
      return ensurePolicy(deps, policy);
    },

    /**
     * On a rollout engine: installs version `version` (loading the policy first if need be), from the
     * trainer's checkpoint, or with `round` as rank `rank` of a broadcast from the trainer's engine
     * (publishPolicy); idempotent by version; its rows in flight finish on their own version.
     */
    async syncPolicy(input: { policy: PolicyRef; version: number; round?: Round & { rank: number } }): Promise<SyncResult> {
      if (roleOf(deps, input.policy.spec) !== 'rollout') {
        throw ApplicationFailure.nonRetryable(`policy ${input.policy.spec.name}: syncPolicy reached ${deps.taskQueue ?? 'an in-process worker'}, which is not one of its rollout engines`, 'PlacementMismatch');
      }
      const broadcast = input.round ? { broadcast: broadcastField(input.policy, input.round, input.round.rank) } : {};
      return deps.engine.request<SyncResult>('sync', { policy: engineKey(input.policy), version: input.version, ...loadSpec(deps, input.policy), ...broadcast });
    },

    /** On the trainer's engine: sends version `version`, the one it holds, to the rollout engines of `round` (rank 0). */
    async publishPolicy(input: { policy: PolicyRef; version: number; round: Round }): Promise<PublishResult> {
      if (roleOf(deps, input.policy.spec) !== 'trainer') {
        throw ApplicationFailure.nonRetryable(`policy ${input.policy.spec.name}: publishPolicy reached ${deps.taskQueue}, one of its rollout engines`, 'PlacementMismatch');
      }
      await ensurePolicy(deps, input.policy); // a restarted engine loads the newest checkpoint first
      return deps.engine.request<PublishResult>('publish', { policy: engineKey(input.policy), version: input.version, broadcast: broadcastField(input.policy, input.round, 0) });
    },

    /** Frees the policy's weights in the engine (its checkpoints stay); a later request loads it again. */
    async releasePolicy(policy: PolicyRef): Promise<void> {
      await deps.engine.request('unload', { policy: engineKey(policy) });
    },
  };
}
