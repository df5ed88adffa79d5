// The run config: the single source of truth for what a Tandem run accepts.
// Keys follow the PettingLLMs Hydra configs (specialization, lora_*, env.*, base_models.*,
// agent_policy_configs.*, multi_agent_interaction.*, training.*); Tandem's own keys are
// algorithm, alpha, data_dir, placement, rollout and update. Every object is strict, so a
// misspelt key is an error with its path rather than a silently ignored setting.
//
// This module is pure (no I/O): workflows import it to validate their input.
import { z } from 'zod';
import { DEFAULT_POLICY_QUEUE } from '../domain/queues.js';
import { ENV_CONFIGS, envOf } from '../envs/index.js';

export interface ConfigIssue {
  path: string;
  message: string;
}

const samplingSchema = z
  .strictObject({
    temperature: z.number().min(0).default(1.0),
    top_p: z.number().gt(0).max(1).default(1.0),
    top_k: z.number().int().min(-1).default(-1),
    min_p: z.number().min(0).max(1).default(0),
    // vLLM's meaning: a token already in the prompt or the response has its logit x made x/p
    // (x > 0) or x*p; 1 = off (the reference trains and validates with 1.2).
    repetition_penalty: z.number().gt(0).default(1.0),
    enable_thinking: z.boolean().default(false),
    // vLLM's name: generate to the length limit whatever stop tokens the model writes (for tests
    // and benchmarks of long responses with any model).
    ignore_eos: z.boolean().default(false),
  })
  .prefault({});

const agentSchema = z.strictObject({
  name: z.string().min(1),
  // The base model (base_models.*.name) this agent's policy is built on.
  policy_name: z.string().min(1),
  // Tandem: this agent's own level, for mixes (e.g. one agent on a LoRA adapter, another on a
  // full model). Unset: the run's `specialization`.
  specialization: z.enum(['prompt', 'lora', 'full']).optional(),
  train_llm_config: samplingSchema,
  val_llm_config: samplingSchema,
});

const baseModelSchema = z.strictObject({
  // A local Hugging Face folder or .gguf file (relative paths resolve against the project root).
  path: z.string().min(1).optional(),
  name: z.string().min(1),
  // Tandem: the environment's scripted player acts for this policy's agents (no model, never
  // trained): for tests, baselines and fixed partners.
  scripted: z.boolean().default(false),
});

// env.*: `name` picks the environment; each has its own options (envs/<env>/config.ts) besides
// the common ones (envs/shared/config.ts).
const envSchema = z.discriminatedUnion('name', ENV_CONFIGS, {
  error: () => `expected one of ${ENV_CONFIGS.map((e) => e.shape.name.value).join(', ')}`,
});

const trainingSchema = z
  .strictObject({
    total_training_steps: z.number().int().min(1).default(200),
    train_batch_size: z.number().int().min(1).default(32),
    train_sample_num: z.number().int().min(1).default(4),
    // Evaluation: each held-out problem is played validate_sample_num times with val_llm_config,
    // before training, every val_freq iterations and after the last (0: never during training).
    validate_sample_num: z.number().int().min(1).default(1),
    val_freq: z.number().int().min(0).default(10),
    // Tandem: how many held-out problems an evaluation plays (validation seeds, envs/shared/seeds.ts).
    val_problems: z.number().int().min(1).default(16),
    max_prompt_length: z.number().int().min(16).default(2048),
    // A prompt longer than max_prompt_length (chat template applied): keep_system, the reference's
    // rollout (PettingLLMs convert_prompt_to_dpr), keeps the system prompt and the last tokens
    // that fit; left keeps only the last max_prompt_length tokens; error fails the run (verl's
    // data.truncation default). A cut prompt is recorded with its turn (TurnGroupScored's
    // promptTruncated) and counted per episode, iteration and evaluation.
    truncation: z.enum(['keep_system', 'left', 'error']).default('keep_system'),
    max_response_length: z.number().int().min(1).default(256),
    lora_rank: z.number().int().min(0).optional(),
    lora_alpha: z.number().min(0).optional(),
    model_checkpoints_dir: z.string().optional(),
    // Tandem: first problem seed of the training range (validation/test ranges are disjoint).
    seed: z.number().int().min(0).default(0),
  })
  .prefault({});

