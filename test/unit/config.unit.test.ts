import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadRunConfig } from '../../configs/load.js';
import { policiesOf } from '../../policy/spec.js';
import { policyRef } from '../../policy/ref.js';
import { loadSpec } from '../../activities/policy.js';
import type { EngineClient } from '../../infra/engine/client.js';
import { checkRunConfig } from '../../configs/check.js';
import { tandemThroughSlowPipes } from '../support/slowPipes.js';

const SKELETON = 'configs/planpath/planpath_L1_prompt.yaml';

test('the skeleton config is valid and normalised with defaults', () => {
  const r = loadRunConfig(SKELETON);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.issues));
  assert.equal(r.config.algorithm, 'at_grpo');
  assert.equal(r.config.training.train_sample_num, 4);
  assert.equal(r.config.agent_policy_configs.agent_configs.agent_0.train_llm_config.top_k, -1); // default filled in
  assert.deepEqual(policiesOf(r.config), [
    {
      name: 'shared_model',
      kind: 'full',
      base: 'shared_model',
      modelPath: '.tools/models/tandem-tiny',
      agents: ['tool_call_agent', 'plan_agent'],
      taskQueue: 'tandem-policy-0',
      device: 'cpu',
      dtype: 'auto',
    },
  ]);
});

test('placement.<base>.dtype reaches the policy spec; another value is named by its path', () => {
  const r = loadRunConfig(SKELETON, ['placement.shared_model.dtype=bfloat16']);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.issues));
  assert.equal(policiesOf(r.config)[0].dtype, 'bfloat16');
  const bad = loadRunConfig(SKELETON, ['placement.shared_model.dtype=half']);
  assert.ok(!bad.ok);
  assert.deepEqual(bad.issues.map((i) => i.path), ['placement.shared_model.dtype']);
  // The engine is sent it; a spec recorded before the field sends the dtype the engine chose then.
  const spec = policiesOf(r.config)[0];
  const deps = { engine: {} as EngineClient, device: 'cpu', dataDir: '/data' };
  const ref = policyRef('run-1', spec, r.config);
  assert.equal(loadSpec(deps, ref).dtype, 'bfloat16');
  const { dtype: _, ...recorded } = spec;
  assert.equal(loadSpec(deps, { ...ref, spec: recorded }).dtype, 'float32');
  assert.equal(loadSpec({ ...deps, device: 'cuda:0' }, { ...ref, spec: { ...recorded, device: 'cuda' } }).dtype, 'bfloat16');
});

test('dotted overrides are applied and typed as YAML', () => {
  const r = loadRunConfig(SKELETON, ['training.train_sample_num=8', 'rollout.if_greedy=false', 'env.map_size=6']);
  assert.ok(r.ok);
  assert.equal(r.config.training.train_sample_num, 8);
  assert.equal(r.config.rollout.if_greedy, false);
  assert.equal(r.config.env.name === 'plan_path' && r.config.env.map_size, 6);
});

test('every error is reported with its field path, in one pass', () => {
  const r = loadRunConfig(SKELETON, [
    'training.train_sample_num=many', // wrong type
    'env.mapsize=5', // unknown key
    'multi_agent_interaction.turn_order=[tool_call_agent, coder]', // unknown agent
    'agent_policy_configs.agent_configs.agent_1.policy_name=nobody', // unknown policy
  ]);
  assert.ok(!r.ok);
  const paths = r.issues.map((i) => i.path).sort();
  assert.deepEqual(paths, [
    'agent_policy_configs.agent_configs.agent_1.policy_name',
    'env.mapsize',
    'multi_agent_interaction.turn_order[1]',
    'training.train_sample_num',
  ]);
});

test('a malformed override is an error, not an exception', () => {
  const r = loadRunConfig(SKELETON, ['training']);
  assert.ok(!r.ok);
  assert.equal(r.issues[0].path, 'training');
});

test('non-object input is rejected with a root error', () => {
  const r = checkRunConfig(42);
  assert.ok(!r.ok);
  assert.equal(r.issues[0].path, '(root)');
});

