// Reading run configs: a YAML file plus dotted `key=value` overrides, validated by the schema.
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
  const keys = override.slice(0, eq).split('.');
  const value = parseYaml(override.slice(eq + 1));
  let node: Record<string, unknown> = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (next === undefined || next === null) node[key] = {};
    else if (typeof next !== 'object' || Array.isArray(next)) {
      return { path: keys.join('.'), message: `cannot set a key inside ${key}, which is not a mapping` };
    }
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
  return null;
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
  const overrideIssues = overrides
    .map((o) => applyOverride(raw as Record<string, unknown>, o))
    .filter((i): i is ConfigIssue => i !== null);
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
