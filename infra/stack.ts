// The local stack: Temporal dev server, single-node KRaft Kafka, a private Postgres cluster,
// and Tandem's own processes (CPU worker, policy worker, projector), each a background
// process with its pid file and log under the data folder:
//   <data>/run/<name>.pid   <data>/logs/<name>.log   <data>/<name>/ (its data)
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_RECORD_BYTES, projectPath, READY_LINE, readyIn, stackSettings, type StackSettings } from './settings.js';
import { acceptsQueries, applyMigrations, ensureDatabase } from './db/migrate.js';
import { ensureTopics } from './kafka/topics.js';

interface Launch {
  cmd: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Run as this system user (Postgres refuses to run as root). */
  user?: { uid: number; gid: number };
}

interface Service {
  name: string;
  /** What `status` shows as the address. */
  port?: number;
  /** A piece of /proc/<pid>/cmdline that proves a pid from the pid file is still ours. */
  marker: string;
  prepare?(): void;
  launch(): Launch;
  /** True once the service serves; `logFrom` is the log size before this start, `pid` its process. */
  ready(logFrom: number, pid: number): Promise<boolean>;
  /** Runs once the service is ready (topics, migrations). */
  afterReady?(): Promise<void>;
}

function services(s: StackSettings): Service[] {
  const tsService = (name: string, script: string, args: string[] = [], port?: number): Service => ({
    name,
    port,
    marker: script,
    launch: () => ({ cmd: process.execPath, args: ['--import', 'tsx', projectPath(script), ...args] }),
    ready: async (logFrom, pid) => readyIn(readLog(s, name, logFrom), pid),
  });
  return [
    postgresService(s),
    kafkaService(s),
    temporalService(s),
    tsService('projector', 'services/projector.ts'),
    tsService('cpu-worker', 'services/cpu-worker.ts', [], s.cpuWorkerMetricsPort),
    tsService('policy-worker', 'services/policy-worker.ts', [
      '--task-queue', s.policyQueue,
      '--device', s.policyDevice,
      ...s.policyModels.flatMap((m) => ['--model', m]),
    ], s.policyWorkerMetricsPort),
  ];
}

/**
 * The dev server's dynamic config that Tandem sets. The dev server keeps every workflow in one
 * history shard, whose transfer queue (a scheduled activity or workflow task on its way to its
 * task queue, a child's start or end on its way to its parent) Temporal reads at most 20 times a
 * second per shard by default: under load a task waited up to 50 ms for the next read, at every
 * hop of every agent turn, and a parent 50 ms for each child's end (bench/notes/rollout.md, "The
 * dev server's transfer queue"). A cluster with hundreds of shards spreads its workflows over as many
 * readers.
 */
export const TEMPORAL_DYNAMIC_CONFIG: Readonly<Record<string, string>> = {
  'history.transferProcessorMaxPollRPS': '1000',
};

/**
 * The dev server's `--dynamic-config-value` arguments: Tandem's values, then those of `extra`
 * (TANDEM_TEMPORAL_DYNAMIC_CONFIG: comma-separated `key=value`, e.g.
 * "limit.historyCount.suggestContinueAsNew=50"), which override Tandem's for the same key.
 */