test('`tandem config check` prints all three planted errors with paths and exits 1', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'bad.yaml');
  const yaml = execFileSync(process.execPath, ['bin/tandem.js', 'config', 'check', SKELETON], { encoding: 'utf8' });
  writeFileSync(
    file,
    yaml
      .replace('train_sample_num: 4', 'train_sample_num: -4')
      .replace('name: plan_path', 'name: plan_paths')
      .replace('temperature: 1', 'temprature: 1'),
  );
  const r = spawnSync(process.execPath, ['bin/tandem.js', 'config', 'check', file], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /3 error\(s\)/);
  assert.match(r.stderr, /training\.train_sample_num: /);
  assert.match(r.stderr, /env\.name: /);
  assert.match(r.stderr, /agent_policy_configs\.agent_configs\.agent_0\.train_llm_config\.temprature: unknown key/);
});

test('`tandem config check` on a good file prints the normalised YAML and exits 0', () => {
  const r = spawnSync(process.execPath, ['bin/tandem.js', 'config', 'check', SKELETON, 'alpha=0.7'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^alpha: 0.7$/m);
  assert.match(r.stdout, /norm_adv_by_std: true/);
});

test('`tandem config check` loses nothing of a large output to a slow pipe reader', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const yaml = execFileSync(process.execPath, ['bin/tandem.js', 'config', 'check', SKELETON], { encoding: 'utf8' });
  // stdout: a valid config whose --json form is well over the pipe's 64 KiB.
  const longPath = 'models/'.repeat(20_000);
  const big = join(dir, 'big.yaml');
  writeFileSync(big, yaml.replace('path: .tools/models/tandem-tiny', `path: ${longPath}`));
  const ok = tandemThroughSlowPipes(['config', 'check', big, '--json']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.ok(ok.stdout.length > 140_000, `${ok.stdout.length} bytes`);
  assert.equal(JSON.parse(ok.stdout).config.base_models.policy_0.path, longPath);
  // stderr: a config with thousands of unknown keys, each reported on its own line.
  const keys = Array.from({ length: 4000 }, (_, i) => `  unknown_key_${i}: 1`).join('\n');
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, yaml.replace('env:\n', `env:\n${keys}\n`));
  const failed = tandemThroughSlowPipes(['config', 'check', bad]);
  assert.equal(failed.status, 1);
  assert.equal(failed.stdout, '');
  assert.ok(failed.stderr.length > 130_000, `${failed.stderr.length} bytes`);
  assert.match(failed.stderr, /^\S+bad\.yaml: 4000 error\(s\)$/m);
  assert.ok(failed.stderr.endsWith('  env.unknown_key_3999: unknown key\n'), failed.stderr.slice(-80));
  rmSync(dir, { recursive: true, force: true });
});

test('L2: one adapter per agent on the shared frozen base', () => {
  const r = loadRunConfig('configs/planpath/planpath_L2_lora.yaml');
  assert.ok(r.ok, JSON.stringify(!r.ok && r.issues));
  const policies = policiesOf(r.config);
  assert.deepEqual(
    policies.map((p) => [p.name, p.kind, p.base, p.agents]),
    [
      ['tool_call_agent', 'lora', 'base_model', ['tool_call_agent']],
      ['plan_agent', 'lora', 'base_model', ['plan_agent']],
    ],
  );
  assert.deepEqual(policies[0].lora, { rank: 8, alpha: 16, dropout: 0, target_modules: 'all-linear' });
});

test('L3: one full model per agent', () => {
  const r = loadRunConfig('configs/planpath/planpath_L3_model.yaml');
  assert.ok(r.ok, JSON.stringify(!r.ok && r.issues));
  assert.deepEqual(
    policiesOf(r.config).map((p) => [p.name, p.kind, p.agents]),
    [
      ['tool_model', 'full', ['tool_call_agent']],
      ['plan_model', 'full', ['plan_agent']],
    ],
  );
});

