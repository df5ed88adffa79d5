// The unit tier's workflow harness: Tandem's real workflows (workflows/index.ts, bundled once per
// test file as the CPU worker bundles them) on a local Temporal dev server, with every activity
// mocked by name. No Kafka, Postgres, engine or sandbox is involved.
//   - The server is the Temporal CLI that infra/setup.sh installs (.venv/bin/temporal): the SDK
//     cannot download a test server here. Its dev server has no time skipping, so workflow time
//     is wall time; none of Tandem's workflows waits on a timer, so none is needed.
//   - Workers: `tandem-cpu` (the workflows, and envReset, envResets, scoreCandidates, scriptedTurn,
//     publishEvents, publishEpisode, startUpdateGroups, releaseUpdateGroups) and `tandem-policy-0` (policyVersion, agentTurn,
//     updatePolicy, syncPolicy, releasePolicy), with the real activities' names, inputs and outputs; the same
//     policy activities also on the update queues of two replicas (tandem-policy-0-r0, -r1), and on
//     a rollout queue and its two engines' own (tandem-rollout-0, -r0, -r1; placement.<base>.rollout).
//   - The defaults: envReset(s) and scriptedTurn are the real activities (pure for an env without a
//     dataset file); scoreCandidates scores with the env's own pure logic, but runs no program (a
//     program the answer asks for "ran" and printed nothing); agentTurn answers K texts that name
//     the candidate; policyVersion is 0; updatePolicy steps from `fromVersion` to the next
//     version with the samples it was told to expect; syncPolicy installs the version it was given;
//     publishing, releasing and the update groups only record.
//   - Every call is recorded with its input and output, in the order the activities ran. A test
//     replaces an activity's behaviour through `mocks` (reset() restores the defaults).
import assert from 'node:assert/strict';
import { Context } from '@temporalio/activity';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { CandidateText } from '../../activities/agentTurn.js';
import { createEnvActivities } from '../../activities/env.js';
import type { CpuActivities, PolicyActivities } from '../../activities/index.js';
import type { TrajectoryRecord } from '../../activities/records.js';
import { loadRunConfig } from '../../configs/load.js';
import type { RunConfig } from '../../configs/schema.js';
import type { EventEnvelope, TandemEvent } from '../../domain/events.js';
import { envOf } from '../../envs/index.js';
import type { ProgramRun } from '../../envs/types.js';
import { CPU_QUEUE, projectPath } from '../../infra/settings.js';
import { temporalDynamicConfigArgs } from '../../infra/stack.js';
import { bundleWorkflows } from '../../infra/temporal/bundle.js';
import { replicaQueue } from '../../policy/spec.js';
import { heartbeatWhileRunning } from '../../services/heartbeat.js';
import { eventually } from './eventually.js';

type Activities = CpuActivities & PolicyActivities;
type ActivityName = keyof Activities;
type Input<N extends ActivityName> = Parameters<Activities[N]>[0];
type Output<N extends ActivityName> = Awaited<ReturnType<Activities[N]>>;

/** One activity execution: its input, and its output once it returned. */
export interface ActivityCall<N extends ActivityName = ActivityName> {
  name: N;
  /** The task queue it was taken from. */
  queue: string;
  /** The attempt's start-to-close timeout, as the workflow scheduled it. */
  startToCloseMs: number;
  input: Input<N>;
  output?: Output<N>;
}

