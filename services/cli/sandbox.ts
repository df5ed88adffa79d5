// `tandem sandbox run FILE [--stdin FILE] [--timeout S] [--memory MB]`: runs a Python file in the
// sandbox and prints one JSON object (exit 0 whatever the program did; 2: usage; 1: no sandbox).
// `tandem sandbox check`: checks that the sandbox's isolation works on this machine.
import { readFileSync } from 'node:fs';
import { checkSandbox, runSandboxed, type SandboxOptions } from '../../activities/sandbox/index.js';

const USAGE = `usage: tandem sandbox run FILE [--stdin FILE] [--timeout S] [--memory MB]
       tandem sandbox check`;

function usage(message?: string): number {
  if (message) console.error(`tandem sandbox: ${message}`);
  console.error(USAGE);
  return 2;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

export async function sandboxCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action === 'check' && rest.length === 0) {
    await checkSandbox();
    console.log('sandbox: isolation works (user, mount, pid, net namespaces; rlimits; own uid per slot)');
    return 0;
  }
  if (action !== 'run') return usage();
  const opts: SandboxOptions = {};
  let file: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '--stdin' || arg === '--timeout' || arg === '--memory') {
      const value = rest[++i];
      if (value === undefined) return usage(`${arg} needs a value`);
      if (arg === '--stdin') {
        const text = readText(value);
        if (text === null) return usage(`cannot read ${value}`);
        opts.stdin = text;
        continue;
      }
      const n = Number(value);
      if (!Number.isFinite(n) || n <= 0) return usage(`${arg} must be a positive number, got ${value}`);
      if (arg === '--timeout') opts.timeoutMs = n * 1000;
      else if (!Number.isInteger(n)) return usage(`--memory must be a whole number of MB, got ${value}`);
      else opts.memoryMb = n;
    } else if (arg.startsWith('-') || file !== undefined) {
      return usage(`unexpected argument ${arg}`);
    } else {
      file = arg;
    }
  }
  if (file === undefined) return usage('FILE is missing');
  const code = readText(file);
  if (code === null) return usage(`cannot read ${file}`);
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