test('L1 with lora_rank > 0 trains one shared adapter', () => {
  const r = loadRunConfig(SKELETON, ['lora_rank=4', 'lora_alpha=8']);
  assert.ok(r.ok);
  const [p] = policiesOf(r.config);
  assert.equal(p.kind, 'lora');
  assert.deepEqual(p.agents, ['tool_call_agent', 'plan_agent']);
});

test('a mix: one agent on an adapter, the other on its own full model', () => {
  const r = loadRunConfig('configs/planpath/planpath_L3_model.yaml', [
    'agent_policy_configs.agent_configs.agent_0.specialization=lora',
    'lora_rank=4',
    'lora_alpha=8',
  ]);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.issues));
  assert.deepEqual(
    policiesOf(r.config).map((p) => [p.name, p.kind, p.base]),
    [
      ['tool_call_agent', 'lora', 'tool_model'],
      ['plan_model', 'full', 'plan_model'],
    ],
  );
});

test('LoRA without a rank, and a base both adapted and fully trained, are errors with paths', () => {
  const noRank = loadRunConfig('configs/planpath/planpath_L2_lora.yaml', ['lora_rank=0']);
  assert.ok(!noRank.ok);
  assert.deepEqual(noRank.issues.map((i) => i.path), ['lora_rank']);
  const clash = loadRunConfig('configs/planpath/planpath_L2_lora.yaml', ['agent_policy_configs.agent_configs.agent_1.specialization=full']);
  assert.ok(!clash.ok);
  assert.deepEqual(clash.issues.map((i) => i.path), ['agent_policy_configs.agent_configs.agent_1.specialization']);
  assert.match(clash.issues[0].message, /carries LoRA adapters \(agents tool_call_agent\)/);
});

test('agents must play roles the environment defines', () => {
  const r = loadRunConfig(SKELETON, ['agent_policy_configs.agent_configs.agent_1.name=planner', 'multi_agent_interaction.turn_order=[tool_call_agent, planner]']);
  assert.ok(!r.ok);
  assert.deepEqual(r.issues.map((i) => i.path), ['agent_policy_configs.agent_configs.agent_1.name']);
  assert.match(r.issues[0].message, /not a role of plan_path \(roles: tool_call_agent, plan_agent\)/);
});

test('every shipped config passes the check, one per environment and level', () => {
  const envs = ['planpath', 'sokoban', 'sudoku', 'math', 'mathrefine', 'code', 'hanabi'];
  const levels = ['L0_single_agent', 'L1_prompt', 'L2_lora', 'L3_model'];
  for (const env of envs) {
    for (const level of levels) {
      const file = `configs/${env}/${env}_${level}.yaml`;
      const r = loadRunConfig(file);
      assert.ok(r.ok, `${file}: ${JSON.stringify(!r.ok && r.issues)}`);
    }
  }
});

test('the real-model configs (configs/smollm2/) pass the check and point at the converted SmolLM2 folder', () => {
  const files = readdirSync('configs/smollm2').filter((f) => f.endsWith('.yaml')).sort();
  assert.deepEqual(files, ['math_L0_single_agent.yaml', 'math_L1_prompt.yaml', 'math_L2_lora.yaml', 'planpath_L1_prompt.yaml', 'planpath_L2_lora.yaml']);
  for (const f of files) {
    const r = loadRunConfig(`configs/smollm2/${f}`);
    assert.ok(r.ok, `${f}: ${JSON.stringify(!r.ok && r.issues)}`);
    assert.deepEqual(Object.values(r.config.base_models).map((m) => m.path), ['.tools/models/smollm2-135m-instruct'], f);
  }
});

