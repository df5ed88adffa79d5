// The reference's docs and scripts named configs that did not exist (at-grpo-facts.md, defect 5).
// Every project path the docs name (configs, scripts, sources) must exist, and every `npm run X`
// they tell users to type must be a script of package.json.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const DOCS = ['README.md', 'bench/README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
const PATH = /\b(?:configs|infra|bench|services|workflows|activities|domain|envs|test)\/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.(?:yaml|ts|py|sh|md|json)\b/g;

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
