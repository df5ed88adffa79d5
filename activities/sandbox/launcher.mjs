// The sandbox's launcher: a small process, one per worker, that starts the sandbox's command
// lines for it and relays their output. Plain JavaScript on node's built-ins, run without tsx.
//
// Why a process of its own: node starts a child with fork(), whose cost grows with the parent's
// memory (the page tables are copied): 12-17 ms per program from a worker of 200-300 MB, spent
// on the worker's event loop; through this process a 378 MB asker spends 3.4 ms of CPU per program
// instead of 14-15 ms (bench/sandbox.ts --ballast 300, in bench/RESULTS.md).
// It dies with its worker (setpriv --pdeathsig, see launcher.ts), and the programs with it (each
// sandbox command line starts with its own setpriv --pdeathsig).
//
// Protocol, one JSON object per line.
//   in:  {op:'run', id, file, args, env, stdin}   start a command (new session and process group)
//        {op:'kill', id}                           SIGKILL its process group, unless already reaped
//   out: {id, pid}                                 it started
//        {id, fd, data}                            output on fd 1, 2 or 3 (base64)
//        {id, exit, signal}                        it was reaped (exit code, or the signal's name)
//        {id, error}                               it could not start (a 'closed' follows)
//        {id, closed: true}                        its pipes are closed: nothing more will come
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** id -> the child and whether it has been reaped (its pid may belong to another process after). */
const runs = new Map();
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

function run({ id, file, args, env, stdin }) {
  const child = spawn(file, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], env });
  const entry = { child, reaped: false };
  runs.set(id, entry);
  child.on('spawn', () => send({ id, pid: child.pid }));
  child.on('error', (e) => send({ id, error: e.message }));
  for (const fd of [1, 2, 3]) child.stdio[fd].on('data', (b) => send({ id, fd, data: b.toString('base64') }));
  child.stdin.on('error', () => {}); // the program may exit without reading its input
  child.stdin.end(stdin);
  let grace;
  child.on('exit', (code, signal) => {
    entry.reaped = true;
    send({ id, exit: code, signal });
    // Nothing in the sandbox outlives its command; if a pipe stays open anyway, stop waiting for it.
    grace = setTimeout(() => {
      for (const fd of [1, 2, 3]) child.stdio[fd].destroy();
    }, 1000);
  });
  child.on('close', () => {
    clearTimeout(grace);
    runs.delete(id);
    send({ id, closed: true });
  });
}

function kill(id) {
  const entry = runs.get(id);
  if (!entry || entry.reaped || entry.child.pid === undefined) return;
  try {
    process.kill(-entry.child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

createInterface({ input: process.stdin })
  .on('line', (line) => {
    const message = JSON.parse(line);
    if (message.op === 'run') run(message);
    else if (message.op === 'kill') kill(message.id);
  })
  // The worker is gone (or stopping): nothing of its programs may stay behind.
  .on('close', () => {
    for (const id of runs.keys()) kill(id);
    process.exit(0);
  });
