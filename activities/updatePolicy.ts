// updatePolicy (policy worker): one AT-GRPO update of one policy from exactly one iteration's
// samples, read from Kafka (never from workflow history).
//   1. read the run's trajectories (scores) and rollouts (tokens) published since the last update:
//      from the offsets of this iteration's consumer group, which the previous update set
//   2. keep this (run, iteration, policy), each sample id once; join tokens to scores by sample id;
//      with rollout.max_staleness N, samples more than N versions old are set apart (stale)
//   3. group-relative advantages per (problem, turn, agent) group
//   4. the engine steps the policy (its samples handed over as a file of flat arrays), saves a
//      checkpoint (idempotent by policy version), then removes the versions the run's retention
//      (checkpoints.keep_last, keep_every) lets go
//   5. publish which samples it consumed (SamplesConsumed, with their advantages)
//   6. only then set the next iteration's group to where this read ended (or, where the next
//      iteration's records had begun arriving, asynchronous training, to the first of them)
//   7. delete the previous iteration's groups (used by nothing now: its update had completed
//      before this one was scheduled) and the records every consumer group has read past
//      (infra/kafka/retention.ts), so that the topics hold about two iterations per live run
// With replicas (placement.<base>.replicas > 1) every replica runs this activity for the same step,
// on its own update queue: each reads the whole iteration (as a reader group of its own), trains on
// its share of the groups, and the engines take the step together (tandem_engine/replicas.py);
// only rank 0 does steps 5 and 6.
// This iteration's group never moves, so a retry (the worker died after step 6, or Temporal lost
// the completion) reads the same samples again, the engine replays its recorded result, and the
// event id of SamplesConsumed is the same: each iteration's samples go into exactly one update.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { activityInfo, ApplicationFailure, heartbeat, log } from '@temporalio/activity';
import type { Kafka } from 'kafkajs';
import type { RunConfig } from '../configs/schema.js';
import { advantageOptions, groupAdvantages } from '../domain/atgrpo.js';
import { envelopes } from '../domain/events.js';
import { policyKey, updateConsumerGroup, updateGroupsOf, updateReaderGroup, updateStream } from '../domain/ids.js';
import { readBatch } from '../infra/kafka/readBatch.js';
import { deleteGroups, trimTopics } from '../infra/kafka/retention.js';
import { PROJECTOR_GROUP, TOPICS, UPDATE_TOPICS } from '../infra/settings.js';
import { EngineError, type UpdateRequest, type UpdateResult } from '../infra/engine/client.js';
import { writeSamplesFile } from '../infra/engine/samplesFile.js';
import type { LazyProducer } from '../infra/kafka/client.js';
import { checkpointRoot, ensurePolicy, runFolder, type EngineDeps } from './policy.js';
import { engineKey, type PolicyRef } from '../policy/ref.js';
import { replicaShare, selectIterationSamples } from './iterationSamples.js';

export interface UpdateInput {
  policy: PolicyRef;
  iteration: number;
  fromVersion: number;
  /** How many scored samples the iteration's episodes published for this policy. */
  expectedSamples: number;
  update: RunConfig['update'];
  /** Which checkpoint versions stay on disk (absent in updates scheduled before retention existed: all). */
  checkpoints?: RunConfig['checkpoints'];
  /** One replica's part in a data-parallel step; `group` is new for every attempt of the step. */
  replica?: { rank: number; world: number; group: string };
  /** rollout.max_staleness (absent in updates scheduled before it existed: 0, strictly on-policy). */
  maxStaleness?: number;
}

export interface UpdateSummary {
  fromVersion: number;
  toVersion: number;
  samples: number;
  groups: number;
  replayed: boolean;
  checkpoint: string;
  /** The policy's versions on disk after this update, when a retention (checkpoints.keep_last) is set. */
  keptVersions?: number[];
  metrics: Record<string, number>;
  /** A step over replicas: their count and the checksum of the weights they all hold after it. */
  replicas?: { count: number; checksum: string };
  /** The weights' dtype, and why it is not the one asked (placement.<base>.dtype auto fell back); absent from older engines. */
  dtype?: string;
  dtypeNote?: string;
}

/**
 * An engine error as the update's failure: replicas whose weights differ after the same step fail
 * for good (retrying cannot make them agree); running out of device memory is retried (it may be
 * another process's) with what would make the step smaller named.
 */
export function updateFailure(err: unknown): unknown {
  if (!(err instanceof EngineError)) return err;
  if (err.type === 'ReplicaMismatch') return ApplicationFailure.nonRetryable(err.message, err.type);
  if (err.type === 'OutOfMemoryError')
    return ApplicationFailure.retryable(
      `${err.message} (the update's memory: set update.gradient_checkpointing: true for long samples, or lower update.micro_batch_tokens)`,
      err.type,
    );
  return err;
}

