// `tandem eval FILE [key=value ...] [--checkpoint DIR] [--split validation|test] [--id EVAL_ID] [--json]`:
// evaluates a config's policies on held-out problems (the validation seeds, or the test seeds), from a checkpoint folder or (without --checkpoint) the base
// models, and prints the result. DIR is a run's checkpoints folder (<data>/runs/<run>/checkpoints,
// one sub-folder per policy) or, for a config with one trainable policy, that policy's folder.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { loadRunConfig } from '../../configs/load.js';
import { policiesOf, trainable } from '../../policy/spec.js';
import { formatIssues, type RunConfig } from '../../configs/schema.js';
import type { EvaluationResult } from '../../domain/events.js';
import { CPU_QUEUE, projectPath } from '../../infra/settings.js';
import { evaluate } from '../../workflows/evaluate.js';
import { printJson, type Act } from './args.js';
import { freshWorkflowId, temporalClient } from '../client/temporal.js';

export function registerEval(program: Command, act: Act): void {
  program
    .command('eval')
    .description("evaluate a config's policies on held-out problems: success and reward, per agent and turn")
    .argument('<FILE>', 'the run config (YAML)')
    .argument('[key=value...]', 'overrides, dotted paths with YAML values: training.val_problems=8 (* matches every entry of a mapping); @FILE applies a preset, the list of overrides FILE holds (configs/sokoban/reference.preset.yaml)')
    .option('--checkpoint <DIR>', "the policies from DIR, a run's checkpoints folder (or one policy's); default: the base models")
    .option('--split <SPLIT>', 'the held-out problems: validation or test (final figures, kept apart from what was tuned on validation)', 'validation')
    .option('--id <EVAL_ID>', 'the evaluation id (workflow id); default: a fresh eval-<time>-<random> id')
    .option('--json', 'print the result (EvaluationResult) as JSON')
    .action(act(evalCommand));
}

async function evalCommand(file: string, overrides: string[], opts: { checkpoint?: string; split: string; id?: string; json?: boolean }): Promise<number> {
  const split = opts.split;
  if (split !== 'validation' && split !== 'test') {
    console.error(`tandem eval: --split: validation or test, not '${split}'`);
    return 1;
  }
  const loaded = loadRunConfig(file, overrides);
  if (!loaded.ok) {
    console.error(`${file}: ${loaded.issues.length} error(s)\n${formatIssues(loaded.issues)}`);
    return 1;
  }
  const checkpoint = opts.checkpoint;
  const dirs = checkpoint === undefined ? {} : checkpointDirs(loaded.config, checkpoint);
  if (typeof dirs === 'string') {
    console.error(`tandem eval: --checkpoint ${checkpoint}: ${dirs}`);
    return 1;
  }
  const evalId = opts.id ?? freshWorkflowId('eval');
  const t = loaded.config.training;
  console.error(`${evalId}: ${t.val_problems} ${split} problems x ${t.validate_sample_num}, from ${checkpoint ?? 'the base models'}`);
  const client = await temporalClient();
  const result = await client.workflow.execute(evaluate, {
    taskQueue: CPU_QUEUE,
    workflowId: evalId,
    args: [{ config: loaded.config, runId: evalId, iteration: null, checkpointDirs: dirs, split }],
  });
  if (opts.json) printJson(result);
  else console.log(formatEvaluation(result));
  return 0;
}

/** Per trainable policy, the folder its checkpoints are in; or why DIR does not fit the config. */
export function checkpointDirs(cfg: RunConfig, dir: string): Record<string, string> | string {
  const abs = projectPath(dir);
  if (!existsSync(abs)) return 'no such folder';
  const names = trainable(policiesOf(cfg)).map((p) => p.name);
  if (names.every((n) => existsSync(join(abs, n)))) return Object.fromEntries(names.map((n) => [n, join(abs, n)]));
  const versions = readdirSync(abs).filter((f) => /^v\d+$/.test(f));
  if (names.length === 1 && versions.length > 0) return { [names[0]]: abs };
  return `expected a sub-folder per trainable policy (${names.join(', ')})${names.length === 1 ? ' or v<N> checkpoint folders' : ''}`;
}

export function formatEvaluation(r: EvaluationResult): string {
  const f = (x: number | null) => (x === null ? '-' : x.toFixed(3));
  const lines = [
    `${r.evalId}: ${r.episodes} episodes  success=${f(r.successRate)}  turns=${f(r.meanTurns)}  versions ${Object.entries(r.versions).map(([p, v]) => `${p}=v${v}`).join(' ') || '-'}`,
    ...Object.entries(r.rewardByAgent).map(([a, x]) => `  ${a}: reward=${f(x)}  per turn [${r.rewardByAgentTurn[a].map(f).join(', ')}]`),
  ];
  return lines.join('\n');
}
