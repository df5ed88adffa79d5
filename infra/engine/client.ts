// The policy worker's handle on its tensor engine: a Python child process (engine.py) that
// speaks JSON lines on stdin/stdout (see services/engine/PROTOCOL.md). If the process dies,
// requests in flight fail (Temporal retries their activities) and the next request starts a
// fresh engine, which reloads each policy from its latest checkpoint on first use.
// The engine dies with the worker (parent-death signal): a worker killed with -9 must not leave
// an orphan engine that finishes an update and writes a checkpoint behind the next worker's back.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import { projectPath } from '../../infra/settings.js';

/**
 * Torch threads of an engine: TANDEM_TORCH_THREADS if set; else, on a CPU device, one core fewer
 * than the machine has (at least one), so that the orchestration processes beside it (Temporal,
 * the workers, Kafka, the projector) keep a core and do not preempt its threads mid-step; on a GPU,
 * torch's default. (bench/notes/rollout.md, "What the sessions settled": on 2 cores, 1 thread beat
 * 2 in and out of the stack.)
 */
export function engineThreads(device: string): string | undefined {
  if (process.env.TANDEM_TORCH_THREADS) return process.env.TANDEM_TORCH_THREADS;
  return device === 'cpu' ? String(Math.max(1, availableParallelism() - 1)) : undefined;
}

const threads = (device: string) => {
  const n = engineThreads(device);
  return n ? { TANDEM_TORCH_THREADS: n } : {};
};

export class EngineError extends Error {
  constructor(readonly type: string, message: string) {
    super(message);
    this.name = `Engine${type}`;
  }
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

export class EngineClient {
  private proc?: ChildProcessWithoutNullStreams;
  private ready?: Promise<void>;
  private pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly device: string, private readonly log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)) {}

  /** Starts the engine if it is not running; resolves once it has said it is ready. */
  start(): Promise<void> {
    if (this.ready) return this.ready;
    const python = [projectPath('.venv/bin/python'), projectPath('services/engine/engine.py'), '--device', this.device];
    const proc = spawn('/usr/bin/setpriv', ['--pdeathsig', 'KILL', '--', ...python], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', PYTHONUNBUFFERED: '1', ...threads(this.device) },
    });
    this.proc = proc;
    // A request written just as the engine dies fails with EPIPE on stdin. Unheard, that error
    // would end the worker; the engine's 'exit' below fails the request (Temporal retries it).
    proc.stdin.on('error', (err) => this.log(`[engine] stdin: ${err.message}`));
    createInterface({ input: proc.stderr }).on('line', (l) => this.log(`[engine] ${l}`));
    this.ready = new Promise<void>((resolve, reject) => {
      let started = false;
      createInterface({ input: proc.stdout }).on('line', (line) => {
        let msg: any;
        try {
          msg = JSON.parse(line);
        } catch {
          this.log(`[engine stdout] ${line}`);
          return;
        }
        if (!started && msg.ready) {
          started = true;
          this.log(`[engine] ready on ${msg.device} (torch ${msg.torch})`);
          resolve();
          return;
        }
        const waiter = this.pending.get(msg.id);
        if (!waiter) return;
        this.pending.delete(msg.id);
        if (msg.ok) waiter.resolve(msg.result);
        else waiter.reject(new EngineError(msg.error?.type ?? 'Error', msg.error?.message ?? 'engine error'));
      });
      proc.on('exit', (code, signal) => {
        const err = new EngineError('Died', `engine exited (code ${code}, signal ${signal})`);
        this.log(`[engine] ${err.message}`);
        if (!started) reject(err);
        for (const w of this.pending.values()) w.reject(err);
        this.pending.clear();
        this.proc = undefined;
        this.ready = undefined;
      });
    });
    return this.ready;
  }

  /** Is the engine process up? (A request starts it; this does not.) */
  get running(): boolean {
    return this.proc !== undefined;
  }

  /** The engine process's pid while it is up (setpriv execs python in place). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /**
   * One op; answers may come in any order (generate requests are decoded together as they arrive).
   * Aborting `signal` (an activity's cancellation) cancels the op in the engine: its rows stop at
   * the next decoding step and the promise rejects with EngineError type Cancelled.
   */
  async request<T>(op: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    await this.start();
    const id = this.nextId++;
    const proc = this.proc!;
    const cancel = () => {
      if (this.pending.has(id) && this.proc === proc) proc.stdin.write(`${JSON.stringify({ id: null, op: 'cancel', target: id })}\n`);
    };
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      return await new Promise<T>((resolve, reject) => {
        this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        proc.stdin.write(`${JSON.stringify({ id, op, ...params })}\n`);
      });
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    proc.stdin.end();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => (proc.kill('SIGKILL'), resolve()), 5000);
      proc.once('exit', () => (clearTimeout(timer), resolve()));
    });
  }
}