test("max_prompt_length + max_response_length beyond a base model's context is an error naming both keys", () => {
  const over = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', ['training.max_prompt_length=2016', 'training.max_response_length=48']);
  assert.equal(over.ok, false);
  assert.deepEqual(!over.ok && over.issues.map((i) => i.path), ['training.max_prompt_length']);
  assert.match(
    !over.ok ? over.issues[0].message : '',
    /^training\.max_prompt_length \(2016\) \+ training\.max_response_length \(48\) = 2064 tokens, more than the 2048 of base_models\.policy_0 \(\.tools\/models\/tandem-tiny: max_position_embeddings\)$/,
  );
  assert.ok(loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', ['training.max_prompt_length=2000', 'training.max_response_length=48']).ok);
  // SmolLM2's context is 8,192 tokens; a .gguf file or a missing folder is not read here.
  assert.ok(loadRunConfig('configs/smollm2/math_L1_prompt.yaml', ['training.max_prompt_length=4096', 'training.max_response_length=4096']).ok);
  assert.equal(loadRunConfig('configs/smollm2/math_L1_prompt.yaml', ['training.max_prompt_length=4096', 'training.max_response_length=4097']).ok, false);
  assert.ok(loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', ['base_models.policy_0.path=/no/such/model', 'training.max_prompt_length=9000']).ok);
});

test("training.truncation is keep_system (the reference's rollout), left or error, named by path when wrong", () => {
  const ok = loadRunConfig(SKELETON);
  assert.equal(ok.ok && ok.config.training.truncation, 'keep_system');
  assert.equal(loadRunConfig(SKELETON, ['training.truncation=error']).ok, true);
  const bad = loadRunConfig(SKELETON, ['training.truncation=right']);
  assert.deepEqual(!bad.ok && bad.issues.map((i) => i.path), ['training.truncation']);
});

test('repetition_penalty: 1.0 (off) by default, 1.2 as the reference sets it, > 0 named by path', () => {
  const agent = 'agent_policy_configs.agent_configs.agent_0';
  const ok = loadRunConfig(SKELETON);
  assert.equal(ok.ok && ok.config.agent_policy_configs.agent_configs.agent_0.train_llm_config.repetition_penalty, 1.0);
  assert.equal(ok.ok && ok.config.agent_policy_configs.agent_configs.agent_0.val_llm_config.repetition_penalty, 1.0);
  const set = loadRunConfig(SKELETON, [`${agent}.val_llm_config.repetition_penalty=1.2`]);
  assert.equal(set.ok && set.config.agent_policy_configs.agent_configs.agent_0.val_llm_config.repetition_penalty, 1.2);
  const bad = loadRunConfig(SKELETON, [`${agent}.train_llm_config.repetition_penalty=0`]);
  assert.deepEqual(!bad.ok && bad.issues.map((i) => i.path), [`${agent}.train_llm_config.repetition_penalty`]);
});

test('update.group_filter: none by default; mean and std with a ratio below 1; a bad one named by path', () => {
  const ok = loadRunConfig(SKELETON);
  assert.deepEqual(ok.ok && ok.config.update.group_filter, { method: 'none', ratio: 0.5 });
  const set = loadRunConfig(SKELETON, ['update.group_filter={method: std, ratio: 0.25}']);
  assert.deepEqual(set.ok && set.config.update.group_filter, { method: 'std', ratio: 0.25 });
  const bad = loadRunConfig(SKELETON, ['update.group_filter.method=median', 'update.group_filter.ratio=1']);
  assert.deepEqual(!bad.ok && bad.issues.map((i) => i.path), ['update.group_filter.method', 'update.group_filter.ratio']);
  assert.match(JSON.stringify(!bad.ok && bad.issues), /drops every group/);
});

test('checkpoints: all kept by default; keep_last and keep_every checked and named by path', () => {
  const ok = loadRunConfig(SKELETON);
  assert.deepEqual(ok.ok && ok.config.checkpoints, { keep_last: null, keep_every: null });
  const set = loadRunConfig(SKELETON, ['checkpoints.keep_last=2', 'checkpoints.keep_every=10']);
  assert.deepEqual(set.ok && set.config.checkpoints, { keep_last: 2, keep_every: 10 });
  for (const [overrides, path, message] of [
    [['checkpoints.keep_last=0'], 'checkpoints.keep_last', />=1/],
    [['checkpoints.keep_last=1', 'checkpoints.keep_every=0'], 'checkpoints.keep_every', />=1/],
    [['checkpoints.keep_every=10'], 'checkpoints.keep_every', /keeps nothing extra while checkpoints\.keep_last is null/],
  ] as const) {
    const bad = loadRunConfig(SKELETON, [...overrides]);
    assert.deepEqual(!bad.ok && bad.issues.map((i) => i.path), [path], overrides.join(' '));
    assert.match(!bad.ok ? bad.issues[0].message : '', message);
  }
});

test('rollout.max_staleness: 0 by default; N >= 1 needs update.behaviour_weight_cap (decoupled PPO), named by path; negative or fractional refused', () => {
  const file = 'configs/planpath/planpath_L1_prompt.yaml';
  const plain = loadRunConfig(file);
  assert.ok(plain.ok);
  assert.equal(plain.config.rollout.max_staleness, 0);
  assert.equal(plain.config.update.behaviour_weight_cap, null);
  const uncorrected = loadRunConfig(file, ['rollout.max_staleness=1']);
  assert.ok(!uncorrected.ok);
  assert.deepEqual(uncorrected.issues.map((i) => i.path), ['update.behaviour_weight_cap']);
  assert.match(uncorrected.issues[0].message, /required with rollout\.max_staleness 1/);
  const ok = loadRunConfig(file, ['rollout.max_staleness=2', 'update.behaviour_weight_cap=2']);
  assert.ok(ok.ok);
  assert.equal(ok.config.rollout.max_staleness, 2);
  for (const bad of [['rollout.max_staleness=-1', 'rollout.max_staleness'], ['rollout.max_staleness=0.5', 'rollout.max_staleness'], ['update.behaviour_weight_cap=0.5', 'update.behaviour_weight_cap']]) {
    const r = loadRunConfig(file, [bad[0]]);
    assert.ok(!r.ok, bad[0]);
    assert.deepEqual(r.issues.map((i) => i.path), [bad[1]]);
  }
});

test('configs that cannot learn are refused, naming the key', () => {
  const file = 'configs/planpath/planpath_L1_prompt.yaml';
  for (const algorithm of ['at_grpo', 'grpo']) {
    const one = loadRunConfig(file, ['training.train_sample_num=1', `algorithm=${algorithm}`]);
    assert.ok(!one.ok);
    assert.deepEqual(one.issues.map((i) => i.path), ['training.train_sample_num']);
    assert.match(one.issues[0].message, /advantage is always 0/);
  }
  assert.ok(loadRunConfig(file, ['training.train_sample_num=1', 'update.allow_singleton_groups=true']).ok);
  const lr = loadRunConfig(file, ['update.lr=0']);
  assert.ok(!lr.ok);
  assert.deepEqual(lr.issues.map((i) => i.path), ['update.lr']);
  assert.match(lr.issues[0].message, /learns nothing/);
  const scripted = loadRunConfig(file, ['base_models.policy_0.scripted=true']);
  assert.ok(!scripted.ok);
  assert.deepEqual(scripted.issues.map((i) => i.path), ['base_models']);
  assert.match(scripted.issues[0].message, /every policy is scripted \(base_models\.policy_0\.scripted\): there is no model to train/);
  assert.ok(loadRunConfig(file, ['base_models.policy_0.scripted=true', 'update.allow_no_trainable_policy=true']).ok);
  assert.ok(loadRunConfig('configs/hanabi/hanabi_L0_single_agent.yaml').ok, 'a scripted partner beside a model is fine');
});

test('recovery: 30 s heartbeat timeout and retries from 1 s up to 30 s by default; bad values named by path', () => {
  const ok = loadRunConfig(SKELETON);
  assert.deepEqual(ok.ok && ok.config.recovery, { heartbeat_timeout_s: 30, retry_initial_interval_s: 1, retry_max_interval_s: 30 });
  const bad = loadRunConfig(SKELETON, ['recovery.heartbeat_timeout_s=0', 'recovery.retry_initial_interval_s=10', 'recovery.retry_max_interval_s=5']);
  assert.deepEqual(!bad.ok && bad.issues.map((i) => i.path).sort(), ['recovery.heartbeat_timeout_s', 'recovery.retry_max_interval_s'].sort());
});
