// A policy worker: owns one tensor engine (a Python child process pinned to one device) and
// serves agent turns and policy updates on its task queue.
//   node --import tsx services/policy-worker.ts --task-queue tandem-policy-0 --device cpu
import { Worker } from '@temporalio/worker';
import { createAgentTurnActivities } from '../activities/agentTurn.js';
import { createUpdateActivities } from '../activities/updatePolicy.js';
import { lazyProducer, makeKafka } from '../infra/kafka/client.js';
import { READY_LINE, stackSettings } from '../infra/settings.js';
import { EngineClient } from './engine/client.js';
import { connectTemporal, option } from './worker-common.js';

const s = stackSettings();
const taskQueue = option(process.argv, 'task-queue', s.policyQueue);
const device = option(process.argv, 'device', s.policyDevice);
const kafka = makeKafka(s.kafkaBrokers, `tandem-${taskQueue}`);
const producer = lazyProducer(kafka);
const engine = new EngineClient(device);
await engine.start();
const deps = { engine, producer, device, dataDir: s.dataDir };
const worker = await Worker.create({
  connection: await connectTemporal(),
  namespace: s.namespace,
  taskQueue,
  activities: { ...createAgentTurnActivities(deps), ...createUpdateActivities({ ...deps, kafka }) },
  maxConcurrentActivityTaskExecutions: 8,
});
console.log(`${READY_LINE} policy-worker on task queue ${taskQueue}, device ${device}`);
await worker.run();
await Promise.all([engine.stop(), producer.close()]);