export function temporalDynamicConfigArgs(extra = ''): string[] {
  const values = new Map(Object.entries(TEMPORAL_DYNAMIC_CONFIG));
  for (const entry of extra.split(',').map((e) => e.trim()).filter(Boolean)) {
    const eq = entry.indexOf('=');
    if (eq <= 0 || eq === entry.length - 1) throw new Error(`TANDEM_TEMPORAL_DYNAMIC_CONFIG: "${entry}" is not key=value`);
    values.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return [...values].flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${value}`]);
}

function temporalService(s: StackSettings): Service {
  const dir = join(s.dataDir, 'temporal');
  return {
    name: 'temporal',
    port: s.temporalPort,
    marker: 'start-dev',
    prepare: () => mkdirSync(dir, { recursive: true }),
    launch: () => ({
      cmd: projectPath('.venv/bin/temporal'),
      args: [
        'server', 'start-dev',
        '--db-filename', join(dir, 'temporal.db'),
        // A write-ahead log, synced at checkpoints rather than at every commit: a killed server
        // loses no committed transaction (the log is replayed on open); only an OS crash or a
        // power cut can lose the last ones. SQLite's default syncs a rollback journal per commit.
        '--sqlite-pragma', 'journal_mode=wal',
        '--sqlite-pragma', 'synchronous=normal',
        '--ip', '127.0.0.1',
        '--port', String(s.temporalPort),
        '--ui-port', String(s.temporalUiPort),
        '--namespace', s.namespace,
        '--log-level', 'warn',
        ...temporalDynamicConfigArgs(process.env.TANDEM_TEMPORAL_DYNAMIC_CONFIG),
      ],
    }),
    ready: async () => (await portOpen(s.temporalPort)) && (await portOpen(s.temporalUiPort)),
  };
}

function kafkaService(s: StackSettings): Service {
  const dir = join(s.dataDir, 'kafka');
  const props = join(dir, 'server.properties');
  const classpath = projectPath('.tools/kafka/libs/*');
  return {
    name: 'kafka',
    port: s.kafkaPort,
    marker: 'kafka.Kafka',
    prepare: () => {
      mkdirSync(join(dir, 'log'), { recursive: true });
      writeFileSync(props, kafkaProperties(s, join(dir, 'log')));
      if (!existsSync(join(dir, 'log', 'meta.properties'))) {
        const java = (...args: string[]) =>
          execFileSync('java', ['-cp', classpath, `-Dlog4j.configuration=file:${projectPath('infra/kafka/log4j.properties')}`, ...args], {
            encoding: 'utf8',
          }).trim();
        const clusterId = java('kafka.tools.StorageTool', 'random-uuid');
        java('kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', props);
      }
    },
    launch: () => ({
      cmd: 'java',
      args: [
        '-Xms256m', '-Xmx768m',
        '-cp', classpath,
        `-Dlog4j.configuration=file:${projectPath('infra/kafka/log4j.properties')}`,
        'kafka.Kafka', props,
      ],
    }),
    ready: async () => portOpen(s.kafkaPort),
    afterReady: () => ensureTopics(s.kafkaBrokers),
  };
}

/** Single-node KRaft: this node is both broker and controller; every replication factor is 1. */
function kafkaProperties(s: StackSettings, logDir: string): string {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${s.kafkaControllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${s.kafkaPort},CONTROLLER://127.0.0.1:${s.kafkaControllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${s.kafkaPort}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${logDir}`,
    'num.partitions=3',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=3',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    // Records go when every consumer group has read past them (infra/kafka/retention.ts), not by
    // age; and a group's offsets are kept for ten years, not Kafka's 7 days, so that a run paused
    // longer than a week still holds its iteration's records and finds them when it resumes.
    'log.retention.hours=-1',
    'offsets.retention.minutes=5256000',
    // A trim moves a partition's start; the broker removes the segments wholly below it at its next
    // retention check (Kafka's default: every 5 minutes).
    'log.retention.check.interval.ms=60000',
    `message.max.bytes=${MAX_RECORD_BYTES}`,
    '',
  ].join('\n');
}

function postgresBin(tool: string): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => /^\d+$/.test(v)).sort((a, b) => +b - +a) : [];
  if (versions.length === 0) throw new Error('PostgreSQL is not installed: run `npm run setup`');
  return join(base, versions[0], 'bin', tool);
}

