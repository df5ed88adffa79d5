// `tandem report RUN_ID [--out DIR] [--json]`: PNG plots and an HTML page of a run, from Postgres.
import type { Command } from 'commander';
import { projectPath, stackSettings } from '../../infra/settings.js';
import { writeReport } from '../report/write.js';
import { printJson, type Act } from './args.js';
import { withDatabase } from '../client/database.js';

export function registerReport(program: Command, act: Act): void {
  program
    .command('report')
    .description('PNG plots and an HTML page of a run, with episode pages; prints the page\'s path')
    .argument('<RUN_ID>', 'the training run')
    .option('--out <DIR>', 'the folder to write to (default: <data>/reports/RUN_ID)')
    .option('--json', 'print the files written as JSON')
    .action(act(report));
}

async function report(runId: string, opts: { out?: string; json?: boolean }): Promise<number> {
  const out = projectPath(opts.out ?? `${stackSettings().dataDir}/reports/${runId}`);
  const files = await withDatabase((db) => writeReport(db, runId, out));
  if (opts.json) printJson({ out, ...files });
  else {
    console.log(`${files.index}`);
    console.log(`  ${files.plots.length} plots, ${files.episodes.length} episode pages in ${out}`);
  }
  return 0;
}
