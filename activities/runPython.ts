// Runs a model-written Python program in a child process with a wall-clock limit and an
// output cap, in a fresh temporary folder that is removed afterwards. (The hardened sandbox,
// with memory, process and network limits, replaces this in a later issue.)
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PythonResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const OUTPUT_CAP = 64 * 1024;

export async function runPython(code: string, timeoutMs: number): Promise<PythonResult> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-py-'));
  try {
    await writeFile(join(dir, 'main.py'), code);
    return await new Promise<PythonResult>((resolve) => {
      const child = spawn('python3', ['-I', 'main.py'], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outBytes = 0;
      let errBytes = 0;
      let timedOut = false;
      const killGroup = () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      };
      const timer = setTimeout(() => ((timedOut = true), killGroup()), timeoutMs);
      child.stdout.on('data', (b: Buffer) => {
        if (outBytes < OUTPUT_CAP) out.push(b);
        outBytes += b.length;
        if (outBytes > OUTPUT_CAP * 4) killGroup();
      });
      child.stderr.on('data', (b: Buffer) => {
        if (errBytes < OUTPUT_CAP) err.push(b);
        errBytes += b.length;
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        killGroup(); // nothing the program started outlives it
        resolve({
          exitCode: code,
          stdout: Buffer.concat(out).subarray(0, OUTPUT_CAP).toString('utf8'),
          stderr: Buffer.concat(err).subarray(0, OUTPUT_CAP).toString('utf8'),
          timedOut,
        });
      });
      child.on('error', (e) => {
        clearTimeout(timer);
        resolve({ exitCode: null, stdout: '', stderr: String(e), timedOut: false });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