/** The policy worker's queue in the run configs the tests use (placement's default). */
const POLICY_QUEUE = 'tandem-policy-0';
/** The update queues of two replicas on it (placement.<base>.replicas=2; policy/spec.ts replicaQueue). */
const REPLICA_QUEUES = [replicaQueue(POLICY_QUEUE, 0), replicaQueue(POLICY_QUEUE, 1)];
/** A rollout queue and its two engines' own (placement.<base>.rollout: task_queue tandem-rollout-0, engines 2). */
export const ROLLOUT_QUEUE = 'tandem-rollout-0';
const ROLLOUT_QUEUES = [ROLLOUT_QUEUE, replicaQueue(ROLLOUT_QUEUE, 0), replicaQueue(ROLLOUT_QUEUE, 1)];
const CPU_NAMES = ['envReset', 'envResets', 'scoreCandidates', 'scriptedTurn', 'publishEvents', 'publishEpisode', 'startUpdateGroups', 'releaseUpdateGroups'] as const;
const POLICY_NAMES = ['policyVersion', 'agentTurn', 'updatePolicy', 'syncPolicy', 'publishPolicy', 'releasePolicy'] as const;

/** What a program "printed" in the unit tier: nothing (no sandbox here). */
const NO_RUN: ProgramRun = { exitCode: 0, stdout: '', stderr: '', timedOut: false };

/** The activities' default behaviour (see the head comment). */
export function defaultMocks(): Activities {
  const real = createEnvActivities();
  return {
    envReset: real.envReset,
    envResets: real.envResets,
    scriptedTurn: real.scriptedTurn,
    async scoreCandidates(input) {
      const { def } = envOf(input.env);
      return input.texts.map((text) => def.score(input.agent, input.state, text, def.program(input.agent, text, input.state) === null ? null : NO_RUN, input.alpha));
    },
    async publishEvents() {},
    async publishEpisode() {},
    async startUpdateGroups() {},
    async releaseUpdateGroups() {},
    async policyVersion() {
      return 0;
    },
    async agentTurn(input) {
      return Array.from({ length: input.k }, (_, i) => candidate(input, `candidate ${i} of ${input.agent} at turn ${input.turn}`, i));
    },
    async updatePolicy(input) {
      const toVersion = input.fromVersion + 1;
      return {
        fromVersion: input.fromVersion,
        toVersion,
        samples: input.expectedSamples,
        groups: 1,
        replayed: false,
        checkpoint: `/mock/${input.policy.runId}/${input.policy.spec.name}/v${toVersion}`,
        metrics: { loss: 0.25, tokens: 8 * input.expectedSamples },
      };
    },
    async syncPolicy(input) {
      return { policy: `${input.policy.runId}/${input.policy.spec.name}`, version: input.version, installed: true, copy: null, seconds: 0.5 };
    },
    async publishPolicy(input) {
      return { policy: `${input.policy.runId}/${input.policy.spec.name}`, version: input.version, engines: input.round.world - 1, sent: true, bytes: 1024, seconds: 0.25, join_s: 0.1, send_s: 0.1, check_s: 0.05 };
    },
    async releasePolicy() {},
  };
}

/** A candidate as agentTurn returns it, with the sample id the real activity gives it (attempt 1). */
export function candidate(input: Input<'agentTurn'>, text: string, i: number): CandidateText {
  return { sampleId: `${input.episodeId}/t${input.turn}/${input.agent}/c${i}/a1`, text, finishReason: 'stop', responseTokens: 4 };
}

export interface WorkflowHarness {
  env: TestWorkflowEnvironment;
  /** Every activity call since the last reset(), in the order they started. */
  calls: ActivityCall[];
  /** What each activity does; replace one by name in a test. */
  mocks: Activities;
  /** Restores the default mocks and forgets the recorded calls. */
  reset(): void;
  close(): Promise<void>;
}

Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: { core: 'WARN' }, forward: {} } } });

let bundle: Promise<{ code: string }> | undefined;

/**
 * A dev server, with the stack's dynamic config (infra/stack.ts), and the two workers on it.
 * `dynamicConfig` entries (`key=value`) go to the server too, e.g.
 * `limit.historyCount.suggestContinueAsNew=20` to force continue-as-new.
 */