/** The mean and largest age (update's version - generating version) of the samples trained on. */
function staleness(fromVersion: number, trained: { policyVersion: number }[]): { staleness_mean: number | null; staleness_max: number | null } {
  if (trained.length === 0) return { staleness_mean: null, staleness_max: null };
  const ages = trained.map((s) => fromVersion - s.policyVersion);
  return { staleness_mean: ages.reduce((a, b) => a + b, 0) / ages.length, staleness_max: Math.max(...ages) };
}

/** Step 7 (`used`: the previous iteration's groups): best effort, since the update has done its work; what one trim leaves, the next takes. */
async function trimKafka(kafka: Kafka, used: string[]): Promise<void> {
  try {
    await deleteGroups(kafka, used);
    const trimmed = await trimTopics(kafka, Object.values(TOPICS), { [TOPICS.events]: PROJECTOR_GROUP });
    log.info('kafka records deleted', { trimmed });
  } catch (err) {
    log.warn('kafka records not deleted', { error: err instanceof Error ? err.message : String(err) });
  }
}

export function createUpdateActivities(deps: EngineDeps & { kafka: Kafka; producer: LazyProducer }) {
  return {
    async updatePolicy(input: UpdateInput): Promise<UpdateSummary> {
      const { policy, iteration } = input;
      await ensurePolicy(deps, policy);
      const group = (it: number) => updateConsumerGroup(policy.runId, policy.spec.name, it);
      const replica = input.replica;
      const readAs = replica ? updateReaderGroup(policy.runId, policy.spec.name, iteration, replica.rank) : group(iteration);
      // Other runs' and policies' records are passed over by their key, undecoded.
      const batch = await readBatch(deps.kafka, group(iteration), UPDATE_TOPICS, { readAs, key: policyKey(policy.runId, policy.spec.name) });
      heartbeat('read');

      const selected = selectIterationSamples(batch.records, {
        runId: policy.runId,
        policy: policy.spec.name,
        iteration,
        fromVersion: input.fromVersion,
        expected: input.expectedSamples,
        maxStaleness: input.maxStaleness ?? 0,
      });
      if (!selected.ok) {
        throw selected.retryable ? ApplicationFailure.retryable(selected.message, selected.type) : ApplicationFailure.nonRetryable(selected.message, selected.type);
      }
      const { scores: scored, tokens, stale, cut } = selected;
      const advantages = groupAdvantages(scored, advantageOptions(input.update));
      // Samples of filtered or dropped (zero-variance) groups are consumed by this update but not trained on.
      const trained = scored.filter((s) => advantages.has(s.sampleId));
      const replicas = policy.spec.replicas;
      if (replica && !replicas) throw ApplicationFailure.nonRetryable(`policy ${policy.spec.name} has no replicas, but this update is one replica's part of a step`, 'PlacementMismatch');
      const share = replica ? replicaShare(trained, (s) => tokens.get(s.sampleId)!.responseIds.length, replica.rank, replica.world) : trained;
      // The samples go to the engine as a file of flat arrays (infra/engine/samplesFile.ts), next to
      // the run's checkpoints; named per attempt (and per workflow run: a run that continued as new asks
      // again for an update its predecessor may still be running), so that no other attempt's engine
      // reads it half-written or finds it removed.
      const folder = join(runFolder(policy.runId, policy.dataDir, deps.dataDir), 'update-samples');
      const { attempt, workflowExecution } = activityInfo();
      const file = join(folder, `${policy.spec.name}-v${input.fromVersion}-r${replica?.rank ?? 0}-${process.pid}-${(workflowExecution?.runId ?? 'run').slice(0, 8)}-a${attempt}.safetensors`);
      await mkdir(folder, { recursive: true });
      let result: UpdateResult;
      try {
        await writeSamplesFile(
          file,
          share.map((s) => {
            const t = tokens.get(s.sampleId)!;
            return { sample_id: s.sampleId, prompt_ids: t.promptIds, response_ids: t.responseIds, logprobs: t.logprobs, advantage: advantages.get(s.sampleId)! };
          }),
        );
        heartbeat('samples written');
        const request: UpdateRequest = {
          policy: engineKey(policy),
          from_version: input.fromVersion,
          ...(replica && replicas // (both or neither: checked above)
            ? { distributed: { rank: replica.rank, world_size: replica.world, store: replicas.rendezvous, group: replica.group, join_timeout_s: replicas.joinTimeoutS ?? replicas.timeoutS, timeout_s: replicas.timeoutS, shard_optimizer: replicas.shardOptimizer ?? false } }
            : {}),
          samples_file: file,
          clip_low: input.update.clip_low,
          clip_high: input.update.clip_high,
          dual_clip_c: input.update.dual_clip_c,
          loss_agg: input.update.loss_agg,
          kl_coef: input.update.kl_coef,
          max_grad_norm: input.update.max_grad_norm,
          micro_batch_tokens: input.update.micro_batch_tokens,
          // (absent in the settings of runs started before they existed: what the update did then;
          // the engine has no defaults of its own)
          gradient_checkpointing: input.update.gradient_checkpointing ?? false,
          ppo_mini_batch_size: input.update.ppo_mini_batch_size ?? null,
          ppo_epochs: input.update.ppo_epochs ?? 1,
          behaviour_weight_cap: input.update.behaviour_weight_cap ?? null,
          // Asynchronous training: the engine goes on generating (with a copy of the version being
          // trained) while the update runs. A step over replicas runs alone; a trainer whose policy
          // has rollout engines generates nothing, so it keeps no copy.
          overlap: (input.maxStaleness ?? 0) > 0 && !replica && !policy.spec.rollout,
          checkpoint_root: checkpointRoot(policy, deps.dataDir),
          keep_last: input.checkpoints?.keep_last ?? null,
          keep_every: input.checkpoints?.keep_every ?? null,
        };
        result = await deps.engine.request<UpdateResult>('update', request).catch((err) => {
          throw updateFailure(err);
        });
      } finally {
        await rm(file, { force: true });
      }
      // The checkpoint is on disk: record what it consumed, then let the offsets move past these records.
      // A retry after a crash here re-publishes the same event id, which the projector stores once.
      // With replicas, rank 0 alone records the step (the others hold the same result).
      if (!replica || replica.rank === 0) {
        const consumed = envelopes(updateStream(policy.runId, policy.spec.name, input.fromVersion), 0, [
          {
            type: 'SamplesConsumed',
            runId: policy.runId,
            iteration,
            policy: policy.spec.name,
            fromVersion: input.fromVersion,
            toVersion: result.version,
            // null: the sample's group was left out (update.group_filter, or zero variance with 'drop').
            advantages: Object.fromEntries(scored.map((s) => [s.sampleId, advantages.get(s.sampleId) ?? null])),
            ...(Object.keys(stale).length > 0 ? { stale } : {}),
          },
        ]);
        await deps.producer.send(TOPICS.events, consumed.map((e) => ({ key: e.stream, value: JSON.stringify(e) })));
        await batch.commit(group(iteration + 1), cut);
        await trimKafka(deps.kafka, iteration > 0 ? updateGroupsOf(policy.runId, policy.spec.name, iteration - 1, replica?.world) : []);
      }
      return {
        fromVersion: input.fromVersion,
        toVersion: result.version,
        samples: trained.length,
        groups: new Set(trained.map((s) => s.groupKey)).size,
        replayed: result.replayed,
        checkpoint: result.checkpoint,
        ...(result.kept_versions ? { keptVersions: result.kept_versions } : {}),
        ...(result.replicas && result.checksum ? { replicas: { count: result.replicas, checksum: result.checksum } } : {}),
        ...(result.dtype ? { dtype: result.dtype } : {}),
        ...(result.dtype_note ? { dtypeNote: result.dtype_note } : {}),
        // Metrics the engine did not compute this time (null) are left out.
        metrics: Object.fromEntries(
          Object.entries({
            loss: result.loss,
            pg_loss: result.pg_loss,
            kl: result.kl,
            clip_fraction: result.clip_fraction,
            approx_kl: result.approx_kl,
            entropy: result.entropy,
            grad_norm: result.grad_norm,
            lr: result.lr,
            tokens: result.tokens,
            // Samples of advantage 0 (their group's scores all equal: no signal; TRL's frac_reward_zero_std),
            // and how many samples the engine forwarded (it skips those of advantage 0 without a KL term).
            zero_advantage_samples: trained.filter((s) => advantages.get(s.sampleId) === 0).length,
            samples_forwarded: result.samples_forwarded ?? null,
            logprob_gap: result.logprob_gap,
            // The rollout/trainer importance weights (pi_trainer / pi_rollout per token, before the update).
            rollout_weight_mean: result.rollout_weight_mean ?? null,
            rollout_weight_std: result.rollout_weight_std ?? null,
            rollout_weight_min: result.rollout_weight_min ?? null,
            rollout_weight_max: result.rollout_weight_max ?? null,
            update_s: result.update_s ?? null,
            sync_s: result.sync_s ?? null,
            update_lock_wait_s: result.update_lock_wait_s ?? null,
            optimizer_state_mb: result.optimizer_state_mb ?? null,
            masters_mb: result.masters_mb ?? null,
            optimizer_steps: result.optimizer_steps ?? null,
            is_weight_mean: result.is_weight_mean ?? null,
            is_weight_max: result.is_weight_max ?? null,
            is_truncated_fraction: result.is_truncated_fraction ?? null,
            // With overlap: seconds the engine decoded during the update, and the serving copy's size.
            overlap_decode_s: result.overlap?.decode_s ?? null,
            serving_copy_mb: result.overlap?.copy_mb ?? null,
            // Asynchronous training: how many versions old the samples it trained on were, and how many it set apart.
            ...(input.maxStaleness ? { ...staleness(input.fromVersion, trained), stale_samples: Object.keys(stale).length } : {}),
          }).filter((e): e is [string, number] => e[1] !== null),
        ),
      };
    },
  };
}
