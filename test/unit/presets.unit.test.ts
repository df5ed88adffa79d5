// Presets (configs/<env>/*.preset.yaml, applied as `@FILE` overrides) and the `*` in dotted
// override paths (configs/load.ts).
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { applyOverride, expandPresets, loadRunConfig } from '../../configs/load.js';
import { projectPath } from '../../infra/settings.js';

const folders = readdirSync(projectPath('configs'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
const presets = folders.flatMap((d) => readdirSync(projectPath(`configs/${d}`)).filter((f) => f.endsWith('.preset.yaml')).map((f) => ({ folder: d, file: `configs/${d}/${f}` })));

test('every config of a folder loads with each of the folder\'s presets', () => {
  assert.deepEqual(presets.map((p) => p.file).sort(), ['configs/planpath/reference.preset.yaml', 'configs/sokoban/reference.preset.yaml', 'configs/sudoku/reference.preset.yaml']);
  for (const { folder, file } of presets) {
    const configs = readdirSync(projectPath(`configs/${folder}`)).filter((f) => f.endsWith('.yaml') && !f.endsWith('.preset.yaml'));
    assert.ok(configs.length >= 3, folder);
    for (const c of configs) {
      const loaded = loadRunConfig(`configs/${folder}/${c}`, [`@${file}`]);
      assert.ok(loaded.ok, `${c} with ${file}: ${JSON.stringify(loaded.ok ? null : loaded.issues)}`);
    }
  }
});

test('the Sokoban reference preset sets what its comments say, for every agent', () => {
  for (const c of ['sokoban_L0_single_agent', 'sokoban_L1_prompt', 'sokoban_L2_lora']) {
    const loaded = loadRunConfig(`configs/sokoban/${c}.yaml`, ['@configs/sokoban/reference.preset.yaml']);
    assert.ok(loaded.ok);
    const cfg = loaded.config;
    assert.equal(cfg.env.name, 'sokoban');
    if (cfg.env.name === 'sokoban') assert.equal(cfg.env.deadlock, 'continue');
    assert.deepEqual(cfg.update.group_filter, { method: 'mean', ratio: 0.5 });
    assert.deepEqual([cfg.update.warmup_steps, cfg.update.min_lr_ratio, cfg.update.warmup_start, cfg.update.weight_decay, cfg.update.ppo_mini_batch_size, cfg.update.dual_clip_c], [10, 0.3, 'min_lr', 0.01, 16, null]);
    const agents = Object.values(cfg.agent_policy_configs.agent_configs);
    assert.ok(agents.length >= 1);
    for (const a of agents) {
      assert.deepEqual([a.train_llm_config.temperature, a.train_llm_config.top_p, a.train_llm_config.top_k, a.train_llm_config.repetition_penalty], [1.5, 0.9, 20, 1.2]);
      assert.deepEqual([a.val_llm_config.temperature, a.val_llm_config.top_p, a.val_llm_config.top_k, a.val_llm_config.repetition_penalty], [0, 0.95, 20, 1.2]);
    }
    // what the preset does not set stays the config's own
    const plain = loadRunConfig(`configs/sokoban/${c}.yaml`);
    assert.ok(plain.ok);
    assert.equal(cfg.update.lr, plain.config.update.lr);
  }
});

test('a later override wins over the preset; a preset is expanded in place', () => {
  const loaded = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', ['@configs/planpath/reference.preset.yaml', 'update.group_filter.method=std']);
  assert.ok(loaded.ok);
  assert.deepEqual(loaded.config.update.group_filter, { method: 'std', ratio: 0.5 });
  assert.equal(loaded.config.env.max_turns, 5);
  const { overrides, issues } = expandPresets(['a=1', '@configs/planpath/reference.preset.yaml', 'b=2']);
  assert.deepEqual(issues, []);
  assert.equal(overrides[0], 'a=1');
  assert.equal(overrides[1], 'env.max_turns=5');
  assert.equal(overrides.at(-1), 'b=2');
});

test('`*` sets the key in every entry of a mapping, and names what it cannot', () => {
  const t = { agents: { a: { s: { x: 1 } }, b: { s: {} } }, empty: {}, leaf: { a: 3 } };
  assert.equal(applyOverride(t, 'agents.*.s.x=5'), null);
  assert.deepEqual(t.agents, { a: { s: { x: 5 } }, b: { s: { x: 5 } } });
  assert.deepEqual(applyOverride(t, 'empty.*.x=1'), { path: 'empty.*', message: '* matches nothing: empty is empty' });
  assert.deepEqual(applyOverride(t, 'leaf.*.x=1'), { path: 'leaf.a', message: 'cannot set a key inside it: not a mapping' });
  assert.deepEqual(applyOverride(t, 'agents.*=1'), { path: 'agents.*', message: '* must be followed by a key' });
});

test('a bad preset is reported under its own name', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-preset-'));
  try {
    const notList = join(dir, 'bad.preset.yaml');
    writeFileSync(notList, 'overrides: {a: 1}\n');
    const nested = join(dir, 'nested.preset.yaml');
    writeFileSync(nested, 'overrides: ["@configs/planpath/reference.preset.yaml"]\n');
    for (const file of [notList, nested]) {
      const r = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [`@${file}`]);
      assert.ok(!r.ok);
      assert.deepEqual(r.issues[0], { path: `@${file}`, message: 'a preset file holds `overrides:`, a list of key.path=value strings' });
    }
    const missing = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [`@${join(dir, 'none.yaml')}`]);
    assert.ok(!missing.ok && missing.issues[0].path === `@${join(dir, 'none.yaml')}` && /ENOENT/.test(missing.issues[0].message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
