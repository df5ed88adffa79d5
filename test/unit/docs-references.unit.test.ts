// The reference's docs and scripts named configs that did not exist (at-grpo-facts.md, defect 5).
// Every project path the docs name (configs, scripts, sources) must exist, and every `npm run X`
// they tell users to type must be a script of package.json.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const DOCS = ['README.md', 'bench/README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
const PATH = /\b(?:configs|infra|bench|services|workflows|activities|domain|envs|policy|test)\/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.(?:yaml|ts|py|sh|md|json)\b/g;

test('every file path the docs name exists', () => {
  const missing: string[] = [];
  for (const doc of DOCS) {
    for (const path of readFileSync(doc, 'utf8').match(PATH) ?? []) if (!existsSync(path)) missing.push(`${doc}: ${path}`);
  }
  assert.deepEqual(missing, []);
});

test('every `npm run` script the docs name is defined', () => {
  const scripts = Object.keys(JSON.parse(readFileSync('package.json', 'utf8')).scripts);
  const missing: string[] = [];
  for (const doc of DOCS) {
    for (const [, name] of readFileSync(doc, 'utf8').matchAll(/npm run ([\w:-]+)/g)) if (!scripts.includes(name)) missing.push(`${doc}: npm run ${name}`);
  }
  assert.deepEqual(missing, []);
});

test("ARCHITECTURE's table of where things live names every source folder, and every folder of services/", () => {
  const doc = readFileSync('docs/ARCHITECTURE.md', 'utf8');
  const table = doc.slice(doc.indexOf('## Where things live'), doc.indexOf('\n## ', doc.indexOf('## Where things live') + 5));
  const rows = [...table.matchAll(/^\| `([^`]+)\/`/gm)].map((m) => m[1]);
  const sources = readdirSync('.', { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('.') && d.name !== 'node_modules')
    .filter((d) => readdirSync(d.name, { recursive: true, encoding: 'utf8' }).some((f) => /\.(ts|py|sh)$/.test(f)))
    .map((d) => d.name);
  assert.ok(sources.includes('policy') && sources.includes('workflows'), sources.join(', '));
  assert.deepEqual(sources.filter((d) => !rows.includes(d)), [], 'a source folder the table does not name');
  const services = readdirSync('services', { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  const servicesRow = table.split('\n').find((l) => l.startsWith('| `services/`')) ?? '';
  assert.deepEqual(services.filter((d) => !servicesRow.includes(`\`${d}/\``)), [], 'a folder of services/ its row does not name');
});
