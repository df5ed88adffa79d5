// A policy worker: owns one tensor engine (a Python child process pinned to one device) and
// serves agent turns and policy updates on its task queue.
//   node --import tsx services/policy-worker.ts --task-queue tandem-policy-0 --device cpu \
//     [--model PATH ...] [--batch-window-ms 20] [--batch-max-tokens 16384] [--metrics-port 9465]
// (the batch options default to TANDEM_BATCH_WINDOW_MS and TANDEM_BATCH_MAX_TOKENS when set, the
// metrics port to TANDEM_POLICY_WORKER_METRICS_PORT; metrics are served at /metrics on it)
// Each --model is checked before the worker reports ready, so a missing or malformed model
// path stops the worker at start with the path and the reason.
import { Worker } from '@temporalio/worker';
import { createAgentTurnActivities } from '../activities/agentTurn.js';
import { createUpdateActivities } from '../activities/updatePolicy.js';
import { lazyProducer, makeKafka } from '../infra/kafka/client.js';
import { createPolicyActivities } from '../policy/activities.js';
import { projectPath, READY_LINE, stackSettings } from '../infra/settings.js';
import { GenerateBatcher } from '../infra/engine/batcher.js';
import { instrumentActivities } from './metrics/activities.js';
import { MeteredEngineClient, observeBatcherQueue, recordBatch } from './metrics/engine.js';
import { createEngineMetrics, createWorkerMetrics } from './metrics/workerMetrics.js';
import { heartbeatWhileRunning } from './heartbeat.js';
import { connectTemporal, option, options, portOption, startMetricsEndpoint } from './worker-common.js';

const s = stackSettings();
const taskQueue = option(process.argv, 'task-queue', s.policyQueue);
const device = option(process.argv, 'device', s.policyDevice);
const metricsPort = portOption(process.argv, 'metrics-port', s.policyWorkerMetricsPort);
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
const batcher = new GenerateBatcher(engine, {
  windowMs: Number(option(process.argv, 'batch-window-ms', process.env.TANDEM_BATCH_WINDOW_MS ?? '20')),
  maxTokens: Number(option(process.argv, 'batch-max-tokens', process.env.TANDEM_BATCH_MAX_TOKENS ?? '16384')),
  onBatch: recordBatch(engineMetrics),
});
observeBatcherQueue(metrics.registry, batcher);
const kafka = makeKafka(s.kafkaBrokers, `tandem-${taskQueue}`);
const producer = lazyProducer(kafka);
const deps = { engine, batcher, producer, device, dataDir: s.dataDir };
const worker = await Worker.create({
  connection: await connectTemporal(),
  namespace: s.namespace,
  taskQueue,
  interceptors: { activity: [heartbeatWhileRunning] },
  activities: instrumentActivities({ ...createPolicyActivities(deps), ...createAgentTurnActivities(deps), ...createUpdateActivities({ ...deps, kafka }) }, metrics),
  maxConcurrentActivityTaskExecutions: 16,
});
const metricsServer = await startMetricsEndpoint(metricsPort, metrics.registry);
console.log(`${READY_LINE} policy-worker on task queue ${taskQueue}, device ${device}`);
await worker.run();
await Promise.all([engine.stop(), producer.close()]);
metricsServer.close();
