// A policy worker: owns one tensor engine (a Python child process pinned to one device) and
// serves agent turns and policy updates on its task queue.
//   node --import tsx services/policy-worker.ts --task-queue tandem-policy-0 --device cpu \
//     [--replica 0] [--model PATH ...] [--metrics-port 9465] [--max-activities 512]
// (--replica R, default 0: this worker is replica R of the policies placed on its task queue; it
// also serves that replica's own queue, <task-queue>-rR, where the updates over replicas and the
// releases reach each replica: policy/spec.ts replicaQueue, workflows/updates.ts.)
// (the metrics port defaults to TANDEM_POLICY_WORKER_METRICS_PORT; metrics are served at /metrics.
// --max-activities, default TANDEM_POLICY_WORKER_ACTIVITIES or 512, caps the activities it runs at
// once: every agent turn in flight is one, so it bounds the engine's batch of requests.)
// Agent turns go to the engine as they come: it decodes them together, each joining the running
// batch at its next step (services/engine/tandem_engine/batching.py).
// Each --model is checked before the worker reports ready, so a missing or malformed model
// path stops the worker at start with the path and the reason.
import { Worker } from '@temporalio/worker';
import { createAgentTurnActivities } from '../activities/agentTurn.js';
import { createUpdateActivities } from '../activities/updatePolicy.js';
import { lazyProducer, makeKafka } from '../infra/kafka/client.js';
import { createPolicyActivities } from '../activities/policy.js';
import { replicaQueue } from '../policy/spec.js';
import { projectPath, readyLine, stackSettings } from '../infra/settings.js';
import { instrumentActivities } from './metrics/activities.js';
import { MeteredEngineClient, observeEngine } from './metrics/engine.js';
import { createEngineMetrics, createWorkerMetrics } from './metrics/workerMetrics.js';
import { connectTemporal, option, options, portOption, startMetricsEndpoint, workerOptions } from './workerCommon.js';

const s = stackSettings();
const taskQueue = option(process.argv, 'task-queue', s.policyQueue);
const device = option(process.argv, 'device', s.policyDevice);
const metricsPort = portOption(process.argv, 'metrics-port', s.policyWorkerMetricsPort);
const replica = Number(option(process.argv, 'replica', '0'));
if (!Number.isInteger(replica) || replica < 0) throw new Error(`--replica: a replica number (0, 1, ...), not '${option(process.argv, 'replica', '')}'`);
const metrics = createWorkerMetrics('policy-worker');
const engineMetrics = createEngineMetrics(metrics.registry);
const engine = new MeteredEngineClient(device, engineMetrics);
await engine.start();
for (const model of options(process.argv, 'model')) {
  try {
    await engine.request('inspect', { model_path: projectPath(model) });
  } catch (err) {
    console.error(`policy-worker: model ${model}: ${(err as Error).message}`);
    await engine.stop();
    process.exit(1);
  }
}
observeEngine(metrics.registry, engine);
const kafka = makeKafka(s.kafkaBrokers, `tandem-${taskQueue}`);
const producer = lazyProducer(kafka);
const deps = { engine, producer, device, dataDir: s.dataDir, taskQueue };
const activities = instrumentActivities({ ...createPolicyActivities(deps), ...createAgentTurnActivities(deps), ...createUpdateActivities({ ...deps, kafka }) }, metrics);
const connection = await connectTemporal();
const workers = await Promise.all([taskQueue, replicaQueue(taskQueue, replica)].map((queue) => Worker.create({
  ...workerOptions(connection, queue),
  activities,
  maxConcurrentActivityTaskExecutions: Number(option(process.argv, 'max-activities', process.env.TANDEM_POLICY_WORKER_ACTIVITIES ?? '512')),
})));
const metricsServer = await startMetricsEndpoint(metricsPort, metrics.registry);
console.log(readyLine(`policy-worker on task queue ${taskQueue} (replica ${replica}), device ${device}`));
await Promise.all(workers.map((w) => w.run()));
await Promise.all([engine.stop(), producer.close()]);
metricsServer.close();