const placementSchema = z.strictObject({
  // Task queue of the policy worker that hosts this base model and every policy built on it.
  // With replicas, the queue all of them serve agent turns from (each also has its own update
  // queue, <task_queue>-r<rank>: policy/spec.ts replicaQueue).
  task_queue: z.string().min(1).default(DEFAULT_POLICY_QUEUE),
  // Device that worker must run on; checked by the worker before it serves the policy. "cuda"
  // accepts any GPU (cuda:N), e.g. for replicas, one per GPU.
  // (a refine, not .regex(): zod's regex check writes to its RegExp, which the workflow bundle
  // shares frozen between workflows; infra/temporal/bundle.ts)
  device: z.string().refine((d) => /^(cpu|cuda(:\d+)?)$/.test(d), 'expected cpu, cuda or cuda:N').default('cpu'),
  // The weights' dtype (services/engine/tandem_engine/precision.py): auto is bfloat16 on a GPU,
  // float32 on a CPU, even one with bf16 units (flags avx512_bf16 or amx_bf16), and elsewhere (the
  // engine says why: on those CPUs bf16 trained about 1.15x faster and learned less, bench/RESULTS.md);
  // bfloat16 trains in mixed precision (float32 master weights and AdamW state, bf16 forward and
  // backward; LoRA adapters float32 over a bf16 base). bfloat16 on a CPU without bf16 units is refused.
  dtype: z.enum(['auto', 'float32', 'bfloat16']).default('auto'),
  // Data-parallel replicas: policy workers started with --replica 0..N-1, each holding a full copy
  // of every policy on this base model. Turns spread over them; each update is one step over
  // all of them (torch.distributed; services/engine/tandem_engine/replicas.py).
  replicas: z.number().int().min(1).default(1),
  // With replicas: split AdamW's state (its two moments, 8 bytes per trained parameter in fp32) over
  // them instead of a whole copy on each (ZeRO stage 1, torch's ZeroRedundancyOptimizer); the
  // checkpoint is the same. Weights and gradients stay whole on every replica.
  shard_optimizer: z.boolean().default(false),
  // host:port where rank 0's engine serves the replicas' rendezvous store (rank 0's host on a cluster).
  rendezvous: z.string().refine((a) => /^[^\s:]+:\d{1,5}$/.test(a), 'expected host:port').default('127.0.0.1:29400'),
  // Seconds a replica waits for the others to arrive at a step, and, once they have, for their
  // shares of it, before the step fails (and is tried again as a whole).
  replica_join_timeout_s: z.number().int().min(1).default(60),
  replica_timeout_s: z.number().int().min(1).default(600),
  // Rollout engines: policy workers on another task queue (and device) that generate every turn of
  // the policies on this base model, while the workers on task_queue only train them. They hold no
  // optimizer; after each update the run installs the new version on each of them (the engine's
  // sync) before any turn asks for it. Absent: the policy's engine does both (colocated). `engines`:
  // policy workers started with --task-queue <task_queue> --replica 0..N-1; turns spread over them,
  // and each is synced on its own queue, <task_queue>-r<R>.
  // `weights`: how a new version reaches them. file: each reads it from the trainer's checkpoint
  // (one shared data folder). broadcast: the trainer's engine sends it to all of them at once over a
  // torch.distributed group (NCCL on GPUs, gloo on CPUs; services/engine/tandem_engine/broadcast.py),
  // serving the group's rendezvous at `rendezvous` (the trainer's host on a cluster), bounded by
  // replica_join_timeout_s and replica_timeout_s; a round that fails falls back to the file.
  rollout: z
    .strictObject({
      task_queue: z.string().min(1),
      device: z.string().refine((d) => /^(cpu|cuda(:\d+)?)$/.test(d), 'expected cpu, cuda or cuda:N').default('cpu'),
      engines: z.number().int().min(1).default(1),
      weights: z.enum(['file', 'broadcast']).default('file'),
      rendezvous: z.string().refine((a) => /^[^\s:]+:\d{1,5}$/.test(a), 'expected host:port').default('127.0.0.1:29500'),
    })
    .optional(),
});

