// Child process for test/integration/sandbox.integration.test.ts, standing in for a worker: runs
// a sandboxed program that sleeps, prints `running FIRST_UID LAST_UID` (its sandbox uids) once
// the program's python runs, and waits to be killed.
import { readdirSync, readFileSync } from 'node:fs';
import { checkSandbox, runSandboxed, sandboxUidRange } from '../../activities/sandbox/index.js';

const { first, last } = sandboxUidRange();

function programRuns(): boolean {
  return readdirSync('/proc').some((p) => {
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      return /^Name:\s+python/m.test(status) && uid >= first && uid <= last;
    } catch {
      return false; // ended while we looked
    }
  });
}

await checkSandbox(); // its probe program runs first: once it is done, a python of ours is the program
void runSandboxed('import time\ntime.sleep(120)\n', { timeoutMs: 300_000 });
while (!programRuns()) await new Promise((r) => setTimeout(r, 50));
console.log(`running ${first} ${last}`);
await new Promise(() => {}); // until killed
