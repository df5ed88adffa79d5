// The policy references workflows hand to policy activities.
import type { PolicyRef } from '../activities/policy.js';
import type { PolicySpec } from '../configs/policies.js';
import type { RunConfig } from '../configs/schema.js';

export function policyRef(runId: string, spec: PolicySpec, cfg: RunConfig, checkpointDir?: string): PolicyRef {
  const u = cfg.update;
  return {
    runId,
    spec,
    optim: {
      lr: u.lr,
      weight_decay: u.weight_decay,
      warmup_steps: u.warmup_steps,
      // One optimizer step per iteration: the schedule ends with the run.
      total_steps: cfg.training.total_training_steps,
      min_lr_ratio: u.min_lr_ratio,
    },
    dataDir: cfg.data_dir,
    ...(checkpointDir ? { checkpointDir } : {}),
  };
}
