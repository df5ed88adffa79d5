// Reading run configs: a YAML file plus dotted `key=value` overrides, validated by the schema.
// An override `@FILE` applies the list of overrides FILE holds (a preset, e.g. the reference's
// settings: configs/<env>/reference.preset.yaml); a `*` in a dotted path sets the key in every entry of
// that mapping (agent_policy_configs.agent_configs.*.train_llm_config.temperature=1.5).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { projectPath } from '../infra/settings.js';
import { checkRunConfig } from './check.js';
import type { ConfigIssue, ParseResult, RunConfig } from './schema.js';

/** Sets `a.b.c=value` on a plain object; the value is read as YAML (numbers, booleans, lists). */
export function applyOverride(target: Record<string, unknown>, override: string): ConfigIssue | null {
  const eq = override.indexOf('=');
  if (eq <= 0) return { path: override, message: 'override must look like key.path=value' };
  return setPath(target, override.slice(0, eq).split('.'), parseYaml(override.slice(eq + 1)), []);
}

function setPath(node: Record<string, unknown>, keys: string[], value: unknown, done: string[]): ConfigIssue | null {
  const [key, ...rest] = keys;
  const at = [...done, key].join('.');
  if (key === '*') {
    const entries = Object.keys(node);
    if (rest.length === 0 || entries.length === 0) return { path: at, message: rest.length === 0 ? '* must be followed by a key' : `* matches nothing: ${done.join('.')} is empty` };
    for (const entry of entries) {
      const child = node[entry];
      if (typeof child !== 'object' || child === null || Array.isArray(child)) return { path: [...done, entry].join('.'), message: 'cannot set a key inside it: not a mapping' };
      const issue = setPath(child as Record<string, unknown>, rest, value, [...done, entry]);
      if (issue) return issue;
    }
    return null;
  }
  if (rest.length === 0) {
    node[key] = value;
    return null;
  }
  const next = node[key];
  if (next === undefined || next === null) node[key] = {};
  else if (typeof next !== 'object' || Array.isArray(next)) return { path: at, message: `cannot set a key inside ${key}, which is not a mapping` };
  return setPath(node[key] as Record<string, unknown>, rest, value, [...done, key]);
}

/**
 * The overrides in order, each `@FILE` replaced by the list FILE holds (its `overrides:` key; the
 * path is relative to the project root). A preset may not name another.
 */
export function expandPresets(overrides: string[]): { overrides: string[]; issues: ConfigIssue[] } {
  const out: string[] = [];
  const issues: ConfigIssue[] = [];
  for (const o of overrides) {
    if (!o.startsWith('@')) {
      out.push(o);
      continue;
    }
    const file = o.slice(1);
    try {
      const doc = parseYaml(readFileSync(projectPath(file), 'utf8')) as { overrides?: unknown } | null;
      const list = doc?.overrides;
      if (!Array.isArray(list) || !list.every((x) => typeof x === 'string' && !x.startsWith('@'))) {
        issues.push({ path: o, message: 'a preset file holds `overrides:`, a list of key.path=value strings' });
      } else out.push(...list);
    } catch (err) {
      issues.push({ path: o, message: (err as Error).message });
    }
  }
  return { overrides: out, issues };
}

/** Loads FILE, applies the overrides in order and validates; every problem is reported with its path. */
export function loadRunConfig(file: string, overrides: string[] = []): ParseResult {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, 'utf8')) ?? {};
  } catch (err) {
    return { ok: false, issues: [{ path: file, message: (err as Error).message }] };
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, issues: [{ path: '(root)', message: 'a config file must hold a mapping' }] };
  }
  const expanded = expandPresets(overrides);
  const overrideIssues = [
    ...expanded.issues,
    ...expanded.overrides.map((o) => applyOverride(raw as Record<string, unknown>, o)).filter((i): i is ConfigIssue => i !== null),
  ];
  const parsed = checkRunConfig(raw);
  if (overrideIssues.length > 0) {
    return { ok: false, issues: [...overrideIssues, ...(parsed.ok ? [] : parsed.issues)] };
  }
  if (!parsed.ok) return parsed;
  const tooLong = contextIssues(parsed.config, modelContext);
  return tooLong.length > 0 ? { ok: false, issues: tooLong } : parsed;
}

/**
 * A prompt and its response must fit the model: max_prompt_length + max_response_length at most
 * each base model's context (`contextOf`: its length in tokens, or null when it cannot be read).
 */
export function contextIssues(cfg: RunConfig, contextOf: (path: string) => number | null): ConfigIssue[] {
  const { max_prompt_length: prompt, max_response_length: response } = cfg.training;
  return Object.entries(cfg.base_models).flatMap(([key, m]) => {
    const context = m.path && !m.scripted ? contextOf(m.path) : null;
    if (context === null || prompt + response <= context) return [];
    return [{
      path: 'training.max_prompt_length',
      message: `training.max_prompt_length (${prompt}) + training.max_response_length (${response}) = ${prompt + response} tokens, more than the ${context} of base_models.${key} (${m.path}: max_position_embeddings)`,
    }];
  });
}

/** The context length of a local HF folder (its config.json); null for a .gguf file or a folder that cannot be read (the policy worker reports those). */
function modelContext(path: string): number | null {
  try {
    const c = JSON.parse(readFileSync(join(projectPath(path), 'config.json'), 'utf8'));
    const n = c.max_position_embeddings ?? c.text_config?.max_position_embeddings ?? c.n_positions;
    return typeof n === 'number' && n > 0 ? n : null;
  } catch {
    return null;
  }
}
