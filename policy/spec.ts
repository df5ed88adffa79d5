// From a run config to its trainable policies: which agents each serves, whether it is a full
// model or a LoRA adapter on a shared frozen base, and which worker and device host it.
//   prompt (L1): agents naming the same base model share one policy (a LoRA when lora_rank > 0)
//   lora   (L2): each agent gets its own adapter, named after the agent, on its base model
//   full   (L3): each base model is trained whole by the agents naming it
// An agent's own `specialization` overrides the run's, so levels can be mixed.
// Pure: workflows use it.
import type { ConfigIssue, RunConfig } from '../configs/schema.js';
import { CPU_QUEUE, DEFAULT_POLICY_QUEUE } from '../domain/queues.js';

export interface LoraSpec {
  rank: number;
  alpha: number;
  dropout: number;
  target_modules: 'all-linear' | string[];
}

export interface PolicySpec {
  /** The policy's name: the base model's name, or the agent's for a per-agent adapter. */
  name: string;
  /** scripted: the environment's scripted player, served by the CPU worker and never trained. */
  kind: 'full' | 'lora' | 'scripted';
  /** The base model (base_models.*.name) and its path. */
  base: string;
  modelPath: string;
  lora?: LoraSpec;
  agents: string[];
  taskQueue: string;
  device: string;
  /** placement.<base>.dtype; absent in specs recorded before it: the dtype those runs had (activities/policy.ts loadSpec). */
  dtype?: 'auto' | 'float32' | 'bfloat16';
  /** Data-parallel replicas (placement.<base>.replicas); absent in specs recorded before them: 1. */
  replicas?: Replicas;
  /** The engines that generate its turns (placement.<base>.rollout); absent: its own engine does. */
  rollout?: RolloutEngines;
}

/** A policy's rollout engines: `engines` policy workers on `taskQueue`, each synced on its own queue. */
export interface RolloutEngines {
  taskQueue: string;
  device: string;
  engines: number;
  /** placement.<base>.rollout.weights broadcast: where the trainer's engine serves each round's rendezvous, and its timeouts; absent: by file. */
  broadcast?: { rendezvous: string; joinTimeoutS: number; timeoutS: number };
}

/** How the replicas of a policy meet for an update (placement.<base>.*). */
export interface Replicas {
  count: number;
  rendezvous: string;
  joinTimeoutS: number;
  timeoutS: number;
  /** placement.<base>.shard_optimizer; absent in specs recorded before it: false. */
  shardOptimizer?: boolean;
}

const DEFAULT_PLACEMENT = { task_queue: DEFAULT_POLICY_QUEUE, device: 'cpu', dtype: 'auto' as const, replicas: 1, shard_optimizer: false, rendezvous: '127.0.0.1:29400', replica_join_timeout_s: 60, replica_timeout_s: 600 };
/** Where scripted players run: the CPU worker's task queue. */
const SCRIPTED_QUEUE = CPU_QUEUE;

function loraOf(cfg: RunConfig): LoraSpec {
  return {
    rank: cfg.lora_rank || cfg.training.lora_rank || 0,
    alpha: cfg.lora_alpha || cfg.training.lora_alpha || 0,
    dropout: cfg.lora_dropout,
    target_modules: cfg.lora_target_modules,
  };
}

interface AgentPolicy {
  key: string; // agent_configs key, for error paths
  agent: string;
  policy: Omit<PolicySpec, 'agents'>;
}

function agentPolicies(cfg: RunConfig): AgentPolicy[] {
  const lora = loraOf(cfg);
  const models = new Map(Object.values(cfg.base_models).map((m) => [m.name, m]));
  return Object.entries(cfg.agent_policy_configs.agent_configs).map(([key, a]) => {
    const base = models.get(a.policy_name)!;
    const placement = cfg.placement[base.name] ?? DEFAULT_PLACEMENT;
    if (base.scripted) {
      const policy = { name: base.name, kind: 'scripted' as const, base: base.name, modelPath: '', taskQueue: SCRIPTED_QUEUE, device: 'cpu' };
      return { key, agent: a.name, policy };
    }
    const level = a.specialization ?? cfg.specialization;
    const kind = level === 'lora' || (level === 'prompt' && lora.rank > 0) ? 'lora' : 'full';
    return {
      key,
      agent: a.name,
      policy: {
        name: level === 'lora' ? a.name : base.name,
        kind,
        base: base.name,
        modelPath: base.path ?? '',
        ...(kind === 'lora' ? { lora } : {}),
        taskQueue: placement.task_queue,
        device: placement.device,
        dtype: placement.dtype,
        ...(placement.replicas > 1
          ? { replicas: { count: placement.replicas, rendezvous: placement.rendezvous, joinTimeoutS: placement.replica_join_timeout_s, timeoutS: placement.replica_timeout_s, ...(placement.shard_optimizer ? { shardOptimizer: true } : {}) } }
          : {}),
        ...(placement.rollout ? { rollout: rolloutOf(placement) } : {}),
      },
    };
  });
}

