// The `tandem` CLI as a child process, for end-to-end tests.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** Runs the CLI; resolves with its exit code and output (never rejects on a non-zero exit). */
export async function tandem(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', timeout: 600_000 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}
