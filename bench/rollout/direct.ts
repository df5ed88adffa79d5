// The rollout work of one iteration played in this one process, driving an engine directly: the
// same episodes (planIteration), prompts, K, lengths and sampling seeds as the stack, the same
// episodes in flight (rollout.episode_window), the same episode loop (domain/episodeLoop.ts) and
// the same scoring (the CPU worker's scoreCandidates, sandbox included). What the stack adds on
// top of this is orchestration: the ratio of the two is what it costs.
import { createEnvActivities } from '../../activities/env.js';
import { runSandboxed } from '../../activities/sandbox/index.js';
import { loadRunConfig } from '../../configs/load.js';
import type { RunConfig } from '../../configs/schema.js';
import { planIteration } from '../../domain/atgrpo.js';
import { playEpisode } from '../../domain/episodeLoop.js';
import { episodeIdOf, samplingSeed } from '../../domain/ids.js';
import { envOf } from '../../envs/index.js';
import { EngineClient, type EngineStats, type GenerateRequest, type GenerateResult } from '../../infra/engine/client.js';
import { ensurePolicy, loadSpec } from '../../activities/policy.js';
import { engineKey, policyRef } from '../../policy/ref.js';
import { agentByName } from '../../configs/schema.js';
import { policiesOf, policyOfAgent } from '../../policy/spec.js';
import { inWindow } from '../../workflows/inWindow.js';
import { machineBusy, minus, schedOf, type Sched } from './sched.js';

export interface RolloutFigures {
  seconds: number;
  generatedTokens: number;
  turns: number;
  /** Seconds the engine spent prefilling and decoding (its `stats`). */
  engineSeconds: number;
  /** The engine's decoding steps (one forward over its running batch). */
  engineSteps: number;
  /** The engine's prefills (one forward over newcomers' prompts). */
  enginePrefills: number;
  /** The engine's copies of its running batch's KV cache (newcomers that found no free slot, compactions). */
  engineCacheCopies: number;
  /** The engine process's seconds on a core, and runnable but waiting for one. */
  engineSched: Sched;
  /** The machine's busy CPU seconds (every process, the kernel's own work included) beside the engine's. */
  besideEngine: number;
  /** Per episode: its start -> its first turn started; its last turn's result -> its end. */
  openingMs: number[];
  closingMs: number[];
  /** Per agent turn after the first: the previous turn's result -> this turn started (the scoring between included). */
  betweenTurnsMs: number[];
}

/** What the rollout benches play: `file` with `overrides`, as a run of one iteration and no evaluation. */
export function rolloutConfig(file: string, overrides: string[]): RunConfig {
  const loaded = loadRunConfig(file, ['training.total_training_steps=1', 'training.val_freq=0', ...overrides]);
  if (!loaded.ok) throw new Error(`${file}: ${JSON.stringify(loaded.issues)}`);
  return loaded.config;
}

