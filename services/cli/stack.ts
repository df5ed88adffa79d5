// `tandem stack up|down|status`
import { stackDown, stackStatus, stackUp } from '../../infra/stack.js';
import { stackSettings } from '../../infra/settings.js';

export async function stackCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const only = rest.length > 0 ? rest : undefined;
  switch (action) {
    case 'up': {
      await stackUp({ only });
      const s = stackSettings();
      console.log(`Temporal UI: http://127.0.0.1:${s.temporalUiPort}   data: ${s.dataDir}`);
      return 0;
    }
    case 'down':
      await stackDown({ only });
      return 0;
    case 'status': {
      const rows = stackStatus();
      for (const r of rows) {
        const state = r.state === 'running' ? `running (pid ${r.pid})` : r.state === 'stale' ? `stale pid ${r.pid}` : 'stopped';
        console.log(`${r.name.padEnd(14)} ${state.padEnd(22)} ${r.port ? `port ${r.port}`.padEnd(11) : ''.padEnd(11)} log ${r.log}`);
      }
      return rows.every((r) => r.state === 'running') ? 0 : 3;
    }
    default:
      console.error('usage: tandem stack up|down|status [service ...]');
      return 2;
  }
}
