// How an update's samples reach the engine: as one JSON line (the `samples` field) or as a file
// of flat arrays (`samples_file`, infra/engine/samplesFile.ts), at the reference's shapes: groups of
// K=8 samples sharing a prompt, every prompt and response at its full length (the worst case an
// iteration can reach). Per shape: the bytes, the policy worker's time to encode them (JSON.stringify
// of the request, or writing the file) and the engine's time to read and check them
// (json.loads + the per-sample checks, or read_samples), each in a process of its own.
//   node --import tsx bench/update_samples.ts [SAMPLES:PROMPT:RESPONSE ...]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSamplesFile, type UpdateSample } from '../infra/engine/samplesFile.js';
import { projectPath } from '../infra/settings.js';

const K = 8;
const VOCAB = 151_936; // Qwen3's
const shapes = (process.argv.slice(2).length ? process.argv.slice(2) : ['2048:4096:2048', '2048:4096:8192', '2560:4096:8192']).map((s) => s.split(':').map(Number));

function samplesOf(n: number, promptLength: number, responseLength: number): UpdateSample[] {
  let seed = 1;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const token = () => Math.floor(rand() * VOCAB);
  let prompt: number[] = [];
  return Array.from({ length: n }, (_, i) => {
    if (i % K === 0) prompt = Array.from({ length: promptLength }, token);
    return {
      sample_id: `run/it0/ep${Math.floor(i / 64)}/t${Math.floor(i / 16) % 4}/agent_${Math.floor(i / 8) % 2}/c${i % K}/a1`,
      prompt_ids: prompt,
      response_ids: Array.from({ length: responseLength }, token),
      logprobs: Array.from({ length: responseLength }, () => Math.fround(-rand() * 8)),
      advantage: rand() * 2 - 1,
    };
  });
}

/** The engine's side, in a Python process of its own: the seconds to read and check the samples. */
function engineSide(request: object): string {
  const script = `
import json, sys, time
sys.path.insert(0, ${JSON.stringify(projectPath('services/engine'))})
from tandem_engine.server import update_samples
t0 = time.perf_counter()
with open(sys.argv[1]) as f:
    req = json.loads(f.readline())
n = len(update_samples(req, ${VOCAB}))
print(f"{time.perf_counter() - t0:.2f} s ({n} samples)")`;
  const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-request-'));
  writeFileSync(join(dir, 'req.json'), `${JSON.stringify(request)}\n`);
  const r = spawnSync(projectPath('.venv/bin/python'), ['-c', script, join(dir, 'req.json')], { encoding: 'utf8' });
  rmSync(dir, { recursive: true, force: true });
  return r.status === 0 ? r.stdout.trim() : `failed: ${r.stderr.trim().split('\n').pop()}`;
}

console.log(`machine: ${cpus().length} x ${cpus()[0]?.model}; K=${K}, token ids < ${VOCAB}`);
for (const [n, promptLength, responseLength] of shapes) {
  const samples = samplesOf(n, promptLength, responseLength);
  const label = `${n} samples, prompts ${promptLength}, responses ${responseLength}`;
  // As one JSON line (what the request was before the file).
  let line: string | undefined;
  let t0 = performance.now();
  let json: string;
  try {
    line = JSON.stringify({ id: 1, op: 'update', samples });
    json = `${(line.length / 2 ** 20).toFixed(0)} MiB in ${((performance.now() - t0) / 1000).toFixed(2)} s; engine ${engineSide({ samples })}`;
  } catch (e) {
    json = `${e instanceof Error ? e.message : String(e)} after ${((performance.now() - t0) / 1000).toFixed(2)} s`;
  }
  line = undefined;
  // As a file.
  const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-samples-'));
  const file = join(dir, 'samples.safetensors');
  t0 = performance.now();
  await writeSamplesFile(file, samples);
  const written = (performance.now() - t0) / 1000;
  const asFile = `${(statSync(file).size / 2 ** 20).toFixed(0)} MiB in ${written.toFixed(2)} s; engine ${engineSide({ samples_file: file })}`;
  rmSync(dir, { recursive: true, force: true });
  console.log(`${label}\n  JSON line: ${json}\n  file:      ${asFile}`);
}