// ---- the shapes of the ops the activities use (services/engine/PROTOCOL.md)
// Every field is required: the engine keeps no defaults of its own for what a run configures, so
// the values here are the ones the run config resolved (configs/schema.ts); a field left out is
// the engine's BadRequest "<op>: missing field '<field>'". Nullable fields take null for "none".

export interface GenerateRequest {
  policy: string;
  /** The version to generate with, or (newer_within N > 0) one of the N after it; never an older one. */
  version: number;
  newer_within: number;
  messages: { role: string; content: string }[];
  n: number;
  temperature: number;
  top_p: number;
  top_k: number;
  min_p: number;
  /** vLLM's repetition_penalty (1: off). */
  repetition_penalty: number;
  max_new_tokens: number;
  stop: string[];
  ignore_eos: boolean;
  seed: number | null;
  /** The most tokens the rendered prompt may have (null: no limit), and what happens above it. */
  max_prompt_tokens: number | null;
  truncation: 'keep_system' | 'left' | 'error';
  /** Passed to a chat template that reads it (Qwen3's); null: the template's own default. */
  enable_thinking: boolean | null;
  /** How to load the policy if the engine does not hold it yet (the `load` op's fields); absent: it must be loaded. */
  load?: LoadSpec;
}

/** The `load` op's fields, less the policy key (services/engine/PROTOCOL.md). */
export interface LoadSpec {
  kind: 'full' | 'lora';
  /** trainer: it trains (and generates, colocated); rollout: it only generates (placement.<base>.rollout). */
  role: 'trainer' | 'rollout';
  model_path: string;
  /** The weights' dtype: auto, float32 or bfloat16 (placement.<base>.dtype; PROTOCOL.md). */
  dtype: 'auto' | 'float32' | 'bfloat16';
  /** The shared base's key (read for lora policies only). */
  base: string;
  /** Required for a lora policy. */
  lora?: EngineLora;
  optim: EngineOptim;
  /** Where its checkpoints are; "": none to start from. */
  checkpoint_root: string;
}

/** A policy's AdamW and LR schedule (the `load` op's `optim`). */
export interface EngineOptim {
  lr: number;
  weight_decay: number;
  betas: [number, number];
  warmup_steps: number;
  total_steps: number;
  min_lr_ratio: number;
  warmup_start: 'fraction' | 'min_lr';
}

/** A LoRA adapter's shape (the `load` op's `lora`). */
export interface EngineLora {
  rank: number;
  alpha: number;
  dropout: number;
  target_modules: 'all-linear' | string[];
}

/** The `update` op's fields (the samples as a file: infra/engine/samplesFile.ts). */
export type UpdateRequest = {
  policy: string;
  from_version: number;
  samples_file: string;
  checkpoint_root: string;
  clip_low: number;
  clip_high: number;
  /** null: no dual clip. */
  dual_clip_c: number | null;
  loss_agg: 'token-mean' | 'seq-mean-token-mean';
  kl_coef: number;
  max_grad_norm: number;
  micro_batch_tokens: number;
  /** null: the whole batch in one mini-batch. */
  ppo_mini_batch_size: number | null;
  ppo_epochs: number;
  gradient_checkpointing: boolean;
  /** Decoupled PPO's cap on the behaviour weights; null: the on-policy loss. */
  behaviour_weight_cap: number | null;
  /** Run beside the decoding, the policy's rows served by a copy of the version being trained
   * (asynchronous training; tandem_engine/serving.py); false: once no rows decode, alone. */
  overlap: boolean;
  /** Checkpoint retention; null: keep all (keep_last), none extra (keep_every). */
  keep_last: number | null;
  keep_every: number | null;
  /** One replica's part of a step over replicas; absent: this engine alone. */
  distributed?: DistributedSpec;
};