function rolloutOf(placement: RunConfig['placement'][string]): RolloutEngines {
  const r = placement.rollout!;
  const broadcast = r.weights === 'broadcast' ? { broadcast: { rendezvous: r.rendezvous, joinTimeoutS: placement.replica_join_timeout_s, timeoutS: placement.replica_timeout_s } } : {};
  return { taskQueue: r.task_queue, device: r.device, engines: r.engines, ...broadcast };
}

/** The run's policies, in the order their agents first appear. */
export function policiesOf(cfg: RunConfig): PolicySpec[] {
  const byName = new Map<string, PolicySpec>();
  for (const { agent, policy } of agentPolicies(cfg)) {
    const existing = byName.get(policy.name);
    if (existing) existing.agents.push(agent);
    else byName.set(policy.name, { ...policy, agents: [agent] });
  }
  return [...byName.values()];
}

/** The task queue of one replica's updates: each rank's policy worker serves its own. */
export const replicaQueue = (taskQueue: string, rank: number) => `${taskQueue}-r${rank}`;

/** A queue that reaches each worker holding the policy once: its own, or each replica's update queue; and each rollout engine's. */
export function workerQueues(p: PolicySpec): string[] {
  const n = p.replicas?.count ?? 1;
  const trainers = n === 1 ? [p.taskQueue] : Array.from({ length: n }, (_, r) => replicaQueue(p.taskQueue, r));
  return [...trainers, ...rolloutQueues(p)];
}

/** Where the policy's turns go: its rollout engines' shared queue, else its own. */
export const turnQueue = (p: PolicySpec) => p.rollout?.taskQueue ?? p.taskQueue;

/** One queue per rollout engine of the policy (none when colocated), where its syncs reach it. */
export function rolloutQueues(p: PolicySpec): string[] {
  return p.rollout ? Array.from({ length: p.rollout.engines }, (_, r) => replicaQueue(p.rollout!.taskQueue, r)) : [];
}

/** The policies updates train: all but scripted players. */
export const trainable = (policies: PolicySpec[]) => policies.filter((p) => p.kind !== 'scripted');

/** The policy that acts for `agent`. */
export function policyOfAgent(policies: PolicySpec[], agent: string): PolicySpec {
  const p = policies.find((x) => x.agents.includes(agent));
  if (!p) throw new Error(`no policy serves agent ${agent}`);
  return p;
}

/** What a valid schema can still get wrong about policies; each issue names its field. */
export function policyIssues(cfg: RunConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const [key, m] of Object.entries(cfg.base_models)) {
    if (!m.scripted && !m.path) issues.push({ path: `base_models.${key}.path`, message: 'a model path is required (or scripted: true)' });
  }
  const all = agentPolicies(cfg);
  const lora = loraOf(cfg);
  if (all.some((a) => a.policy.kind === 'lora')) {
    if (lora.rank <= 0) issues.push({ path: 'lora_rank', message: 'LoRA policies need lora_rank > 0' });
    if (lora.alpha <= 0) issues.push({ path: 'lora_alpha', message: 'LoRA policies need lora_alpha > 0' });
  }
  for (const a of all) {
    const path = `agent_policy_configs.agent_configs.${a.key}`;
    // A base model that carries adapters stays frozen, so no agent may train it whole.
    const adapters = all.filter((o) => o.policy.base === a.policy.base && o.policy.kind === 'lora');
    if (a.policy.kind === 'full' && adapters.length > 0) {
      issues.push({
        path: `${path}.specialization`,
        message: `base model "${a.policy.base}" carries LoRA adapters (agents ${adapters.map((o) => o.agent).join(', ')}) and stays frozen; agent "${a.agent}" cannot train it as a full model`,
      });
    }
    const clash = all.find((o) => o.policy.name === a.policy.name && o.policy.base !== a.policy.base);
    if (clash) {
      issues.push({ path: `${path}.name`, message: `policy name "${a.policy.name}" is used on two base models ("${a.policy.base}" and "${clash.policy.base}")` });
    }
  }
  return [...issues, ...replicaIssues(cfg), ...rolloutIssues(cfg)];
}

