// A policy's life in an engine (policy worker): loading it on demand (from its newest complete
// checkpoint, else its base model) and checking its version, the `policyVersion` and
// `releasePolicy` activities, and where its checkpoints live.
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import type { EngineClient } from '../infra/engine/client.js';
import { projectPath } from '../infra/settings.js';
import { baseKey, engineKey, type PolicyRef } from './ref.js';

/** What a policy worker's activities share: its engine, its device and its data folder. */
export interface EngineDeps {
  engine: EngineClient;
  device: string;
  dataDir: string;
}

/** `<data_dir>/runs/<run>/checkpoints/<policy>`, or the checkpoint folder an evaluation was given. */
export function checkpointRoot(p: PolicyRef, workerDataDir: string): string {
  if (p.checkpointDir) return projectPath(p.checkpointDir);
  return join(p.dataDir ? projectPath(p.dataDir) : workerDataDir, 'runs', p.runId, 'checkpoints', p.spec.name);
}

/** Loads the policy into the engine (idempotent) and checks it is at the version asked for. */
export async function ensurePolicy(deps: EngineDeps, policy: PolicyRef, version: number | null): Promise<number> {
  if (policy.spec.device !== deps.device) {
    throw ApplicationFailure.nonRetryable(
      `policy ${policy.spec.name} is placed on ${policy.spec.device}, but the worker on task queue ${policy.spec.taskQueue} runs on ${deps.device}`,
      'PlacementMismatch',
    );
  }
  const { spec } = policy;
  const loaded = await deps.engine.request<{ version: number }>('load', {
    policy: engineKey(policy),
    kind: spec.kind,
    model_path: projectPath(spec.modelPath),
    base: baseKey(policy),
    ...(spec.lora ? { lora: spec.lora } : {}),
    optim: { ...policy.optim, betas: [0.9, 0.999] },
    checkpoint_root: checkpointRoot(policy, deps.dataDir),
  });
  if (version !== null && loaded.version !== version) {
    throw ApplicationFailure.nonRetryable(
      `policy ${policy.spec.name} is at version ${loaded.version} but version ${version} was asked for (off-policy request)`,
      'VersionMismatch',
    );
  }
  return loaded.version;
}

export function createPolicyActivities(deps: EngineDeps) {
  return {
    /** The policy's current version, loading it (from its latest checkpoint) if needed. */
    async policyVersion(policy: PolicyRef): Promise<number> {
      return ensurePolicy(deps, policy, null);
    },

    /** Frees the policy's weights in the engine (its checkpoints stay); a later request loads it again. */
    async releasePolicy(policy: PolicyRef): Promise<void> {
      await deps.engine.request('unload', { policy: engineKey(policy) });
    },
  };
}
