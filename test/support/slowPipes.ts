// Running the real CLI as `tandem ... | (sleep; cat)` would: stdout and stderr each go into an OS
// pipe (64 KiB of kernel buffer) whose reader starts reading only after a delay, so a CLI that exits
// before its output has drained loses the rest. (Node's own `stdio: 'pipe'` is a socket pair with
// a larger buffer and a reader that starts at once; it would hide the loss.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../infra/settings.js';

// fd 3 carries the CLI's stdout past the inner pipe, which takes its stderr.
const SCRIPT = `{ { "$TANDEM_NODE" bin/tandem.js "$@"; echo $? > "$OUT/status"; } 2>&1 1>&3 | { sleep "$DELAY"; cat > "$OUT/stderr"; }; } 3>&1 | { sleep "$DELAY"; cat; }`;

export interface PipedRun {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/tandem.js ARGS` with stdout and stderr piped to readers that wait DELAY_S seconds first. */
export function tandemThroughSlowPipes(args: string[], delayS = 1.5): PipedRun {
  const out = mkdtempSync(join(tmpdir(), 'tandem-pipes-'));
  try {
    const r = spawnSync('/bin/sh', ['-c', SCRIPT, 'sh', ...args], {
      cwd: projectRoot,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env: { ...process.env, TANDEM_NODE: process.execPath, OUT: out, DELAY: String(delayS) },
    });
    if (r.status !== 0) throw new Error(`the pipeline failed (${r.status ?? r.signal}): ${r.stderr}`);
    return {
      status: Number(readFileSync(join(out, 'status'), 'utf8')),
      stdout: r.stdout,
      stderr: readFileSync(join(out, 'stderr'), 'utf8'),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
