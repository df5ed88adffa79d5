// `tandem sandbox run FILE [--stdin FILE] [--timeout S] [--memory MB]`: runs a Python file in the
// sandbox and prints one JSON object (exit 0 whatever the program did; 2: usage; 1: no sandbox).
// `tandem sandbox check`: checks that the sandbox's isolation works on this machine.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { checkSandbox, DEFAULT_LIMITS, runSandboxed, type SandboxOptions } from '../../activities/sandbox/index.js';
import { positiveInteger, positiveNumber, usageError, type Act } from './args.js';

export function registerSandbox(program: Command, act: Act): void {
  const sandbox = program.command('sandbox').description('the code sandbox the code environments run programs in');
  sandbox
    .command('run')
    .description('run a Python file in the code sandbox; prints the result as one JSON object')
    .argument('<FILE>', 'the Python program')
    .option('--stdin <FILE>', "the program's standard input, from FILE")
    .option('--timeout <S>', `wall-clock limit in seconds (default: ${DEFAULT_LIMITS.timeoutMs / 1000})`, positiveNumber)
    .option('--memory <MB>', `address-space limit per process in MB (default: ${DEFAULT_LIMITS.memoryMb})`, positiveInteger)
    .action(act(run));
  sandbox
    .command('check')
    .description("check that the sandbox's isolation works on this machine")
    .action(act(check));
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

async function check(): Promise<number> {
  await checkSandbox();
  console.log('sandbox: isolation works (user, mount, pid, net namespaces; rlimits; own uid per slot)');
  return 0;
}

async function run(file: string, flags: { stdin?: string; timeout?: number; memory?: number }, cmd: Command): Promise<number> {
  const opts: SandboxOptions = {};
  if (flags.stdin !== undefined) {
    const text = readText(flags.stdin);
    if (text === null) usageError(cmd, `--stdin ${flags.stdin}: cannot read it`);
    opts.stdin = text;
  }
  if (flags.timeout !== undefined) opts.timeoutMs = flags.timeout * 1000;
  if (flags.memory !== undefined) opts.memoryMb = flags.memory;
  const code = readText(file);
  if (code === null) usageError(cmd, `cannot read ${file}`);
  const r = await runSandboxed(code, opts);
  const out = {
    exitCode: r.exitCode,
    stdout: r.stdout,
    stderr: r.stderr,
    stdoutTruncated: r.stdoutTruncated,
    stderrTruncated: r.stderrTruncated,
    timedOut: r.timedOut,
    killedBy: r.killedBy,
    durationMs: r.durationMs,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  return 0;
}