export const runConfigSchema = z
  .strictObject({
    specialization: z.enum(['prompt', 'lora', 'full']).default('prompt'),
    lora_rank: z.number().int().min(0).default(0),
    lora_alpha: z.number().min(0).default(0),
    // Tandem: LoRA dropout and the modules adapters wrap ("all-linear" or module names).
    lora_dropout: z.number().min(0).max(1).default(0),
    lora_target_modules: z.union([z.literal('all-linear'), z.array(z.string().min(1)).min(1)]).default('all-linear'),
    resource: z
      .strictObject({
        nnodes: z.number().int().min(1).default(1),
        n_gpus_per_node: z.number().int().min(0).default(0),
      })
      .prefault({}),
    env: envSchema,
    base_models: z.record(z.string(), baseModelSchema),
    agent_policy_configs: z.strictObject({
      num_agents: z.number().int().min(1).optional(),
      policy_list: z.array(z.string()).optional(),
      agent_configs: z.record(z.string(), agentSchema),
    }),
    multi_agent_interaction: z.strictObject({
      turn_order: z.array(z.string().min(1)).min(1),
      num_interacting_agents: z.number().int().min(1).optional(),
    }),
    training: trainingSchema,

    // ---- Tandem's own keys ----
    // at_grpo: K candidates per (turn, agent), grouped per (problem, turn, agent).
    // grpo: plain GRPO, the paper's baseline: K trajectories per problem, grouped per (problem, agent).
    algorithm: z.enum(['at_grpo', 'grpo']).default('at_grpo'),
    // Mixed reward: reward = local + alpha * global.
    alpha: z.number().min(0).default(1.0),
    // Where the run keeps its checkpoints (<data_dir>/runs/<run id>/checkpoints); relative
    // paths resolve against the project root. Unset: the policy worker's data folder.
    data_dir: z.string().optional(),
    // Which versions of each policy's checkpoints stay on disk (every update writes one: a full
    // model's weights and AdamW's two moments, 6 bytes per parameter in bf16). keep_last:
    // the newest N (null: all); keep_every: also every version it divides (null: none). The newest is
    // always kept: a fresh engine loads it, and a retried update replays its result from it. (The
    // reference's code_L2_lora.yaml keeps 3, verl's trainer.max_actor_ckpt_to_keep, of the
    // checkpoints it writes every save_freq steps.)
    checkpoints: z
      .strictObject({
        keep_last: z.number().int().min(1).nullable().default(null),
        keep_every: z.number().int().min(1).nullable().default(null),
      })
      .refine((c) => c.keep_every === null || c.keep_last !== null, {
        path: ['keep_every'],
        message: 'keeps nothing extra while checkpoints.keep_last is null (every version is kept): set keep_last too',
      })
      .prefault({}),
    // Tandem: how soon a lost attempt is noticed and tried again, for every activity. Each heartbeats
    // while it runs (services/heartbeat.ts: every 5 s, or a third of the timeout when that is
    // shorter), so the attempt of a worker that died times out after heartbeat_timeout_s; a failed
    // attempt is retried after retry_initial_interval_s, the wait doubling up to
    // retry_max_interval_s (also the longest wait between two tries of an update over replicas).
    // Not a learning setting, and replay-safe: a history's activities are matched by type and id,
    // not by their timeouts. The fault tests shorten them.
    recovery: z
      .strictObject({
        heartbeat_timeout_s: z.number().min(1).default(30),
        retry_initial_interval_s: z.number().gt(0).default(1),
        retry_max_interval_s: z.number().gt(0).default(30),
      })
      .refine((r) => r.retry_max_interval_s >= r.retry_initial_interval_s, {
        path: ['retry_max_interval_s'],
        message: 'must be at least recovery.retry_initial_interval_s',
      })
      .prefault({}),
    // Base model name -> which policy worker (task queue) and device serve it and its adapters.
    placement: z.record(z.string(), placementSchema).default({}),
    rollout: z
      .strictObject({
        // Episode child workflows in flight at once; absent: all of the iteration's (or the
        // evaluation's) episodes, so that the engine has every turn that can run to batch.
        episode_window: z.number().int().min(1).optional(),
        // Continue from the best candidate (true) or from candidate 0 (false).
        if_greedy: z.boolean().default(true),
        // The longest one attempt of an agent turn may take, from its start to its samples: its
        // wait in the engine's queue behind other turns' rows (whole waves of long responses when
        // the KV cache is full) and its own decoding. A dead worker is noticed sooner, by the
        // activity's heartbeat; this bounds a worker alive with a stuck engine.
        turn_timeout_s: z.number().int().min(1).default(7200),
        // Asynchronous training (workflows/trainingRun.ts): 0, strictly on-policy, each iteration's
        // episodes start once the previous iteration's updates are done; N >= 1, they start while
        // the updates of up to N iterations before are still running, so a sample generated by
        // version v of a policy is consumed by that policy's update from version u with u - v <= N
        // (an older one is set apart as stale), and the loss is decoupled PPO's
        // (update.behaviour_weight_cap, then required).
        max_staleness: z.number().int().min(0).default(0),
      })
      .prefault({}),
    update: z
      .strictObject({
        // AdamW per policy; linear warm-up, then cosine decay to lr * min_lr_ratio at the last iteration.
        lr: z.number().positive('must be > 0: a learning rate of 0 learns nothing').default(5e-6),
        weight_decay: z.number().min(0).default(0),
        warmup_steps: z.number().int().min(0).default(10),
        min_lr_ratio: z.number().min(0).max(1).default(0.3),
        // Where the warm-up starts: fraction, lr / warmup_steps at the first update (full lr at update
        // warmup_steps - 1); min_lr, lr x min_lr_ratio, rising to the full lr at update warmup_steps
        // (verl's cosine schedule, the reference's).
        warmup_start: z.enum(['fraction', 'min_lr']).default('fraction'),
        // PPO clipped surrogate: ratio clipped to [1 - clip_low, 1 + clip_high]; dual-clip bounds
        // the loss of negative-advantage tokens at dual_clip_c * |A| (null: off).
        clip_low: z.number().min(0).default(0.2),
        clip_high: z.number().min(0).default(0.2),
        dual_clip_c: z.number().gt(1).nullable().default(3),
        // Decoupled PPO (services/engine/PROTOCOL.md, update): each token's term weighted by
        // min(pi_update_start / pi_rollout, cap), for samples a different policy generated (an older
        // version, or the rollout's numerics against the trainer's: verl's token-level truncated
        // rollout correction, whose example cap is 2). null: the on-policy loss.
        behaviour_weight_cap: z.number().min(1).nullable().default(null),
        // token-mean: every response token weighs the same; seq-mean-token-mean: every sample does.
        loss_agg: z.enum(['token-mean', 'seq-mean-token-mean']).default('token-mean'),
        // KL to the reference policy (k3 estimator); 0: off. For an adapter the reference is its base.
        kl_coef: z.number().min(0).default(0),
        max_grad_norm: z.number().positive().default(1.0),
        // Micro-batches are packed up to this many tokens; gradients accumulate across them.
        micro_batch_tokens: z.number().int().min(1).default(4096),
        // The gradient pass keeps each decoder layer's input only and runs the layer again in the
        // backward pass, and makes the vocabulary-sized logits a chunk of positions at a time (the
        // reference's enable_gradient_checkpointing, on there): what a long sample's update needs on
        // a large model (docs/DEPLOYMENT.md). It costs about one more forward pass, and each sample
        // runs its prompt on its own rather than once per group. Off: the faster pass, for short
        // samples and small models.
        gradient_checkpointing: z.boolean().default(false),
        // PPO (the reference's names): an update cuts one policy's samples of the iteration into
        // mini-batches of about ppo_mini_batch_size samples (over all its replicas) and takes one
        // optimizer step per mini-batch, ppo_epochs passes over them; the old log-probs are fixed
        // before the first step, so later steps clip. A version counts updates. 256 is verl's base
        // default, which keeps one step per iteration for this project's small batches (the tiny
        // model's raised learning rates were tuned so); the reference's task configs (through its
        // ppo_trainer/eval.yaml) and the paper use 16.
        ppo_mini_batch_size: z.number().int().min(1).default(256),
        ppo_epochs: z.number().int().min(1).default(1),
        // Advantage = (r - mean) / (std + eps) ("std") or r - mean ("none").
        norm_adv_by_std: z.boolean().default(true),
        // Groups whose scores are all equal (no signal): kept with advantage 0 (they still count
        // in the token-mean denominator, as in the reference), or dropped from the update.
        zero_variance_groups: z.enum(['keep', 'drop']).default('keep'),
        // The reference's group filter (its filter_method / filter_ratio; domain/atgrpo.ts
        // filteredGroups): before the advantages, floor(ratio x groups) of a policy's groups are left
        // out of its update, those with the lowest mean score (mean) or the lowest range-normalised
        // variance (std). none: every group is used. The reference's puzzle configs use mean, 0.5.
        group_filter: z
          .strictObject({
            method: z.enum(['none', 'mean', 'std']).default('none'),
            ratio: z.number().min(0).lt(1, 'must be < 1: a ratio of 1 drops every group').default(0.5),
          })
          .prefault({}),
        // training.train_sample_num = 1 makes every group one sample, whose advantage is always 0:
        // refused unless this says it is meant (e.g. to measure rollout alone).
        allow_singleton_groups: z.boolean().default(false),
        // Every policy scripted leaves nothing to train: refused unless this says it is meant
        // (scripted episodes only, e.g. to exercise an environment).
        allow_no_trainable_policy: z.boolean().default(false),
        // The longest one attempt of a policy's update may take (its old log-probs, PPO steps and
        // checkpoint); as rollout.turn_timeout_s, a dead worker is noticed sooner by its heartbeat.
        timeout_s: z.number().int().min(1).default(7200),
      })
      .prefault({}),
  })
  ;