/** Postgres will not run as root; when we are root it runs as the Debian `postgres` user. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function postgresService(s: StackSettings): Service {
  const dir = join(s.dataDir, 'postgres');
  const user = postgresUser();
  return {
    name: 'postgres',
    port: s.pgPort,
    marker: 'postgres',
    prepare: () => {
      if (existsSync(join(dir, 'PG_VERSION'))) return;
      mkdirSync(dir, { recursive: true });
      if (user) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, dir]);
      try {
        execFileSync(postgresBin('initdb'), ['-D', dir, '-U', 'tandem', '--auth=trust', '-E', 'UTF8', '--no-instructions'], {
          stdio: ['ignore', 'ignore', 'pipe'],
          encoding: 'utf8',
          ...(user ?? {}),
        });
      } catch (err) {
        // initdb's own words (e.g. a data folder under a parent the postgres user cannot enter).
        const said = String((err as { stderr?: string }).stderr ?? '').trim();
        const who = user ? ' (run as the postgres user, which must be able to enter every folder above it)' : '';
        throw new Error(`postgres: initdb failed for the data folder ${dir}${who}${said ? `:\n${said}` : ''}`);
      }
    },
    launch: () => ({
      cmd: postgresBin('postgres'),
      args: ['-D', dir, '-p', String(s.pgPort), '-k', dir, '-c', 'listen_addresses=127.0.0.1'],
      user,
    }),
    ready: async () => (await portOpen(s.pgPort)) && acceptsQueries(s.databaseUrl),
    afterReady: async () => {
      await ensureDatabase(s.databaseUrl);
      await applyMigrations(s.databaseUrl);
    },
  };
}

// ---------------------------------------------------------------- process bookkeeping

const pidFile = (s: StackSettings, name: string) => join(s.dataDir, 'run', `${name}.pid`);
const logFile = (s: StackSettings, name: string) => join(s.dataDir, 'logs', `${name}.log`);

function readLog(s: StackSettings, name: string, from: number): string {
  try {
    return readFileSync(logFile(s, name)).subarray(from).toString('utf8');
  } catch {
    return '';
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

type PidState = { state: 'running'; pid: number } | { state: 'stale'; pid: number } | { state: 'stopped' };

/** Reads the pid file; a pid that is dead or now belongs to another program is stale. */
function pidState(s: StackSettings, svc: Service): PidState {
  const file = pidFile(s, svc.name);
  if (!existsSync(file)) return { state: 'stopped' };
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return { state: 'stale', pid: 0 };
  return { state: isService(pid, svc) ? 'running' : 'stale', pid };
}

/** Whether `pid` is alive (not a zombie) and runs the service's program. */
function isService(pid: number, svc: Service): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    return cmdline.includes(svc.marker) && !processEnded(pid);
  } catch {
    return false; // no such process
  }
}

/**
 * Whether `pid` has ended: gone, or a zombie with no thread left. (A process being killed shows
 * its main thread as a zombie while its other threads still exit, its files, ports among them,
 * still open.)
 */
export function processEnded(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z' && readdirSync(`/proc/${pid}/task`).length <= 1;
  } catch {
    return true;
  }
}

/** Sends `sig` to process group `pgid` (0: none, only asks); false when none of it is left. */
function signalGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false; // no process of it is left
  }
}

/** Kills process group `pgid` and waits (10 s at most) until none of it is left. */
async function killGroup(pgid: number): Promise<void> {
  signalGroup(pgid, 'SIGKILL');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && signalGroup(pgid, 0)) await sleep(100);
}

/**
 * The variable every process the stack starts carries, and its children inherit: which service of
 * which data folder it belongs to. It finds a service's processes that no pid file names.
 */
const SERVICE_TAG = 'TANDEM_STACK_SERVICE';
const serviceTag = (s: StackSettings, svc: Service) => `${svc.name}@${s.dataDir}`;

