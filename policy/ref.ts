// What workflows hand to the policy activities about a policy: enough for an engine to load it
// (its spec, optimizer, where its checkpoints live), and the engine's keys for it. Pure.
import type { RunConfig } from '../configs/schema.js';
import type { PolicySpec } from './spec.js';

/** The optimizer and learning-rate schedule of a policy (AdamW, warm-up, cosine decay). */
export interface OptimSpec {
  lr: number;
  weight_decay: number;
  warmup_steps: number;
  total_steps: number;
  min_lr_ratio: number;
  /** Where the warm-up starts: lr / warmup_steps, or lr x min_lr_ratio (verl's, the reference's). */
  warmup_start: 'fraction' | 'min_lr';
}

export interface PolicyRef {
  runId: string;
  spec: PolicySpec;
  optim: OptimSpec;
  /** The run's data_dir; when unset, the worker's own data folder. */
  dataDir?: string;
  /** Load from this checkpoint folder instead of the run's own (evaluations of a given checkpoint). */
  checkpointDir?: string;
}

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
      warmup_start: u.warmup_start,
    },
    dataDir: cfg.data_dir,
    ...(checkpointDir ? { checkpointDir } : {}),
  };
}

/** The engine's keys: runs never share weights; a run's adapters on one base share that base. */
export const engineKey = (p: PolicyRef) => `${p.runId}/${p.spec.name}`;
export const baseKey = (p: PolicyRef) => `${p.runId}/base/${p.spec.base}`;
