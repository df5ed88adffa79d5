// `tandem report`: reads a run from Postgres and writes <out>/index.html, one PNG per chart and
// one page per linked episode under <out>/episodes/, rendered from its audit transcript
// (services/audit/transcript.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { loadTranscript } from '../audit/transcript.js';
import { reportCharts } from './runCharts.js';
import { episodePagePath, episodesToLink } from './episodes.js';
import { episodePage, indexPage } from './html.js';
import { loadRunData } from './load.js';
import { chartPng } from './png.js';

export interface ReportFiles {
  index: string;
  plots: string[];
  episodes: string[];
}

export async function writeReport(db: NodePgDatabase, runId: string, outDir: string): Promise<ReportFiles> {
  const data = await loadRunData(db, runId);
  const charts = reportCharts(data);
  const linked = episodesToLink(data.episodes);
  const write = (rel: string, content: string | Buffer) => {
    const path = join(outDir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    return path;
  };
  const plots = charts.map((c) => write(`${c.file}.png`, chartPng(c.spec)));
  const episodes: string[] = [];
  for (const id of linked) episodes.push(write(episodePagePath(runId, id), episodePage(await loadTranscript(db, id))));
  const index = write('index.html', indexPage(data, charts, linked, new Date()));
  return { index, plots, episodes };
}
