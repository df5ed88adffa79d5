// `tandem stack up|down|status`: the local stack (Temporal, Kafka, Postgres, workers, projector).
import type { Command } from 'commander';
import { stackDown, stackStatus, stackUp } from '../../infra/stack.js';
import { stackSettings } from '../../infra/settings.js';
import { printJson, type Act } from './args.js';

const SERVICES = 'services to act on (postgres, kafka, temporal, projector, cpu-worker, policy-worker); all without';

export function registerStack(program: Command, act: Act): void {
  const stack = program.command('stack').description('the local stack: Temporal, Kafka, Postgres, workers, projector');
  stack
    .command('up')
    .description('start the local stack (or some of its services); prints the Temporal UI address')
    .argument('[SERVICE...]', SERVICES)
    .action(act(up));
  stack
    .command('down')
    .description('stop the local stack (or some of its services)')
    .argument('[SERVICE...]', SERVICES)
    .action(act(down));
  stack
    .command('status')
    .description("each service's state, pid, port and log (exit 3 unless all are running)")
    .option('--json', 'print the services as one JSON array')
    .action(act(status));
}

async function up(services: string[]): Promise<number> {
  await stackUp({ only: services.length > 0 ? services : undefined });
  const s = stackSettings();
  console.log(`Temporal UI: http://127.0.0.1:${s.temporalUiPort}   data: ${s.dataDir}`);
  return 0;
}

async function down(services: string[]): Promise<number> {
  await stackDown({ only: services.length > 0 ? services : undefined });
  return 0;
}

function status(opts: { json?: boolean }): number {
  const rows = stackStatus();
  if (opts.json) printJson(rows);
  else {
    for (const r of rows) {
      const state = r.state === 'running' ? `running (pid ${r.pid})` : r.state === 'stale' ? `stale pid ${r.pid}` : 'stopped';
      console.log(`${r.name.padEnd(14)} ${state.padEnd(22)} ${r.port ? `port ${r.port}`.padEnd(11) : ''.padEnd(11)} log ${r.log}`);
      if (r.untracked) {
        const them = r.untracked.length === 1 ? 'it' : 'them';
        console.log(`${''.padEnd(14)} untracked: pid ${r.untracked.join(', ')} (no pid file names ${them}; \`stack up\` or \`stack down\` kills ${them})`);
      }
    }
  }
  return rows.every((r) => r.state === 'running') ? 0 : 3;
}
