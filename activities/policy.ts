// What the policy activities need to know about a policy: enough for the engine to load it.
import { join } from 'node:path';
import type { PolicySpec } from '../configs/policies.js';
import { projectPath } from '../infra/settings.js';

/** The optimizer and learning-rate schedule of a policy (AdamW, warm-up, cosine decay). */
export interface OptimSpec {
  lr: number;
  weight_decay: number;
  warmup_steps: number;
  total_steps: number;
  min_lr_ratio: number;
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

/** The engine's keys: runs never share weights; a run's adapters on one base share that base. */
export const engineKey = (p: PolicyRef) => `${p.runId}/${p.spec.name}`;
export const baseKey = (p: PolicyRef) => `${p.runId}/base/${p.spec.base}`;

export function checkpointRoot(p: PolicyRef, workerDataDir: string): string {
  if (p.checkpointDir) return projectPath(p.checkpointDir);
  return join(p.dataDir ? projectPath(p.dataDir) : workerDataDir, 'runs', p.runId, 'checkpoints', p.spec.name);
}
