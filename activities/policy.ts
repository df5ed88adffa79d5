// What the policy activities need to know about a policy: enough for the engine to load it.
import { join } from 'node:path';
import type { PolicySpec } from '../configs/schema.js';
import { projectPath } from '../infra/settings.js';

export interface PolicyRef {
  runId: string;
  spec: PolicySpec;
  /** The run's data_dir; when unset, the worker's own data folder. */
  dataDir?: string;
}

/** The engine's key for a run's policy: runs never share weights. */
export const engineKey = (p: PolicyRef) => `${p.runId}/${p.spec.name}`;

export function checkpointRoot(p: PolicyRef, workerDataDir: string): string {
  return join(p.dataDir ? projectPath(p.dataDir) : workerDataDir, 'runs', p.runId, 'checkpoints', p.spec.name);
}
