// A stand-in policy worker: serves the policy activities (policyVersion, agentTurn, updatePolicy,
// releasePolicy) under their own names on a task queue of its own, with no engine and no Kafka.
// Its one simulated device (device.ts) takes the time a modelled GPU would (model.ts): agent turns
// share one continuous decode batch, updates take the device alone (--update-model exclusive), share
// its time with generation half and half while both have work (shared: Tandem's engine with an
// update sent with overlap, on one device) or run beside generation without slowing it (overlap:
// separate GPUs), or (split) serve a policy placed with a rollout engine (placement.<base>.rollout:
// its turns on <Q>-rollout, its syncs on <Q>-rollout-r0): the turns on one device, which also takes
// each sync (--refit-ms of its time, shared half and half with the rows in flight, as a weight copy
// competes with decoding), the updates on a second device that generates nothing. Used by
// bench/async/run.ts, which passes the costs in (scaled) milliseconds; alone, it serves the
// reference's math shape on an H100 at full scale.
//   node --import tsx bench/async/standin.ts [--task-queue Q] [--update-model exclusive|overlap|shared|split] [--refit-ms X]
//     [--step-weights-ms X] [--step-row-ms X] [--step-row-flops-ms X] [--prefill-ms X]
//     [--update-ms-per-sample X] [--max-rows N] [--response-tokens N] [--spread F]
//     [--text-chars N] [--timeline FILE] [--max-activities N]
// Each candidate's text is fixed per agent and scores without crashing any env: a tool agent's holds
// no code block (nothing runs in the sandbox), the math reasoner boxes 0, the plan agent gives no
// action list; so every episode plays all its turns. --text-chars pads each text to about that
// many characters (payloads over 4 KiB go to Postgres, as long real responses do).
// The timeline (--timeline, JSON lines): every turn's and update's start and end (epoch ms) with its
// run and iteration, and the device's busy milliseconds so far at each; an update's also its device
// milliseconds (`ms`: with shared, its wall time from start to end is longer while rows decode); a
// sync's (split) its run, policy, version and wall time.
import { createWriteStream } from 'node:fs';
import { activityInfo } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import type { AgentTurnInput, CandidateText } from '../../activities/agentTurn.js';
import type { SyncResult } from '../../activities/policy.js';
import type { UpdateInput, UpdateSummary } from '../../activities/updatePolicy.js';
import { sampleIdOf } from '../../domain/ids.js';
import type { PolicyRef } from '../../policy/ref.js';
import { readyLine } from '../../infra/settings.js';
import { connectTemporal, option, workerOptions } from '../../services/workerCommon.js';
import { Device, STANDIN_MODELS, type StandinModel } from './device.js';
import { deviceCosts, GPUS, lengthOf, maxRowsOf, MODELS, type WorkShape } from './model.js';

