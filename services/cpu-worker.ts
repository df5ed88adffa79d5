// The CPU worker: runs the workflows (trainingRun, episode) and the CPU activities (env reset,
// candidate scoring, publishing, a run's update groups) on task queue `tandem-cpu`. Its Prometheus metrics are served at
// http://127.0.0.1:<TANDEM_CPU_WORKER_METRICS_PORT>/metrics.
import { Worker } from '@temporalio/worker';
import { createEnvActivities } from '../activities/env.js';
import { createPublishActivities } from '../activities/publish.js';
import { createUpdateGroupActivities } from '../activities/updateGroups.js';
import { lazyProducer, makeKafka } from '../infra/kafka/client.js';
import { CPU_QUEUE, readyLine, stackSettings } from '../infra/settings.js';
import { bundleWorkflows } from '../infra/temporal/bundle.js';
import { instrumentActivities } from './metrics/activities.js';
import { createWorkerMetrics } from './metrics/workerMetrics.js';
import { connectTemporal, startMetricsEndpoint, workerOptions } from './workerCommon.js';

const s = stackSettings();
const metrics = createWorkerMetrics('cpu-worker');
const kafka = makeKafka(s.kafkaBrokers, 'tandem-cpu-worker');
const producer = lazyProducer(kafka);
const worker = await Worker.create({
  ...workerOptions(await connectTemporal(), CPU_QUEUE),
  workflowBundle: await bundleWorkflows(),
  activities: instrumentActivities({ ...createEnvActivities(), ...createPublishActivities(producer), ...createUpdateGroupActivities(kafka) }, metrics),
  maxConcurrentActivityTaskExecutions: 4,
});
const metricsServer = await startMetricsEndpoint(s.cpuWorkerMetricsPort, metrics.registry);
console.log(readyLine(`cpu-worker on task queue ${CPU_QUEUE}`));
await worker.run();
await producer.close();
metricsServer.close();
