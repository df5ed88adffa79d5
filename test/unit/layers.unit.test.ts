// The layers' import rules (docs/ARCHITECTURE.md, "Where things live"), read from the sources:
// workflow and domain code imports only pure code (a type from anywhere); policy/ is pure; the CLI
// and the dashboard share the client library (services/client/) and never import each other, but
// for the CLI starting the dashboard's server.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { projectPath, projectRoot } from '../../infra/settings.js';

interface Import {
  file: string;
  /** The imported module: a project path without its extension (e.g. 'infra/settings'), or the package's name. */
  target: string;
  typeOnly: boolean;
}

function sources(dir: string): string[] {
  return readdirSync(projectPath(dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.includes('node_modules'))
    .map((f) => join(dir, f));
}

function importsOf(file: string): Import[] {
  const src = readFileSync(projectPath(file), 'utf8');
  const out: Import[] = [];
  for (const m of src.matchAll(/^(import|export)\s+(type\s+)?([^;]*?)\s+from\s+'([^']+)'/gms)) {
    const spec = m[4];
    const target = spec.startsWith('.') ? relative(projectRoot, join(dirname(projectPath(file)), spec)).replace(/\.(js|ts)$/, '') : spec;
    // `import { type A, type B }` is type-only too
    const names = m[3].replace(/^\{|\}$/g, '').split(',').map((n) => n.trim()).filter(Boolean);
    const typeOnly = m[2] !== undefined || (m[3].startsWith('{') && names.every((n) => n.startsWith('type ')));
    out.push({ file, target, typeOnly });
  }
  return out;
}

const all = ['workflows', 'domain', 'policy', 'services', 'activities', 'envs', 'configs'].flatMap(sources).flatMap(importsOf);
const broken = (ok: (i: Import) => boolean) => all.filter((i) => !ok(i)).map((i) => `${i.file} imports ${i.target}${i.typeOnly ? ' (types)' : ''}`);
const under = (i: Import, ...dirs: string[]) => dirs.some((d) => i.file.startsWith(`${d}/`));
const to = (i: Import, ...dirs: string[]) => dirs.some((d) => i.target === d || i.target.startsWith(`${d}/`));

test('workflow and domain code imports only pure code: no activity, infra, service or node module (types excepted)', () => {
  assert.ok(all.some((i) => under(i, 'workflows') && to(i, 'policy/spec')), 'the scan sees the workflows');
  assert.deepEqual(broken((i) => !under(i, 'workflows', 'domain') || i.typeOnly || !(to(i, 'activities', 'infra', 'services', 'bench') || i.target.startsWith('node:'))), []);
});

test('policy/ is pure: what an engine does with a policy lives in activities/policy.ts', () => {
  assert.deepEqual(broken((i) => !under(i, 'policy') || !(to(i, 'activities', 'infra', 'services') || i.target.startsWith('node:') || i.target.startsWith('@temporalio/activity'))), []);
});

test('the CLI and the dashboard share services/client/ and do not import each other (the CLI starts the dashboard\'s server)', () => {
  assert.deepEqual(broken((i) => !under(i, 'services/dashboard') || !to(i, 'services/cli')), []);
  assert.deepEqual(broken((i) => !under(i, 'services/cli') || !to(i, 'services/dashboard') || i.target === 'services/dashboard/server'), []);
  assert.deepEqual(broken((i) => !under(i, 'services/client') || !to(i, 'services/cli', 'services/dashboard')), []);
  assert.ok(all.some((i) => under(i, 'services/dashboard') && to(i, 'services/client')), 'the dashboard uses the client library');
});