const argv = process.argv;
const num = (name: string, fallback: number) => {
  const v = Number(option(argv, name, String(fallback)));
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name}: a number >= 0, not '${option(argv, name, '')}'`);
  return v;
};
// Defaults: the reference's math shape (32 problems x K=8, 4 turns x 2 agents, full fine-tune) on an
// H100, unscaled.
const MATH: WorkShape = { problems: 32, k: 8, agentTurns: 8, promptTokens: 1500, responseTokens: 1024, spread: 0.5, training: 'full' };
const model = option(argv, 'update-model', 'exclusive') as StandinModel;
if (!STANDIN_MODELS.includes(model)) throw new Error(`--update-model: ${STANDIN_MODELS.join(', ')}, not '${model}'`);
const split = model === 'split';
const base = deviceCosts(GPUS.h100, MODELS['qwen3-1.7b'], MATH);
const costs = {
  stepWeightsMs: num('step-weights-ms', base.stepWeightsMs),
  stepRowMs: num('step-row-ms', base.stepRowMs),
  stepRowFlopsMs: num('step-row-flops-ms', base.stepRowFlopsMs),
  prefillMs: num('prefill-ms', base.prefillMs),
  updateMsPerSample: num('update-ms-per-sample', base.updateMsPerSample),
};
const maxRows = num('max-rows', maxRowsOf(GPUS.h100, MODELS['qwen3-1.7b'], MATH, model === 'exclusive'));
const refitMs = num('refit-ms', 0);
const responseTokens = num('response-tokens', MATH.responseTokens);
const spread = num('spread', MATH.spread);
const textChars = num('text-chars', 0);
const taskQueue = option(argv, 'task-queue', `tandem-standin-${process.pid}`);
const timelinePath = option(argv, 'timeline', '');
const timeline = timelinePath ? createWriteStream(timelinePath, { flags: 'a' }) : null;
const record = (r: Record<string, unknown>) => timeline?.write(`${JSON.stringify(r)}\n`);

/** The device that generates; with split also the one syncs take time from, while `trainer` updates. */
const device = new Device(costs, split ? 'shared' : model, maxRows);
const trainer = split ? new Device(costs, 'exclusive', 1) : device;

/** What each agent answers: scored by every env without error, never ending an episode early. */
function textOf(agent: string): string {
  const answer = agent === 'reasoning_generator' ? 'The answer is \\boxed{0}.' : agent === 'plan_agent' ? 'No plan this turn.' : 'No program this turn.';
  const pad = Math.max(0, textChars - answer.length);
  return `${'step '.repeat(Math.ceil(pad / 5)).slice(0, pad)}${answer}`;
}

/** K per run, from its turns (an update's input does not carry it). */
const kOf = new Map<string, number>();

const activities = {
  async policyVersion(_policy: PolicyRef): Promise<number> {
    return 0;
  },

  async releasePolicy(_policy: PolicyRef): Promise<void> {},

  async agentTurn(input: AgentTurnInput): Promise<CandidateText[]> {
    const attempt = activityInfo().attempt;
    kOf.set(input.policy.runId, input.k);
    const ids = Array.from({ length: input.k }, (_, i) => sampleIdOf(input.episodeId, input.turn, input.agent, i, attempt));
    const lengths = ids.map((id) => lengthOf(id, responseTokens, spread));
    const start = Date.now();
    const busy0 = device.busyMs;
    await device.generate(lengths, costs.prefillMs);
    record({ ev: 'turn', run: input.policy.runId, it: input.iteration, start, end: Date.now(), busy0, busy1: device.busyMs, rows: input.k });
    const text = textOf(input.agent);
    return ids.map((sampleId, i) => ({ sampleId, text, finishReason: 'stop', responseTokens: lengths[i], policyVersion: input.policyVersion }));
  },

  async updatePolicy(input: UpdateInput): Promise<UpdateSummary> {
    const queued = Date.now();
    let start = queued;
    const ms = input.expectedSamples * costs.updateMsPerSample;
    await trainer.update(ms, () => {
      start = Date.now();
    });
    const { runId, spec } = input.policy;
    record({ ev: 'update', run: runId, it: input.iteration, policy: spec.name, queued, start, end: Date.now(), ms, busy: device.busyMs });
    return {
      fromVersion: input.fromVersion,
      toVersion: input.fromVersion + 1,
      samples: input.expectedSamples,
      groups: Math.round(input.expectedSamples / (kOf.get(runId) ?? 1)),
      replayed: false,
      checkpoint: `standin:${runId}/${spec.name}/v${input.fromVersion + 1}`,
      metrics: { loss: 0, tokens: input.expectedSamples * responseTokens, update_s: ms / 1000 },
    };
  },

  async syncPolicy(input: { policy: PolicyRef; version: number }): Promise<SyncResult> {
    const start = Date.now();
    await device.update(refitMs);
    record({ ev: 'sync', run: input.policy.runId, policy: input.policy.spec.name, version: input.version, start, end: Date.now() });
    return { policy: `${input.policy.runId}/${input.policy.spec.name}`, version: input.version, installed: true, copy: null, seconds: (Date.now() - start) / 1000 };
  },
};

const connection = await connectTemporal();
// split: the rollout engine's queue (its turns) and its own (its syncs, release), as placement.<base>.rollout names them.
const queues = split ? [taskQueue, `${taskQueue}-rollout`, `${taskQueue}-rollout-r0`] : [taskQueue];
const workers = await Promise.all(queues.map((queue) => Worker.create({
  ...workerOptions(connection, queue),
  activities,
  maxConcurrentActivityTaskExecutions: num('max-activities', 512),
})));
console.log(readyLine(`standin on task queue ${taskQueue}, updates ${model}, max rows ${maxRows}${split ? `, rollout engine on ${taskQueue}-rollout, refit ${refitMs} ms` : ''}`));
await Promise.all(workers.map((w) => w.run()));
timeline?.end();
await connection.close();