export async function startWorkflowHarness(opts: { dynamicConfig?: string[] } = {}): Promise<WorkflowHarness> {
  bundle ??= bundleWorkflows();
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: projectPath('.venv/bin/temporal') },
      log: { format: 'pretty', level: 'error' },
      extraArgs: temporalDynamicConfigArgs((opts.dynamicConfig ?? []).join(',')),
    },
  });
  const harness: WorkflowHarness = {
    env,
    calls: [],
    mocks: defaultMocks(),
    reset() {
      harness.calls.length = 0;
      harness.mocks = defaultMocks();
    },
    close: async () => {},
  };
  const recorded = (names: readonly ActivityName[]) =>
    Object.fromEntries(
      names.map((name) => [
        name,
        async (input: never) => {
          const { taskQueue, startToCloseTimeoutMs } = Context.current().info;
          const call: ActivityCall = { name, queue: taskQueue, startToCloseMs: startToCloseTimeoutMs, input };
          harness.calls.push(call);
          call.output = await (harness.mocks[name] as (i: never) => Promise<never>)(input);
          return call.output;
        },
      ]),
    );
  const workerOptions = { connection: env.nativeConnection, namespace: env.namespace ?? 'default', interceptors: { activity: [heartbeatWhileRunning] } };
  const workers = await Promise.all([
    Worker.create({ ...workerOptions, taskQueue: CPU_QUEUE, workflowBundle: await bundle, activities: recorded(CPU_NAMES) }),
    ...[POLICY_QUEUE, ...REPLICA_QUEUES, ...ROLLOUT_QUEUES].map((taskQueue) => Worker.create({ ...workerOptions, taskQueue, activities: recorded(POLICY_NAMES) })),
  ]);
  const running = Promise.all(workers.map((w) => w.run()));
  harness.close = async () => {
    for (const w of workers) w.shutdown();
    await running;
    await env.teardown();
  };
  return harness;
}

/** The run config FILE with overrides, validated. */
export function runConfig(file: string, overrides: string[] = []): RunConfig {
  const loaded = loadRunConfig(file, overrides);
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.issues));
  return loaded.config;
}

/** The calls of one activity, in order. */
export function callsOf<N extends ActivityName>(calls: ActivityCall[], name: N): ActivityCall<N>[] {
  return calls.filter((c): c is ActivityCall<N> => c.name === name);
}

/** The inputs of one activity's calls, in order. */
export function inputsOf<N extends ActivityName>(calls: ActivityCall[], name: N): Input<N>[] {
  return callsOf(calls, name).map((c) => c.input);
}

/** Every event published (publishEvents and publishEpisode), in publishing order. */
export function published(calls: ActivityCall[]): EventEnvelope[] {
  return calls.flatMap((c) => (c.name === 'publishEvents' ? (c.input as Input<'publishEvents'>) : c.name === 'publishEpisode' ? (c.input as Input<'publishEpisode'>).events : []));
}

/** The published events of one type. */
export function eventsOf<T extends TandemEvent['type']>(calls: ActivityCall[], type: T): Extract<TandemEvent, { type: T }>[] {
  return published(calls)
    .map((e) => e.event)
    .filter((e): e is Extract<TandemEvent, { type: T }> => e.type === type);
}

/** The scored samples published for updates (publishEpisode), in publishing order. */
export function publishedSamples(calls: ActivityCall[]): TrajectoryRecord[] {
  return inputsOf(calls, 'publishEpisode').flatMap((p) => p.samples);
}

/**
 * A latch a mocked activity waits at: `pass()` (inside the activity) marks it reached and waits
 * until the test calls `open()`. The worker's heartbeat interceptor keeps a waiting activity alive.
 */
export function gate() {
  let open!: () => void;
  let reach!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (reach = r));
  return {
    reached,
    open,
    async pass(): Promise<void> {
      reach();
      await opened;
    },
  };
}

/** Polls quickly (workflows on mocks move in milliseconds) until `check` returns a value. */
export const until = <T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000) => eventually(what, check, timeoutMs, 50);
