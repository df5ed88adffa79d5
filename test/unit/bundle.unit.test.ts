// The workflow bundle's preloaded modules (infra/temporal/bundle.ts) are evaluated once and shared,
// deep-frozen, by every workflow of a worker. A module among them (or imported by one) that kept
// state at module scope would leak it from one workflow into another and break determinism, and a
// schema that zod could not use frozen would fail every config check. These tests walk the project
// files the preloaded modules import and check their module scope, and parse a config with the
// schemas frozen as the SDK freezes them.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { PRELOADED_MODULES } from '../../infra/temporal/bundle.js';
import { projectPath, projectRoot } from '../../infra/settings.js';

/** The project's own source files that `roots` import, directly or not (type-only imports excluded). */
function importClosure(roots: string[]): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/^import\s+(?!type\b)[^;]*?from\s+'(\.[^']+)'/gms)) {
      const target = resolve(dirname(file), m[1].replace(/\.js$/, '.ts'));
      if (existsSync(target)) visit(target);
    }
  };
  roots.filter((r) => r.startsWith('/')).forEach(visit);
  return [...seen].sort();
}

const closure = importClosure(PRELOADED_MODULES);

test('the preloaded modules are the config and environment code, not the workflows', () => {
  const names = closure.map((f) => relative(projectRoot, f));
  assert.ok(names.includes('configs/schema.ts') && names.includes('envs/planpath/definition.ts'), names.join(', '));
  assert.ok(!names.some((n) => n.startsWith('workflows/') || n.startsWith('activities/') || n.startsWith('services/')), names.join(', '));
});

test('no preloaded module keeps state at module scope or calls the workflow API', () => {
  const problems: string[] = [];
  for (const file of closure) {
    const name = relative(projectRoot, file);
    const src = readFileSync(file, 'utf8');
    if (/from '@temporalio\/workflow'/.test(src)) problems.push(`${name} imports @temporalio/workflow`);
    for (const m of src.matchAll(/^(?:export\s+)?(let|var)\s+(\w+)/gm)) problems.push(`${name}: module-scope \`${m[1]} ${m[2]}\``);
    // A module-scope Map or Set is a constant table only if nothing in its file writes to it.
    for (const m of src.matchAll(/^(?:export\s+)?const\s+(\w+)[^=\n]*=\s*new\s+(?:Weak)?(?:Map|Set)\b/gm)) {
      if (new RegExp(`\\b${m[1]}\\.(set|add|delete|clear)\\(`).test(src)) problems.push(`${name}: module-scope ${m[1]} is written to`);
    }
  }
  assert.deepEqual(problems, []);
});

test('every config in configs/ parses the same with the schemas deep-frozen as the SDK shares them', async () => {
  const { loadRunConfig } = await import('../../configs/load.js');
  const files = readdirSync(projectPath('configs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.preset.yaml')) // presets: test/unit/presets.unit.test.ts
    .map((f) => `configs/${f}`);
  const before = files.map((f) => loadRunConfig(f, []));
  const bad = (f: string) => loadRunConfig(f, ['training.train_sample_num=0']);
  const badDevice = () => loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', ['placement.shared_model.device=tpu']);
  const badDeviceBefore = badDevice();
  const badBefore = files.map(bad);
  for (const m of PRELOADED_MODULES.filter((p) => p.startsWith('/'))) {
    // (a module namespace cannot be frozen; the SDK freezes webpack's export objects, i.e. the values)
    Object.values(await import(m)).forEach((v) => deepFreeze(v));
  }
  assert.ok(files.length > 10 && before.every((r) => r.ok), files.join(', '));
  assert.deepEqual(files.map((f) => loadRunConfig(f, [])), before);
  const badAfter = files.map(bad);
  assert.deepEqual(badAfter, badBefore);
  assert.ok(badAfter.every((r) => !r.ok && /train_sample_num/.test(JSON.stringify(r.issues))));
  assert.deepEqual(badDevice(), badDeviceBefore);
  assert.match(JSON.stringify(badDeviceBefore), /placement\.shared_model\.device.*expected cpu, cuda or cuda:N/);
});

/** Object.freeze over everything reachable through own properties, as the SDK's deepFreeze. */
function deepFreeze(o: unknown, seen = new WeakSet<object>()): void {
  if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) return;
  seen.add(o);
  for (const k of Reflect.ownKeys(o)) {
    try {
      deepFreeze((o as Record<PropertyKey, unknown>)[k], seen);
    } catch {
      // as the SDK: some values cannot be read or frozen
    }
  }
  try {
    Object.freeze(o);
  } catch {
    // as the SDK (typed arrays)
  }
}