/** The processes that carry `tag` (a zombie's environment reads empty). */
function taggedPids(tag: string): number[] {
  const needle = `\0${SERVICE_TAG}=${tag}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (`\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}\0`.includes(needle)) pids.push(Number(entry));
    } catch {
      // it ended while we looked, or is not ours to read
    }
  }
  return pids;
}

/**
 * Kills the service's processes that its pid file does not name (call it when that one is not
 * running): one whose pid file was lost or overwritten would hold the service's port and make
 * every later start fail, and `stack down` would not stop it.
 */
async function killUntracked(s: StackSettings, svc: Service, say: (line: string) => void): Promise<void> {
  const tag = serviceTag(s, svc);
  const pids = taggedPids(tag);
  if (pids.length === 0) return;
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  const deadline = Date.now() + 10_000;
  while (!pids.every(processEnded) && Date.now() < deadline) await sleep(100);
  say(`${svc.name}: killed ${pids.length === 1 ? 'a process' : `${pids.length} processes`} of it that no pid file named (pid ${pids.join(', ')})`);
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, log: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(250);
  }
  throw new Error(`${what} did not become ready in ${timeoutMs / 1000}s; see ${log}`);
}

async function startService(s: StackSettings, svc: Service, say: (line: string) => void): Promise<void> {
  const current = pidState(s, svc);
  if (current.state === 'running') {
    say(`${svc.name}: already running (pid ${current.pid})`);
    if (svc.afterReady) await svc.afterReady();
    return;
  }
  if (current.state === 'stale') {
    say(`${svc.name}: stale pid ${current.pid} in ${pidFile(s, svc.name)}, starting afresh`);
    rmSync(pidFile(s, svc.name), { force: true });
  }
  await killUntracked(s, svc, say);
  mkdirSync(join(s.dataDir, 'run'), { recursive: true });
  mkdirSync(join(s.dataDir, 'logs'), { recursive: true });
  svc.prepare?.();
  // A service started right after its predecessor was killed can exit at once while the remains of
  // that one linger for a moment (Postgres: a lock file naming a pid not yet reaped); it is tried
  // again, a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchService(s, svc, say);
    } catch (err) {
      if (!(err instanceof ExitedDuringStart) || attempt >= 3) throw err;
      say(`${svc.name}: exited during start; trying again. Its log's last lines:\n${indent(err.logTail)}`);
      await sleep(2000);
    }
  }
}

/** The service's process ended before it was ready; `logTail` is what it wrote to its log meanwhile. */
class ExitedDuringStart extends Error {
  constructor(
    name: string,
    log: string,
    readonly logTail: string,
  ) {
    super(`${name} exited during start; see ${log}. Its last lines:\n${indent(logTail)}`);
  }
}

/** The last `lines` lines of `text` (a service's log since a start), or a note that there were none. */
export function lastLines(text: string, lines = 20): string {
  const all = text.trimEnd().split('\n');
  if (all.length === 1 && all[0] === '') return '(nothing)';
  return all.slice(-lines).join('\n');
}

const indent = (text: string) => text.replace(/^/gm, '  | ');

