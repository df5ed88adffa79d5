// The problem files of data-backed environments (env.dataset: math, math_refine, code), read once
// per worker (infra/data) with the environment's own row mapping (envs/<env>/config.ts) and kept
// in memory: envReset attaches the rows to the env's options, so they never travel through
// workflow history (only each episode's own problem does, in its state).
import { ApplicationFailure, log } from '@temporalio/activity';
import { problemRows, type EnvConfig } from '../envs/index.js';
import { BadRowError, loadRows, type Loaded } from '../infra/data/load.js';
import { projectPath } from '../infra/settings.js';

const cache = new Map<string, Promise<unknown[]>>();

/** The problems of the env's dataset, or undefined when it has none (the env generates them). */
export async function datasetProblems(env: EnvConfig): Promise<unknown[] | undefined> {
  if (!('dataset' in env) || env.dataset === undefined) return undefined;
  const key = JSON.stringify([env.name, env.dataset]);
  let problems = cache.get(key);
  if (!problems) {
    problems = load(env, env.dataset).catch((err) => {
      cache.delete(key);
      throw err;
    });
    cache.set(key, problems);
  }
  return problems;
}

async function load(env: EnvConfig, d: { path: string; on_bad_row: 'skip' | 'fail'; limit?: number }): Promise<unknown[]> {
  let loaded: Loaded<unknown>;
  try {
    loaded = await loadRows(projectPath(d.path), problemRows(env)!, { onBadRow: d.on_bad_row, limit: d.limit });
  } catch (err) {
    // A bad file is the config's problem: retrying cannot help.
    const type = err instanceof BadRowError ? 'BadDataRow' : 'BadDataset';
    throw ApplicationFailure.nonRetryable(`${env.name} dataset ${d.path}: ${(err as Error).message}`, type);
  }
  if (loaded.skipped.length > 0) {
    const first = loaded.skipped.slice(0, 3).map((b) => `${b.file}:${b.line ?? `row ${b.row}`}: ${b.reason}`);
    log.warn(`${d.path}: skipped ${loaded.skipped.length} malformed row(s), e.g. ${first.join('; ')}`);
  }
  if (loaded.items.length === 0) {
    throw ApplicationFailure.nonRetryable(`${env.name} dataset ${d.path}: no usable problems`, 'BadDataset');
  }
  return loaded.items;
}