/**
 * Cross-references the schema cannot express: agents name known policies, turn_order names
 * known agents, placement names known policies. Runs on the raw input too, so a config with
 * type errors still gets these reported in the same pass.
 */
function crossReferenceIssues(raw: unknown): ConfigIssue[] {
  const cfg = (raw ?? {}) as Record<string, any>;
  const issues: ConfigIssue[] = [];
  const models = isMapping(cfg.base_models) ? Object.values(cfg.base_models) : [];
  const policyNames = new Set(models.map((m: any) => m?.name).filter(Boolean));
  const agents = isMapping(cfg.agent_policy_configs?.agent_configs) ? cfg.agent_policy_configs.agent_configs : {};
  const agentNames = new Set<string>();
  for (const [key, agent] of Object.entries<any>(agents)) {
    if (agent?.name) agentNames.add(agent.name);
    if (typeof agent?.policy_name === 'string' && !policyNames.has(agent.policy_name)) {
      issues.push({
        path: `agent_policy_configs.agent_configs.${key}.policy_name`,
        message: `unknown policy "${agent.policy_name}"; base_models names: ${[...policyNames].join(', ') || '(none)'}`,
      });
    }
  }
  const order = cfg.multi_agent_interaction?.turn_order;
  if (Array.isArray(order)) {
    order.forEach((name, i) => {
      if (typeof name === 'string' && !agentNames.has(name)) {
        issues.push({
          path: `multi_agent_interaction.turn_order[${i}]`,
          message: `unknown agent "${name}"; agent_configs names: ${[...agentNames].join(', ') || '(none)'}`,
        });
      }
    });
  }
  if (isMapping(cfg.placement)) {
    for (const name of Object.keys(cfg.placement)) {
      if (!policyNames.has(name)) issues.push({ path: `placement.${name}`, message: `unknown base model "${name}"` });
    }
  }
  return issues;
}

