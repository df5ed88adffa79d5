// `tandem config check FILE [key=value ...] [--json]`: a run config validated and printed normalised.
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { loadRunConfig } from '../../configs/load.js';
import { formatIssues } from '../../configs/schema.js';
import type { Act } from './args.js';

export function registerConfig(program: Command, act: Act): void {
  const config = program.command('config').description('run configs');
  config
    .command('check')
    .description('validate a run config and print it normalised, or every error with its path (exit 1)')
    .argument('<FILE>', 'the run config (YAML)')
    .argument('[key=value...]', 'overrides, dotted paths with YAML values: training.train_sample_num=8 (* matches every entry of a mapping); @FILE applies a preset, the list of overrides FILE holds (configs/sokoban/reference.preset.yaml)')
    .option('--json', 'print it as the trainingRun workflow input, {"config": ...}')
    .action(act(configCheck));
}

export function configCheck(file: string, overrides: string[], opts: { json?: boolean }): number {
  const result = loadRunConfig(file, overrides);
  if (!result.ok) {
    console.error(`${file}: ${result.issues.length} error(s)\n${formatIssues(result.issues)}`);
    return 1;
  }
  // --json prints the trainingRun workflow input, ready for `temporal workflow start --input-file`.
  process.stdout.write(opts.json ? `${JSON.stringify({ config: result.config })}\n` : stringify(result.config));
  return 0;
}