/** How the replicas of a policy meet for one update step (tandem_engine/replicas.py). */
export interface DistributedSpec {
  rank: number;
  world_size: number;
  /** host:port of rank 0's rendezvous store. */
  store: string;
  /** New for every attempt of the step. */
  group: string;
  join_timeout_s: number;
  timeout_s: number;
  shard_optimizer: boolean;
}

export interface Candidate {
  text: string;
  prompt_ids: number[];
  response_ids: number[];
  logprobs: number[];
  finish_reason: string;
}

export interface GenerateResult {
  policy: string;
  version: number;
  /** The rendered prompt's tokens when it was cut to max_prompt_tokens (null: whole; absent from engines before it). */
  truncated_from?: number | null;
  samples: Candidate[];
}

export interface UpdateResult {
  version: number;
  replayed: boolean;
  loss: number;
  pg_loss: number;
  /** null when kl_coef is 0. */
  kl: number | null;
  clip_fraction: number;
  approx_kl: number;
  entropy: number;
  /** null when the step was skipped (no tokens, or a non-finite gradient). */
  grad_norm: number | null;
  tokens: number;
  samples: number;
  /** Of `samples`, those whose passes ran: the others had advantage 0 and no KL term, no gradient (absent from older engines). */
  samples_forwarded?: number;
  /** Mean |trainer - rollout log-prob| per token, under the weights before the update. */
  logprob_gap: number;
  /** The rollout/trainer importance weights pi_trainer / pi_rollout per token: mean, standard deviation,
   * smallest and largest (null without tokens; absent from older engines). */
  rollout_weight_mean?: number | null;
  rollout_weight_std?: number | null;
  rollout_weight_min?: number | null;
  rollout_weight_max?: number | null;
  /** The dtype of the weights it trained (bfloat16: mixed precision with float32 masters), and why it is
   * not the one asked (auto fell back to float32), else null; absent from older engines. */
  dtype?: string;
  dtype_note?: string | null;
  lr: number;
  checkpoint: string;
  /** The policy's versions on disk after the update's retention (keep_last set; its writer only). */
  kept_versions?: number[];
  /** A step over replicas (the `distributed` field): their count and the checksum they agreed on. */
  replicas?: number;
  checksum?: string;
  /** Seconds of the step, and (replicas) of which in collectives. */
  update_s?: number;
  sync_s?: number;
  /** Seconds the update waited for the host's update lock (TANDEM_UPDATE_LOCK); absent without one. */
  update_lock_wait_s?: number;
  /** Optimizer steps the update took (PPO mini-batches x epochs, less any skipped). */
  optimizer_steps?: number;
  /** MiB of AdamW state this engine holds (with shard_optimizer, its part); absent from older engines. */
  optimizer_state_mb?: number;
  /** MiB of float32 master weights this engine keeps besides a bf16 policy's weights (sharded: its part); absent from older engines. */
  masters_mb?: number;
  /** With behaviour_weight_cap: the mean weight after truncation, the largest before it, the share of tokens truncated. */
  is_weight_mean?: number;
  is_weight_max?: number;
  is_truncated_fraction?: number;
  /** With `overlap`: the serving copy made ("adapter" | "model"; null and `reason` when it ran alone),
   * its MiB, and the seconds the engine decoded while the update ran. */
  overlap?: { copy: 'adapter' | 'model' | null; copy_mb: number; reason: string | null; decode_s: number };
}

/** The `stats` op: counters since the engine started, and its rows now. */
export interface EngineStats {
  /** Seconds prefilling and decoding, and in updates, since the engine started. */
  busy_seconds: number;
  update_seconds: number;
  steps: number;
  prefills: number;
  cache_copies: number;
  generated_tokens: number;
  rows_finished: number;
  live_rows: number;
  waiting_rows: number;
  pending_ops: number;
  /** Admissions that left newcomers waiting because new KV buffers for them would outgrow the budget. */
  memory_waits: number;
  /** The decode batches' KV buffers (keys and values): now, at most so far, and their budget, in bytes. */
  kv_cache_bytes: number;
  kv_cache_peak_bytes: number;
  kv_budget_bytes: number;
}