/**
 * Rollout engines serve other task queues than any trainer, every base on one rollout queue has
 * the same count of engines, and a retention keeps the versions a rollout engine may still be asked
 * for (the newest N + 1 under max_staleness N).
 */
function rolloutIssues(cfg: RunConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const trainerQueues = new Set(Object.values(cfg.base_models).map((m) => (cfg.placement[m.name] ?? DEFAULT_PLACEMENT).task_queue));
  const engines = new Map<string, string>();
  for (const [base, p] of Object.entries(cfg.placement)) {
    if (!p.rollout) continue;
    const at = `placement.${base}.rollout`;
    if (trainerQueues.has(p.rollout.task_queue)) {
      issues.push({ path: `${at}.task_queue`, message: `"${p.rollout.task_queue}" is a trainer's task queue; rollout engines need a queue of their own` });
    }
    const other = engines.get(p.rollout.task_queue);
    if (other !== undefined && cfg.placement[other].rollout!.engines !== p.rollout.engines) {
      issues.push({ path: `${at}.engines`, message: `rollout queue "${p.rollout.task_queue}" serves "${other}" with ${cfg.placement[other].rollout!.engines} engine(s); every base model on it needs the same count` });
    }
    engines.set(p.rollout.task_queue, other ?? base);
    if (p.rollout.weights === 'broadcast') issues.push(...broadcastIssues(cfg, base));
  }
  const keep = cfg.checkpoints.keep_last;
  const need = cfg.rollout.max_staleness + 1;
  if (engines.size > 0 && keep !== null && keep < need) {
    issues.push({ path: 'checkpoints.keep_last', message: `rollout engines load versions from checkpoints: keep at least the newest ${need} (rollout.max_staleness + 1), not ${keep}` });
  }
  return issues;
}

/** The engine type of a device: cpu or cuda. */
const deviceType = (d: string) => d.split(':')[0];

/**
 * A broadcast sends the trainer's weights in its dtype, so both ends need one (dtype auto differs by
 * device type); and each trainer engine serves its rounds' rendezvous on an address of its own.
 */
function broadcastIssues(cfg: RunConfig, base: string): ConfigIssue[] {
  const p = cfg.placement[base];
  const r = p.rollout!;
  const issues: ConfigIssue[] = [];
  if (p.dtype === 'auto' && deviceType(p.device) !== deviceType(r.device)) {
    issues.push({ path: `placement.${base}.dtype`, message: `rollout.weights broadcast sends the trainer's weights in its dtype; with auto, a trainer on ${p.device} and rollout engines on ${r.device} would differ: set float32 or bfloat16` });
  }
  for (const [other, q] of Object.entries(cfg.placement)) {
    if (q.task_queue === p.task_queue) continue; // the same trainer engine serves both
    const taken = [...(q.replicas > 1 ? [q.rendezvous] : []), ...(q.rollout?.weights === 'broadcast' ? [q.rollout.rendezvous] : [])];
    if (taken.includes(r.rendezvous)) {
      issues.push({ path: `placement.${base}.rollout.rendezvous`, message: `${r.rendezvous} is also a rendezvous of "${other}", trained on another task queue; give each trainer engine its own port` });
    }
  }
  return issues;
}

/**
 * The policy workers of one task queue are one set of replicas, so every base model placed on it
 * has the same count; two sets of replicas (two rank-0 engines) cannot serve their rendezvous
 * store on the same address; and an optimizer is split only over replicas.
 */
function replicaIssues(cfg: RunConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const byQueue = new Map<string, string>();
  const byAddress = new Map<string, string>();
  for (const [base, p] of Object.entries(cfg.placement)) {
    const other = byQueue.get(p.task_queue);
    if (other !== undefined && cfg.placement[other].replicas !== p.replicas) {
      issues.push({ path: `placement.${base}.replicas`, message: `task queue "${p.task_queue}" serves "${other}" with ${cfg.placement[other].replicas} replica(s); every base model on it needs the same count` });
    }
    byQueue.set(p.task_queue, other ?? base);
    if (p.shard_optimizer && p.replicas < 2) {
      issues.push({ path: `placement.${base}.shard_optimizer`, message: 'splits the optimizer state over replicas; set replicas to 2 or more, or shard_optimizer to false' });
    }
    if (p.replicas < 2) continue;
    const clash = byAddress.get(p.rendezvous);
    if (clash !== undefined && cfg.placement[clash].task_queue !== p.task_queue) {
      issues.push({ path: `placement.${base}.rendezvous`, message: `${p.rendezvous} is also the rendezvous of "${clash}" on another task queue; give each set of replicas its own port` });
    }
    byAddress.set(p.rendezvous, clash ?? base);
  }
  return issues;
}