async function launchService(s: StackSettings, svc: Service, say: (line: string) => void): Promise<void> {
  const { cmd, args, env, user } = svc.launch();
  const log = logFile(s, svc.name);
  const logFrom = existsSync(log) ? statSync(log).size : 0;
  const fd = openSync(log, 'a');
  const child = spawn(cmd, args, {
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, ...env, [SERVICE_TAG]: serviceTag(s, svc) },
    cwd: projectPath('.'),
    ...(user ?? {}),
  });
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${svc.name}: could not start ${cmd}`);
  child.unref();
  writeFileSync(pidFile(s, svc.name), `${pid}\n`);
  await waitFor(
    svc.name,
    async () => {
      if (!isService(pid, svc)) {
        await killGroup(pid); // whatever is left of it, before the pid file names another start
        throw new ExitedDuringStart(svc.name, log, lastLines(readLog(s, svc.name, logFrom)));
      }
      return svc.ready(logFrom, pid);
    },
    120_000,
    log,
  );
  if (svc.afterReady) await svc.afterReady();
  say(`${svc.name}: started (pid ${pid}${svc.port ? `, port ${svc.port}` : ''}), log ${log}`);
}

async function stopService(s: StackSettings, svc: Service, say: (line: string) => void): Promise<void> {
  const current = pidState(s, svc);
  rmSync(pidFile(s, svc.name), { force: true });
  if (current.state === 'running') {
    // Postgres: SIGINT is its "fast" shutdown; everyone else gets SIGTERM.
    signalGroup(current.pid, svc.name === 'postgres' ? 'SIGINT' : 'SIGTERM');
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !processEnded(current.pid)) await sleep(200);
    await killGroup(current.pid); // whatever is left of its group (ended children of ours are reaped at once)
    say(`${svc.name}: stopped`);
  } else if (current.state === 'stale') say(`${svc.name}: stale pid ${current.pid} removed`);
  await killUntracked(s, svc, say);
}

// ---------------------------------------------------------------- the three commands

const INFRA = ['postgres', 'kafka', 'temporal'] as const;

/** Starts the stack; `only` limits it to some services (the tests start infra first). */
export async function stackUp(opts: { only?: readonly string[]; say?: (line: string) => void } = {}): Promise<void> {
  const s = stackSettings();
  const say = opts.say ?? console.log;
  const all = services(s).filter((svc) => !opts.only || opts.only.includes(svc.name));
  const infra = all.filter((svc) => (INFRA as readonly string[]).includes(svc.name));
  const ours = all.filter((svc) => !(INFRA as readonly string[]).includes(svc.name));
  await Promise.all(infra.map((svc) => startService(s, svc, say)));
  for (const svc of ours) await startService(s, svc, say);
}

export async function stackDown(opts: { only?: readonly string[]; say?: (line: string) => void } = {}): Promise<void> {
  const s = stackSettings();
  const say = opts.say ?? console.log;
  const all = services(s).filter((svc) => !opts.only || opts.only.includes(svc.name)).reverse();
  for (const svc of all) await stopService(s, svc, say);
}

export interface ServiceStatus {
  name: string;
  state: 'running' | 'stale' | 'stopped';
  pid?: number;
  /** When it is not running: processes of it that no pid file names (`stack up` and `down` kill them). */
  untracked?: number[];
  port?: number;
  log: string;
}

export function stackStatus(): ServiceStatus[] {
  const s = stackSettings();
  return services(s).map((svc) => {
    const st = pidState(s, svc);
    const untracked = st.state === 'running' ? [] : taggedPids(serviceTag(s, svc));
    return {
      name: svc.name,
      state: st.state,
      pid: st.state === 'stopped' ? undefined : st.pid,
      ...(untracked.length > 0 ? { untracked } : {}),
      port: svc.port,
      log: logFile(s, svc.name),
    };
  });
}

// ---------------------------------------------------------------- a policy worker beside the stack

/** A TCP port free on 127.0.0.1 now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts one more policy worker in the foreground of the caller (a child process), e.g. replica R
 * of the stack's policy worker's queue, and resolves once it serves. Its stderr goes to the
 * caller's unless `quiet`; `env` adds to the caller's environment (its engine's too, e.g.
 * TANDEM_UPDATE_LOCK).
 */
export async function startPolicyWorker(opts: { taskQueue: string; replica: number; device: string; metricsPort: number; quiet?: boolean; env?: Record<string, string> }): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', projectPath('services/policy-worker.ts'),
    '--task-queue', opts.taskQueue, '--replica', String(opts.replica), '--device', opts.device, '--metrics-port', String(opts.metricsPort)], {
    stdio: ['ignore', 'pipe', opts.quiet ? 'ignore' : 'inherit'],
    env: { ...process.env, ...opts.env },
  });
  await new Promise<void>((resolve, reject) => {
    proc.on('exit', (code) => reject(new Error(`policy worker (replica ${opts.replica}) exited (code ${code}) before it was ready`)));
    createInterface({ input: proc.stdout! }).on('line', (line) => line.includes(READY_LINE) && resolve());
  });
  return proc;
}
