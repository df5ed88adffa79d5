// `tandem dashboard [--port N] [--allow-host NAME ...]`: serves the dashboard (services/dashboard/)
// on 127.0.0.1 until Ctrl-C: the runs, each run's live charts, episodes and transcripts, and its
// pause, resume and stop buttons. It answers requests addressed to 127.0.0.1, localhost or [::1]
// only, and to each NAME allowed (e.g. the name of an SSH tunnel's end).
import type { Command } from 'commander';
import { DEFAULT_PORT, startDashboard } from '../dashboard/server.js';
import { tcpPort, type Act } from './args.js';

export function registerDashboard(program: Command, act: Act): void {
  program
    .command('dashboard')
    .description("serve a web page of the runs on 127.0.0.1: live charts, episodes, transcripts; pause, resume and stop")
    .option('--port <N>', `the port to serve on, at 127.0.0.1 (default ${DEFAULT_PORT})`, tcpPort)
    .option('--allow-host <NAME>', 'also answer requests addressed to NAME (a host name, without the port; repeatable); by default only 127.0.0.1, localhost and [::1]', (name: string, all: string[]) => [...all, name], [])
    .action(act(dashboard));
}

async function dashboard(opts: { port?: number; allowHost: string[] }): Promise<number> {
  const server = await startDashboard({ port: opts.port ?? DEFAULT_PORT, allowHosts: opts.allowHost });
  console.log(`dashboard at ${server.url} (Ctrl-C stops it)`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}