/** Plays iteration 0 of `cfg` for run id `runId`; the engine's own data folder is `dataDir`. */
export async function rolloutDirect(cfg: RunConfig, runId: string, dataDir: string): Promise<RolloutFigures> {
  const engine = new EngineClient('cpu', () => {});
  await engine.start();
  const env = createEnvActivities();
  const policies = policiesOf(cfg);
  const deps = { engine, device: 'cpu', dataDir };
  // As a run does (its policyVersion activities), the policies are loaded before the episodes
  // start. Then this side is warmed, as the stack's long-lived processes are: its engine has
  // generated with each policy, and this process's sandbox is checked and its launcher started
  // (two programs took 150 ms at the first use, 22-28 ms after), before the clock starts.
  const warmSampling = agentByName(cfg, cfg.multi_agent_interaction.turn_order[0]).train_llm_config;
  for (const spec of policies.filter((p) => p.kind !== 'scripted')) {
    const policy = policyRef(runId, spec, cfg);
    await ensurePolicy(deps, policy);
    const warmUp: GenerateRequest = {
      policy: engineKey(policy),
      version: 0,
      newer_within: 0,
      messages: [{ role: 'user', content: 'warm-up' }],
      n: 1,
      ...warmSampling,
      max_new_tokens: 4,
      max_prompt_tokens: cfg.training.max_prompt_length,
      truncation: cfg.training.truncation,
      stop: [],
      seed: 0,
    };
    await engine.request('generate', { requests: [warmUp] });
  }
  await runSandboxed('pass', { timeoutMs: 60_000 });
  const stats0 = await engine.request<EngineStats>('stats', {});
  const enginePid = engine.pid!;
  const sched0 = schedOf(enginePid);
  const busy0 = machineBusy();
  const planned = planIteration(cfg.algorithm, cfg.training.seed, 0, cfg.training.train_batch_size, cfg.training.train_sample_num);
  const rules = { maxTurns: cfg.env.max_turns, turnOrder: cfg.multi_agent_interaction.turn_order, ifGreedy: cfg.rollout.if_greedy };
  let generatedTokens = 0;
  let turns = 0;
  const openingMs: number[] = [];
  const closingMs: number[] = [];
  const betweenTurnsMs: number[] = [];
  const t0 = performance.now();
  await inWindow(planned.length, cfg.rollout.episode_window ?? planned.length, async (j) => {
    const episodeId = episodeIdOf(runId, 0, j);
    const began = performance.now();
    let lastResult: number | undefined;
    const initial = await env.envReset({ env: cfg.env, seed: planned[j].problemSeed });
    await playEpisode(envOf(cfg.env), rules, initial, {
      act: async ({ turn, agent, prompt }) => {
        const now = performance.now();
        if (lastResult === undefined) openingMs.push(now - began);
        else betweenTurnsMs.push(now - lastResult);
        const spec = policyOfAgent(policies, agent);
        const sampling = agentByName(cfg, agent).train_llm_config;
        const policy = policyRef(runId, spec, cfg);
        // Complete, as agentTurn's (typed: the compiler checks that every field is sent).
        const request: GenerateRequest = {
          policy: engineKey(policy),
          version: 0,
          newer_within: cfg.rollout.max_staleness, // a training turn's, as workflows/episode.ts
          messages: prompt,
          n: planned[j].candidates,
          ...sampling,
          max_new_tokens: cfg.training.max_response_length,
          max_prompt_tokens: cfg.training.max_prompt_length,
          truncation: cfg.training.truncation,
          stop: [],
          seed: samplingSeed(episodeId, turn, agent),
          load: loadSpec(deps, policy), // as agentTurn: the engine loads it on first use
        };
        const { results } = await engine.request<{ results: GenerateResult[] }>('generate', { requests: [request] });
        const { samples } = results[0];
        lastResult = performance.now();
        turns++;
        generatedTokens += samples.reduce((n, s) => n + s.response_ids.length, 0);
        return samples;
      },
      score: ({ agent, state }, texts) => env.scoreCandidates({ env: cfg.env, agent, state, texts, alpha: cfg.alpha }),
    });
    if (lastResult !== undefined) closingMs.push(performance.now() - lastResult);
  });
  const seconds = (performance.now() - t0) / 1000;
  const engineSched = minus(schedOf(enginePid), sched0);
  const besideEngine = machineBusy() - busy0 - engineSched.onCpu;
  const stats1 = await engine.request<EngineStats>('stats', {});
  await engine.stop();
  return { seconds, generatedTokens, turns, engineSeconds: stats1.busy_seconds - stats0.busy_seconds, engineSteps: stats1.steps - stats0.steps, enginePrefills: stats1.prefills - stats0.prefills, engineCacheCopies: stats1.cache_copies - stats0.cache_copies, engineSched, besideEngine, openingMs, closingMs, betweenTurnsMs };
}