/** Agents must play roles the environment defines; scripted players need the env's script. */
function roleIssues(cfg: RunConfig): ConfigIssue[] {
  const { def, issues: envIssues } = envOf(cfg.env);
  const issues = envIssues.map((message) => ({ path: 'env', message }));
  issues.push(...Object.entries(cfg.agent_policy_configs.agent_configs)
    .filter(([, a]) => !def.agents.includes(a.name))
    .map(([key, a]) => ({
      path: `agent_policy_configs.agent_configs.${key}.name`,
      message: `"${a.name}" is not a role of ${cfg.env.name} (roles: ${def.agents.join(', ')})`,
    })));
  for (const [key, m] of Object.entries(cfg.base_models)) {
    if (m.scripted && !def.scripted) issues.push({ path: `base_models.${key}.scripted`, message: `${cfg.env.name} has no scripted player` });
  }
  return issues;
}

/** Settings under which a run could train without learning anything. */
function learningIssues(cfg: RunConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (cfg.training.train_sample_num === 1 && !cfg.update.allow_singleton_groups) {
    issues.push({
      path: 'training.train_sample_num',
      message: `1 makes every ${cfg.algorithm} group a single sample, whose advantage is always 0: nothing is learned. Use 2 or more (the reference uses 4 to 8), or set update.allow_singleton_groups: true if that is meant`,
    });
  }
  if (cfg.rollout.max_staleness > 0 && cfg.update.behaviour_weight_cap === null) {
    issues.push({
      path: 'update.behaviour_weight_cap',
      message: `required with rollout.max_staleness ${cfg.rollout.max_staleness}: samples of older versions are trained on with decoupled PPO's behaviour weights, truncated at this cap (2 is verl's example; >= 1)`,
    });
  }
  const models = Object.entries(cfg.base_models);
  if (models.every(([, m]) => m.scripted) && !cfg.update.allow_no_trainable_policy) {
    issues.push({
      path: 'base_models',
      message: `every policy is scripted (${models.map(([k]) => `base_models.${k}.scripted`).join(', ')}): there is no model to train, so nothing is learned. Make at least one a model, or set update.allow_no_trainable_policy: true to play scripted episodes only`,
    });
  }
  return issues;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export type RunConfig = z.output<typeof runConfigSchema>;
export type SamplingConfig = z.output<typeof samplingSchema>;

/** Dotted path of a zod issue, e.g. `training.train_sample_num` or `multi_agent_interaction.turn_order[1]`. */
function issuePath(path: PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('') || '(root)';
}

export type ParseResult = { ok: true; config: RunConfig } | { ok: false; issues: ConfigIssue[] };

/**
 * Validates and normalises a raw config; never throws for bad input. `checks` add what a valid
 * schema can still get wrong (configs/check.ts passes the policy checks).
 */
export function parseRunConfig(raw: unknown, checks: ((cfg: RunConfig) => ConfigIssue[])[] = []): ParseResult {
  // A missing key or section is "required" (zod's own words would be "Invalid input: expected object, received undefined").
  const result = runConfigSchema.safeParse(raw, { error: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'required' : undefined) });
  const crossIssues = crossReferenceIssues(raw);
  if (result.success && crossIssues.length === 0) {
    const issues = [...checks.flatMap((check) => check(result.data)), ...roleIssues(result.data), ...learningIssues(result.data)];
    return issues.length === 0 ? { ok: true, config: result.data } : { ok: false, issues };
  }
  const issues: ConfigIssue[] = [];
  for (const issue of result.success ? [] : result.error.issues) {
    // Unknown keys come as one issue listing several keys: report each key at its own path.
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ path: issuePath([...issue.path, key]), message: 'unknown key' });
    } else {
      issues.push({ path: issuePath(issue.path), message: issue.message });
    }
  }
  return { ok: false, issues: [...issues, ...crossIssues] };
}

export function formatIssues(issues: ConfigIssue[]): string {
  return issues.map((i) => `  ${i.path}: ${i.message}`).join('\n');
}

/** The agent config of the agent with this name (turn_order uses names, agent_configs uses keys). */
export function agentByName(cfg: RunConfig, name: string) {
  const agent = Object.values(cfg.agent_policy_configs.agent_configs).find((a) => a.name === name);
  if (!agent) throw new Error(`unknown agent ${name}`);
  return agent;
}
