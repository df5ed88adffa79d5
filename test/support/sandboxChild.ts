// Child process for test/integration/sandbox.integration.test.ts, standing in for a worker: runs
// a sandboxed program that sleeps, prints `running FIRST_UID LAST_UID` (its sandbox uids) once
// the program's python runs, and waits to be killed.
import { checkSandbox, runSandboxed, sandboxUidRange } from '../../activities/sandbox/index.js';
import { pythonsOfUids } from './hostProcesses.js';

const uids = sandboxUidRange();
await checkSandbox(); // its probe program runs first: once it is done, a python of ours is the program
void runSandboxed('import time\ntime.sleep(120)\n', { timeoutMs: 300_000 });
while (pythonsOfUids(uids).length === 0) await new Promise((r) => setTimeout(r, 50));
console.log(`running ${uids.first} ${uids.last}`);
await new Promise(() => {}); // until killed
