// What Tandem's worker processes share: the Temporal connection, and a clean shutdown.
import { NativeConnection } from '@temporalio/worker';
import { stackSettings } from '../infra/settings.js';

export async function connectTemporal(): Promise<NativeConnection> {
  return NativeConnection.connect({ address: stackSettings().temporalAddress });
}

/** Reads `--name value` options. */
export function option(argv: string[], name: string, fallback: string): string {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
}
