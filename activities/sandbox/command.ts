// The command line that runs one program in the sandbox:
//   prlimit (rlimits, set as root) -> setpriv --pdeathsig KILL (dies with the worker)
//   -> unshare --pid --fork --kill-child (root: an outer pid namespace whose init is bwrap; when
//      bwrap ends the kernel kills and reaps everything under it, bwrap's own init included,
//      which bwrap itself leaves to the host's pid 1 as a zombie of the sandbox's uid)
//   -> setpriv (drop to the slot's unprivileged uid: no groups, no capabilities, no_new_privs;
//      dies with unshare)
//   -> bwrap (new user, mount, pid, net, ipc, uts and cgroup namespaces; no nested user
//      namespaces; a read-only system, a fake /etc and a fresh tmpfs working folder)
//   -> /usr/bin/python3 -I main.py
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import type { Limits } from './limits.js';

export const TOOLS = {
  prlimit: '/usr/bin/prlimit',
  unshare: '/usr/bin/unshare',
  setpriv: '/usr/bin/setpriv',
  bwrap: '/usr/bin/bwrap',
  python: '/usr/bin/python3',
  kill: '/usr/bin/kill',
} as const;

/** The uid and gid the program sees inside its user namespace (mapped to the slot's host uid). */
export const INNER_ID = 1000;
/** The program's working folder inside the sandbox: a size-limited tmpfs, also $HOME and $TMPDIR. */
export const WORKDIR = '/tmp';
/** File descriptor on which bwrap reports the program's start and exit status (JSON). */
export const STATUS_FD = 3;

/** Files of the fake /etc, written into the run's host folder and bound read-only. */
export function fakeEtc(): Record<string, string> {
  return {
    passwd: `root:x:0:0:root:/:/usr/sbin/nologin\nsandbox:x:${INNER_ID}:${INNER_ID}:sandbox:${WORKDIR}:/usr/sbin/nologin\n`,
    group: `root:x:0:\nsandbox:x:${INNER_ID}:\n`,
    hosts: '127.0.0.1 localhost\n::1 localhost\n',
  };
}

/** Host files of /etc that Python may read and that hold nothing about the host's users or secrets. */
const HOST_ETC = ['ld.so.cache', 'localtime'];

/** Top-level folders that are either symlinks into /usr (merged /usr) or real library folders. */
function rootLinks(): string[] {
  const args: string[] = [];
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const path = `/${name}`;
    let st;
    try {
      st = lstatSync(path);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else if (st.isDirectory()) args.push('--ro-bind', path, path);
  }
  return args;
}

export function sandboxCommand(opts: { uid: number; hostDir: string; limits: Limits }): { file: string; args: string[] } {
  const { uid, hostDir, limits } = opts;
  const mib = 1024 * 1024;
  const rlimits = [
    `--as=${limits.memoryMb * mib}`,
    // SIGXCPU at the soft limit, SIGKILL one second later if the program ignores it.
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--nproc=${limits.processes}`,
    `--fsize=${limits.diskMb * mib}`,
    '--nofile=256',
    '--core=0',
    '--memlock=0',
  ];
  const drop = [
    `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups',
    '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--pdeathsig', 'KILL',
  ];
  const hidden = ['/usr/local', '/usr/lib/python3/dist-packages'].filter((p) => existsSync(p));
  const bwrap = [
    '--unshare-all', '--unshare-user', '--disable-userns',
    '--uid', String(INNER_ID), '--gid', String(INNER_ID), '--hostname', 'sandbox',
    '--die-with-parent', '--new-session',
    '--json-status-fd', String(STATUS_FD),
    '--clearenv',
    '--setenv', 'PATH', '/usr/bin:/bin',
    '--setenv', 'LANG', 'C.UTF-8',
    '--setenv', 'HOME', WORKDIR,
    '--setenv', 'TMPDIR', WORKDIR,
    // Read-only system: the interpreter and the standard library, without site packages.
    '--ro-bind', '/usr', '/usr',
    ...hidden.flatMap((p) => ['--tmpfs', p, '--remount-ro', p]),
    ...rootLinks(),
    '--dir', '/etc',
    ...Object.keys(fakeEtc()).flatMap((name) => ['--ro-bind', `${hostDir}/etc/${name}`, `/etc/${name}`]),
    ...HOST_ETC.flatMap((name) => ['--ro-bind-try', `/etc/${name}`, `/etc/${name}`]),
    '--proc', '/proc',
    // A minimal /dev (null, zero, random, urandom, tty, pts), read-only but for a bounded /dev/shm
    // (POSIX shared memory and semaphores, which multiprocessing uses).
    '--dev', '/dev',
    '--remount-ro', '/dev',
    '--size', String(limits.diskMb * mib), '--tmpfs', '/dev/shm',
    // The working folder: fresh, size-limited, gone with the mount namespace.
    '--size', String(limits.diskMb * mib), '--tmpfs', WORKDIR,
    '--ro-bind', `${hostDir}/main.py`, `${WORKDIR}/main.py`,
    '--chdir', WORKDIR,
    '--remount-ro', '/',
  ];
  return {
    file: TOOLS.prlimit,
    args: [...rlimits, '--', TOOLS.setpriv, '--pdeathsig', 'KILL', '--', TOOLS.unshare, '--pid', '--fork', '--kill-child', '--', TOOLS.setpriv, ...drop, '--', TOOLS.bwrap, ...bwrap, '--', TOOLS.python, '-I', 'main.py'],
  };
}
