// Finding the test stack's processes, for fault tests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { settings } from './stack.js';

export function servicePid(name: string): number {
  return Number(readFileSync(join(settings.dataDir, 'run', `${name}.pid`), 'utf8').trim());
}
