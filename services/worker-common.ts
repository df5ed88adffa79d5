// What Tandem's worker processes share: the Temporal connection, and a clean shutdown.
import { NativeConnection } from '@temporalio/worker';
import { stackSettings } from '../infra/settings.js';

export async function connectTemporal(): Promise<NativeConnection> {
  return NativeConnection.connect({ address: stackSettings().temporalAddress });
}

/** Every value of a repeatable `--name value` option. */
export function options(argv: string[], name: string): string[] {
  return argv.flatMap((a, i) => (a === `--${name}` && argv[i + 1] !== undefined ? [argv[i + 1]] : []));
}

/** The last value of `--name value`, or the fallback. */
export function option(argv: string[], name: string, fallback: string): string {
  return options(argv, name).pop() ?? fallback;
}
