// `tandem report RUN_ID [--out DIR]`: PNG plots and an HTML page of a run, from Postgres.
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { projectPath, stackSettings } from '../../infra/settings.js';
import { writeReport } from '../report/write.js';
import { option } from '../worker-common.js';

const REPORT_USAGE = 'usage: tandem report RUN_ID [--out DIR]   (default DIR: <data>/reports/RUN_ID)';

export async function reportCommand(args: string[]): Promise<number> {
  const runId = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--out');
  if (!runId) {
    console.error(REPORT_USAGE);
    return 2;
  }
  const s = stackSettings();
  const out = projectPath(option(args, 'out', `${s.dataDir}/reports/${runId}`));
  const pool = new pg.Pool({ connectionString: s.databaseUrl, max: 2 });
  try {
    const files = await writeReport(drizzle(pool), runId, out);
    console.log(`${files.index}`);
    console.log(`  ${files.plots.length} plots, ${files.episodes.length} episode pages in ${out}`);
    return 0;
  } finally {
    await pool.end();
  }
}
