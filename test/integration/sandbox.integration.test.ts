// The code sandbox (activities/sandbox) against hostile programs. No Temporal, Kafka or Postgres:
// these spawn real processes. Every test checks the containment itself, then that nothing of the
// sandbox is left on the host (no process of its uids, no host folder) and that this process
// (standing in for the worker) still runs sandboxed programs promptly.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';
import {
  activeSandboxes,
  DEFAULT_LIMITS,
  HOST_DIR_PREFIX,
  runSandboxed,
  sandboxConcurrency,
  sandboxUidRange,
  setSandboxConcurrency,
} from '../../activities/sandbox/index.js';
import { projectRoot } from '../../infra/settings.js';
import { hostProcess, launcherOf, processesAliveAtOnce, processesOfUids, pythonsOfUids } from '../support/hostProcesses.js';
import { tandemThroughSlowPipes } from '../support/slowPipes.js';

const scratch = mkdtempSync(join(os.tmpdir(), 'tandem-sandbox-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const { first, last } = sandboxUidRange();
/** For programs whose subject is not time: a wall-clock limit no loaded machine reaches. */
const UNHURRIED = { timeoutMs: 60_000 };

/** Host processes (zombies included) owned by any of this process's sandbox uids, with their state and parent. */
const sandboxProcesses = (): string[] => processesOfUids({ first, last }).map((p) => `${p.pid} ${p.name} (state ${p.state}, parent ${p.ppid})`);

/**
 * No process of the sandbox is left: none alive, at once; a zombie (it holds nothing but its pid)
 * may wait for its parent to reap it: bwrap's own init, when its pid namespace is torn down, is
 * handed to the host's pid 1 (activities/sandbox/command.ts), which reaps on its own schedule.
 */
async function assertNoSandboxProcess(message: string): Promise<void> {
  const live = () => sandboxProcesses().filter((p) => !p.includes('(state Z'));
  assert.deepEqual(live(), [], message);
  for (let waited = 0; sandboxProcesses().length > 0 && waited < 30_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(sandboxProcesses(), [], `${message} (a zombie not reaped in 30 s)`);
}

function hostDirs(): string[] {
  return readdirSync(os.tmpdir()).filter((n) => n.startsWith(`${HOST_DIR_PREFIX}${process.pid}-`));
}

/** Nothing of the sandbox remains, and the worker still works. */
async function assertContainedAndHealthy(): Promise<void> {
  await assertNoSandboxProcess('a process of the sandbox outlived its run');
  assert.deepEqual(hostDirs(), [], 'a run left its host folder behind');
  assert.equal(activeSandboxes(), 0);
  const lagStart = performance.now();
  await new Promise((r) => setImmediate(r));
  // Bounds far above a healthy machine's (a few ms; 0.1-0.5 s for a run), so that only a stalled
  // loop or a wedged sandbox fails them, never a loaded CI machine.
  assert.ok(performance.now() - lagStart < 2000, 'the event loop is stalled');
  const r = await runSandboxed('print(6 * 7)', { timeoutMs: 60_000 });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(r.stdout, '42\n');
  assert.equal(r.timedOut, false);
  await assertNoSandboxProcess('a process of the sandbox outlived a normal run');
  assert.deepEqual(hostDirs(), []);
}

test('a normal program reads stdin and writes stdout and stderr', async () => {
  const code = `import sys
data = sys.stdin.read()
print(data.upper(), end='')
print(sum(int(x) for x in data.split() if x.isdigit()))
print('to stderr', file=sys.stderr)
sys.exit(3)
`;
  const r = await runSandboxed(code, { stdin: 'abc 1 2 39\n', ...UNHURRIED });
  assert.equal(r.exitCode, 3);
  assert.equal(r.stdout, 'ABC 1 2 39\n42\n');
  assert.equal(r.stderr, 'to stderr\n');
  assert.equal(r.killedBy, null);
  assert.equal(r.timedOut, false);
  assert.equal(r.stdoutTruncated, false);
  assert.equal(r.stderrTruncated, false);
  // The standard library only: no site packages of the host.
  const lib = await runSandboxed(`import json, re, itertools, collections, math, fractions
try:
    import yaml
    print('yaml importable')
except ImportError:
    print('no yaml')
print(json.dumps(sorted(collections.Counter('abca').items())))`, UNHURRIED);
  assert.equal(lib.stdout, 'no yaml\n[["a", 2], ["b", 1], ["c", 1]]\n', lib.stderr);
  // U+0000 in its output reaches the environment, and the record, as U+FFFD (domain/events.ts).
  const nul = await runSandboxed(`import sys\nprint('a\\0b')\nprint('c\\0', file=sys.stderr)`, UNHURRIED);
  assert.equal(nul.stdout, 'a\uFFFDb\n');
  assert.equal(nul.stderr, 'c\uFFFD\n');
  await assertContainedAndHealthy();
});

test('an infinite loop is stopped by the CPU-time limit', async () => {
  // The wall-clock limit is far away: only the CPU-time limit can end it (on a loaded machine one
  // CPU second takes longer than one wall second).
  const r = await runSandboxed('while True:\n    pass\n', { cpuSeconds: 1, timeoutMs: 120_000 });
  assert.equal(r.killedBy, 'cpu');
  assert.equal(r.exitCode, null);
  assert.equal(r.timedOut, false);
  await assertContainedAndHealthy();
});

test('sleeping past the wall-clock limit is killed at the limit', async () => {
  const r = await runSandboxed('import time\nprint("going to sleep", flush=True)\ntime.sleep(60)\n', { timeoutMs: 1000 });
  assert.equal(r.timedOut, true);
  assert.equal(r.killedBy, 'timeout');
  assert.equal(r.exitCode, null);
  assert.equal(r.stdout, 'going to sleep\n');
  // Killed at the limit, not after its 60 s sleep (the upper bound leaves room for a loaded machine).
  assert.ok(r.durationMs >= 1000 && r.durationMs < 30_000, `took ${r.durationMs} ms`);
  await assertContainedAndHealthy();
});

test('a fork bomb is held to the process limit and leaves nothing behind', async () => {
  const bomb = `import os
while True:
    try:
        os.fork()
    except OSError:
        pass
`;
  let ended = false;
  const run = runSandboxed(bomb, { timeoutMs: 3000 }).finally(() => (ended = true));
  // While it rages (looked at until it ends, not at a fixed time: how soon it starts depends on the
  // machine's load): its uid has at most `processes` tasks, and the machine still starts processes.
  let most = 0;
  while (!ended) {
    // Not counted: the `kill` the sandbox runs as the uid to end the bomb at its limit (a child of
    // this process, activities/sandbox/processes.ts), which may be one more than the limit.
    const during = processesAliveAtOnce({ first, last }).filter((p) => hostProcess(p.pid).ppid !== process.pid).length;
    assert.ok(during <= DEFAULT_LIMITS.processes, `${during} sandbox processes during the bomb`);
    if (during > 0 && most === 0) {
      const t0 = performance.now();
      const probe = spawnSync('/bin/true');
      assert.equal(probe.status, 0);
      assert.ok(performance.now() - t0 < 10_000, 'the machine cannot start a process');
    }
    most = Math.max(most, during);
    await new Promise((r) => setTimeout(r, 100));
  }
  const r = await run;
  assert.ok(most > 0, 'the bomb was never seen running');
  assert.ok(r.killedBy === 'timeout' || r.killedBy === 'processes', `killedBy ${r.killedBy}`);
  assert.ok(r.durationMs < 30_000, `took ${r.durationMs} ms`);
  await assertContainedAndHealthy();
});

test('allocating beyond the memory limit fails inside the program', async () => {
  const code = `chunks = []
try:
    while True:
        chunks.append(bytearray(16 * 1024 * 1024))
except MemoryError:
    print(len(chunks) * 16, flush=True)
    raise
`;
  const r = await runSandboxed(code, { memoryMb: 256, ...UNHURRIED });
  assert.equal(r.killedBy, 'memory');
  assert.equal(r.exitCode, 1);
  assert.match(r.stderr, /MemoryError/);
  const mb = Number(r.stdout.trim());
  assert.ok(mb >= 128 && mb < 256, `allocated ${mb} MiB under a 256 MiB limit`);
  const big = await runSandboxed('x = bytearray(2 * 1024 ** 3)', { memoryMb: 256, ...UNHURRIED });
  assert.equal(big.killedBy, 'memory');
  await assertContainedAndHealthy();
});

test('printing gigabytes is truncated at the cap and killed quickly', async () => {
  const flood = `import sys
block = 'x' * (1 << 20)
for _ in range(4096):
    sys.stdout.write(block)
    sys.stderr.write(block)
`;
  // The wall-clock limit is far away: only the output cap can end it.
  const r = await runSandboxed(flood, { timeoutMs: 120_000 });
  assert.equal(r.killedBy, 'output');
  assert.equal(r.exitCode, null);
  assert.equal(r.stdout.length, DEFAULT_LIMITS.outputBytes);
  assert.equal(r.stdoutTruncated, true);
  assert.ok(r.stderr.length <= DEFAULT_LIMITS.outputBytes);
  // Somewhat past the cap: truncated and flagged, but the program is let finish.
  const some = await runSandboxed("print('y' * 100000)", { outputBytes: 1000, ...UNHURRIED });
  assert.equal(some.exitCode, 0);
  assert.equal(some.killedBy, null);
  assert.equal(some.stdout, 'y'.repeat(1000));
  assert.equal(some.stdoutTruncated, true);
  await assertContainedAndHealthy();
});

test("the host's /etc/passwd, the project and home folders are out of sight", async () => {
  const hostPasswd = readFileSync('/etc/passwd', 'utf8');
  assert.ok(existsSync(join(projectRoot, 'package.json')));
  const code = `import json, os
def read(p):
    try:
        with open(p) as f:
            return f.read()
    except OSError as e:
        return type(e).__name__
print(json.dumps({
    'passwd': read('/etc/passwd'),
    'shadow': read('/etc/shadow'),
    'package': read(${JSON.stringify(join(projectRoot, 'package.json'))}),
    'home': os.path.exists(${JSON.stringify(os.homedir())}),
    'root': sorted(os.listdir('/')),
    'etc': sorted(os.listdir('/etc')),
    'init': read('/proc/1/cmdline').split('\\0')[0],
}))
`;
  const r = await runSandboxed(code, UNHURRIED);
  assert.equal(r.exitCode, 0, r.stderr);
  const seen = JSON.parse(r.stdout);
  // Decision: /etc/passwd is the sandbox's own fake, with none of the host's entries.
  assert.equal(seen.passwd, 'root:x:0:0:root:/:/usr/sbin/nologin\nsandbox:x:1000:1000:sandbox:/tmp:/usr/sbin/nologin\n');
  for (const line of hostPasswd.split('\n').filter(Boolean)) assert.ok(!seen.passwd.includes(line), `host entry visible: ${line}`);
  assert.equal(seen.shadow, 'FileNotFoundError');
  assert.equal(seen.package, 'FileNotFoundError');
  assert.equal(seen.home, false);
  assert.deepEqual(seen.root.filter((d: string) => !['bin', 'dev', 'etc', 'lib', 'lib32', 'lib64', 'libx32', 'proc', 'sbin', 'tmp', 'usr'].includes(d)), []);
  assert.deepEqual(seen.etc, ['group', 'hosts', 'ld.so.cache', 'localtime', 'passwd'].filter((f) => f === 'group' || f === 'hosts' || f === 'passwd' || existsSync(`/etc/${f}`)));
  assert.equal(seen.init, '/usr/bin/bwrap'); // its own pid namespace: pid 1 is the sandbox's init, not the host's
  await assertContainedAndHealthy();
});

test('writing outside the working folder fails and nothing appears on the host', async () => {
  // Outside the working folder (/tmp inside), each must fail; `scratch` is a host folder under the
  // host's /tmp, which inside names a folder of the sandbox's own /tmp: writable, but not the host's.
  const outside = ['/escape.txt', '/usr/escape.txt', '/etc/escape.txt', '/dev/escape.txt', '/proc/escape.txt', join(projectRoot, 'escape.txt')];
  const targets = [...outside, join(scratch, 'escape.txt')];
  const code = `import json, os
out = {}
for p in ${JSON.stringify(targets)}:
    try:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'w') as f:
            f.write('x')
        out[p] = 'written'
    except OSError as e:
        out[p] = type(e).__name__
with open('here.txt', 'w') as f:
    f.write('fine')
out['cwd'] = os.getcwd()
out['here'] = open('here.txt').read()
# Every writable folder. A folder on a read-only mount is never writable (access() answers EROFS),
# so only the read-write mounts are walked, nested read-only mounts pruned: the whole answer, in
# time that does not grow with the host's /usr (walking '/' took over 10 s on a loaded machine).
import stat
mounts = {}
kinds = {}
for line in open('/proc/self/mountinfo'):
    f = line.split()
    point = f[4].replace('\\040', ' ')
    mounts[point] = 'rw' in f[5].split(',')
    mode = os.stat(point).st_mode
    kinds[point] = 'dir' if stat.S_ISDIR(mode) else 'char' if stat.S_ISCHR(mode) else 'file'
out['mounts'] = {p: {'rw': rw, 'kind': kinds[p]} for p, rw in mounts.items()}
writable = set()
for top, rw in mounts.items():
    if not rw or top.split('/')[1] in ('proc', 'sys'):
        continue
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if mounts.get(os.path.join(root, d), True)]
        if os.access(root, os.W_OK):
            writable.add(root)
out['writable'] = sorted(writable)
print(json.dumps(out))
`;
  const r = await runSandboxed(code, UNHURRIED);
  assert.equal(r.exitCode, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  // Inside the sandbox, /tmp is its own tmpfs: a project cloned under the host's /tmp has a path
  // the program may write to there, which must still never reach the host (checked below).
  for (const p of outside.filter((x) => !x.startsWith('/tmp/'))) assert.notEqual(out[p], 'written', `${p} was writable`);
  for (const p of targets) assert.equal(existsSync(p), false, `${p} appeared on the host`);
  assert.equal(out.here, 'fine'); // the working folder is writable
  assert.equal(out.cwd, '/tmp');
  // Read-write mounts: only the working folder, its own /dev/shm (both size-limited tmpfs), /dev/pts
  // and the sandbox's own /proc; the root and everything bound from the host are read-only.
  // (bwrap's /dev binds single device nodes read-write: null, zero, full, random, urandom, tty.)
  const mounts = Object.entries(out.mounts as Record<string, { rw: boolean; kind: string }>).filter(([m]) => !m.startsWith('/proc'));
  const rw = (kind: string) => mounts.filter(([, v]) => v.rw && v.kind === kind).map(([m]) => m).sort();
  assert.deepEqual(rw('dir'), ['/dev/pts', '/dev/shm', '/tmp']);
  assert.deepEqual(rw('file'), [], 'a regular file is mounted read-write');
  assert.ok(rw('char').every((m) => m.startsWith('/dev/')), `${rw('char')}`);
  assert.equal(out.mounts['/'].rw, false, 'the root is writable');
  // Writable at all: those three folders.
  assert.deepEqual(out.writable.filter((d: string) => !d.startsWith('/tmp/')), ['/dev/pts', '/dev/shm', '/tmp']);
  // ... and bounded: filling it past diskMb fails.
  const fill = await runSandboxed("with open('big', 'wb') as f:\n    for _ in range(64):\n        f.write(b'z' * (1 << 20))\n", { diskMb: 16, ...UNHURRIED });
  assert.notEqual(fill.exitCode, 0);
  assert.ok(/No space left|File too large/.test(fill.stderr) || fill.killedBy === 'SIGXFSZ', `${fill.killedBy} ${fill.stderr}`);
  await assertContainedAndHealthy();
});

test('the program has no network: a TCP server on 127.0.0.1 is unreachable', async () => {
  let connections = 0;
  const server = net.createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const code = `import json, socket
out = {}
for name, addr in [('local', ('127.0.0.1', ${port})), ('remote', ('1.1.1.1', 53))]:
    try:
        socket.create_connection(addr, timeout=2).close()
        out[name] = 'connected'
    except OSError as e:
        out[name] = type(e).__name__ + ': ' + str(e)
try:
    socket.getaddrinfo('example.com', 80)
    out['dns'] = 'resolved'
except OSError as e:
    out['dns'] = type(e).__name__
out['ifaces'] = sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:])
print(json.dumps(out))
`;
    const r = await runSandboxed(code, UNHURRIED);
    assert.equal(r.exitCode, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.match(out.local, /^ConnectionRefusedError/);
    assert.match(out.remote, /unreachable/i);
    assert.notEqual(out.dns, 'resolved');
    assert.deepEqual(out.ifaces, ['lo']);
    assert.equal(connections, 0);
  } finally {
    server.close();
  }
  await assertContainedAndHealthy();
});

test('a background process does not outlive the program', async () => {
  const marker = join(scratch, 'marker');
  // A detached child and a double-forked daemon, each trying for 3 s to leave a marker where the
  // host could see it (and, failing that, in the sandbox's own /tmp).
  const survivor = `import time
for _ in range(30):
    time.sleep(0.1)
    for p in (${JSON.stringify(marker)}, '/tmp/marker'):
        try:
            open(p, 'w').write('alive')
        except OSError:
            pass
`;
  const code = `import os, subprocess, sys, time
survivor = ${JSON.stringify(survivor)}
subprocess.Popen([sys.executable, '-c', survivor], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        exec(survivor)
    os._exit(0)
time.sleep(0.3)
print('leaving')
`;
  const r = await runSandboxed(code, UNHURRIED);
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(r.stdout, 'leaving\n');
  assert.deepEqual(sandboxProcesses(), [], 'the background processes are still running');
  await new Promise((res) => setTimeout(res, 1500));
  assert.equal(existsSync(marker), false);
  await assertContainedAndHealthy();
});

/** The pythons of this process's sandbox uids (or of `uids`). */
const sandboxPythons = (uids = { first, last }) => pythonsOfUids(uids);

test('programs are started by the launcher, never forked from the worker itself', async () => {
  // A fork from the worker copies its page tables, a cost that grows with its memory (launcher.mjs).
  let done = false;
  const runs = Promise.all([runSandboxed('import time\ntime.sleep(2)\n', UNHURRIED), runSandboxed('import time\ntime.sleep(2)\n', UNHURRIED)]).finally(() => (done = true));
  // Each program is traced when first seen (it sleeps 2 s, ample for that); the two need not be
  // seen at once (on a loaded machine one can end before the other starts).
  const launchers = new Map<number, number>(); // program -> its launcher
  while (!done && launchers.size < 2) {
    for (const pid of sandboxPythons().filter((p) => !launchers.has(p))) {
      // Up the host's process tree from the program: bwrap, unshare, then the launcher, a child of this process.
      let p = pid;
      while (p > 1 && hostProcess(p).ppid !== process.pid) p = hostProcess(p).ppid;
      if (!hostProcess(pid).cmdline) continue; // it ended while we looked
      assert.equal(hostProcess(p).ppid, process.pid, `program ${pid} does not descend from this process`);
      assert.match(hostProcess(p).cmdline, /launcher\.mjs/, `program ${pid}'s ancestor ${p} is not the launcher`);
      launchers.set(pid, p);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  for (const r of await runs) assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(launchers.size, 2, 'the two programs were seen running');
  assert.equal(new Set(launchers.values()).size, 1, 'one launcher per worker');
  await assertContainedAndHealthy();
});

test('a launcher killed mid-run fails its runs, takes their programs with it, and the next run starts a new one', async () => {
  const running = runSandboxed('import time\ntime.sleep(120)\n', { timeoutMs: 300_000 }).then(
    () => assert.fail('the run outlived its launcher'),
    (e: Error) => e,
  );
  for (let waited = 0; sandboxPythons().length === 0 && waited < 60_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  const launcher = launcherOf(process.pid);
  assert.ok(launcher, 'no launcher');
  process.kill(launcher, 'SIGKILL');
  const err = await running;
  assert.equal(err.name, 'LauncherDied', err.message);
  for (let waited = 0; sandboxProcesses().length > 0 && waited < 30_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
  await assertContainedAndHealthy(); // a new launcher runs the next program
});

test('a worker killed with SIGKILL takes its launcher and its running program with it', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/sandboxChild.ts'], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (l) => l.startsWith('running') && resolve(l));
    child.on('exit', (code) => reject(new Error(`the child exited (${code}) before its program ran`)));
  });
  const [uidFirst, uidLast] = line.split(' ').slice(1).map(Number);
  const launcher = launcherOf(child.pid!);
  assert.ok(launcher, 'the child has no launcher');
  assert.equal(sandboxPythons({ first: uidFirst, last: uidLast }).length, 1);
  child.kill('SIGKILL');
  // Generous: only a program or launcher that never dies fails this, not a slow machine.
  for (let waited = 0; waited < 30_000; waited += 100) {
    if (!hostProcess(launcher).cmdline && sandboxPythons({ first: uidFirst, last: uidLast }).length === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(hostProcess(launcher).cmdline, '', 'the launcher outlived its worker');
  assert.deepEqual(sandboxPythons({ first: uidFirst, last: uidLast }), [], 'the program outlived its worker');
});

test('the concurrency limit holds: at most `limit` programs run at once', async () => {
  const before = sandboxConcurrency();
  setSandboxConcurrency(2);
  try {
    let peak = 0;
    const poll = setInterval(() => (peak = Math.max(peak, activeSandboxes())), 5);
    const code = 'import time\nstart = time.time()\ntime.sleep(1.5)\nprint(start, time.time())\n';
    const results = await Promise.all(Array.from({ length: 6 }, () => runSandboxed(code, UNHURRIED)));
    clearInterval(poll);
    const spans = results.map((r) => {
      assert.equal(r.exitCode, 0, r.stderr);
      const [s, e] = r.stdout.trim().split(' ').map(Number);
      return { s, e };
    });
    // The most programs alive at any one instant, from their own clocks.
    const overlap = Math.max(...spans.map(({ s }) => spans.filter((o) => o.s <= s && s < o.e).length));
    assert.equal(overlap, 2);
    assert.equal(peak, 2);
  } finally {
    setSandboxConcurrency(before);
  }
  await assertContainedAndHealthy();
});

test('`tandem sandbox run FILE` prints one JSON object', () => {
  const file = join(scratch, 'prog.py');
  const input = join(scratch, 'input.txt');
  writeFileSync(file, 'import sys\nprint(sys.stdin.read()[::-1])\nsys.exit(5)\n');
  writeFileSync(input, 'olleh');
  const run = spawnSync(process.execPath, ['bin/tandem.js', 'sandbox', 'run', file, '--stdin', input, '--timeout', '5', '--memory', '256'], {
    cwd: projectRoot,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.deepEqual(Object.keys(out), ['exitCode', 'stdout', 'stderr', 'stdoutTruncated', 'stderrTruncated', 'timedOut', 'killedBy', 'durationMs']);
  assert.equal(out.exitCode, 5);
  assert.equal(out.stdout, 'hello\n');
  assert.equal(out.timedOut, false);
  assert.equal(out.killedBy, null);

  writeFileSync(file, 'import time\ntime.sleep(30)\n');
  const slow = JSON.parse(execFileSync(process.execPath, ['bin/tandem.js', 'sandbox', 'run', file, '--timeout', '0.5'], { cwd: projectRoot, encoding: 'utf8' }));
  assert.equal(slow.timedOut, true);
  assert.equal(slow.killedBy, 'timeout');

  const check = spawnSync(process.execPath, ['bin/tandem.js', 'sandbox', 'check'], { cwd: projectRoot, encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
  assert.match(check.stdout, /isolation works/);

  for (const bad of [['sandbox', 'run'], ['sandbox', 'run', file, '--timeout', 'soon'], ['sandbox', 'run', join(scratch, 'missing.py')], ['sandbox', 'fly']]) {
    const r = spawnSync(process.execPath, ['bin/tandem.js', ...bad], { cwd: projectRoot, encoding: 'utf8' });
    assert.equal(r.status, 2, `${bad.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^usage: tandem sandbox (run <FILE>|run\|check)/m);
  }
});

test('`tandem sandbox run FILE` loses nothing of a large result to a slow pipe reader', () => {
  // 64 KiB of program output (all the sandbox keeps) makes a JSON result just over the pipe's 64 KiB.
  const file = join(scratch, 'loud.py');
  writeFileSync(file, "import sys\nsys.stdout.write('x' * 65536)\n");
  const r = tandemThroughSlowPipes(['sandbox', 'run', file]);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.stdout.length > 65_536, `${r.stdout.length} bytes`);
  const out = JSON.parse(r.stdout);
  assert.equal(out.exitCode, 0);
  assert.equal(out.stdout, 'x'.repeat(65536));
  assert.equal(out.stdoutTruncated, false);
});

test('the sandbox fails closed: without root it refuses to run anything', () => {
  const dir = mkdtempSync(join(os.tmpdir(), 'tandem-sandbox-closed-'));
  chmodSync(dir, 0o755);
  const file = join(dir, 'closed.py');
  writeFileSync(file, "open('/tmp/ran', 'w')\nprint('ran')\n");
  const r = spawnSync(
    '/usr/bin/setpriv',
    ['--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, 'bin/tandem.js', 'sandbox', 'run', file],
    { cwd: projectRoot, encoding: 'utf8', env: { ...process.env, HOME: dir } },
  );
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /sandbox: must run as root/);
  rmSync(dir, { recursive: true, force: true });
});
