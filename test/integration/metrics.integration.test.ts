// The workers' Prometheus endpoints on the test stack: after a short run, the activity, engine,
// token and update metrics have grown.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { before, test } from 'node:test';
import { promisify } from 'node:util';
import { settings } from '../support/stack.js';

type Scrape = Map<string, number>;

/** Scrapes one endpoint into `name{labels}` -> value, without the `worker` default label. */
async function scrape(port: number): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(res.status, 200, `GET :${port}/metrics`);
  const values: Scrape = new Map();
  for (const line of (await res.text()).split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const cut = line.lastIndexOf(' ');
    const series = line.slice(0, cut).replace(/worker="[^"]*"/, '').replace(/\{,/, '{').replace(/,(?=,|\})/, '').replace('{}', '');
    values.set(series, Number(line.slice(cut + 1)));
  }
  return values;
}

const grew = (before: Scrape, after: Scrape, key: string) => {
  assert.ok(after.has(key), `${key} is served`);
  return after.get(key)! - (before.get(key) ?? 0);
};

const cpu: Scrape[] = [];
const policy: Scrape[] = [];

before(async () => {
  cpu.push(await scrape(settings.cpuWorkerMetricsPort));
  policy.push(await scrape(settings.policyWorkerMetricsPort));
  // Asynchronously: a blocked event loop would leave fetch a stale keep-alive socket to reuse.
  await promisify(execFile)(
    process.execPath,
    [
      'bin/tandem.js', 'train', 'configs/planpath/planpath_L1_prompt.yaml',
      'training.total_training_steps=1', 'training.train_batch_size=2', 'training.train_sample_num=2',
      'training.max_response_length=16', 'env.max_turns=1',
      '--id', `metrics-${Date.now()}`, '--wait',
    ],
    { encoding: 'utf8', timeout: 600_000 },
  );
  cpu.push(await scrape(settings.cpuWorkerMetricsPort));
  policy.push(await scrape(settings.policyWorkerMetricsPort));
});

test('the CPU worker counts and times its activities by type', () => {
  const [b, a] = cpu;
  for (const activity of ['envResets', 'scoreCandidates', 'publishEpisode']) {
    assert.ok(grew(b, a, `tandem_activities_started_total{activity="${activity}"}`) > 0, activity);
    assert.ok(grew(b, a, `tandem_activities_completed_total{activity="${activity}"}`) > 0, activity);
    assert.ok(grew(b, a, `tandem_activity_duration_seconds_count{activity="${activity}",outcome="completed"}`) > 0, activity);
  }
  assert.ok(a.has('tandem_process_cpu_seconds_total'));
});

test('the policy worker counts agent turns, updates, generated tokens and the engine\'s busy time and rows', () => {
  const [b, a] = policy;
  assert.ok(grew(b, a, 'tandem_activities_completed_total{activity="agentTurn"}') >= 2, 'both agents took a turn in each episode');
  // At least: other tests' runs on the same stack may update too.
  assert.ok(grew(b, a, 'tandem_activities_completed_total{activity="updatePolicy"}') >= 1);
  assert.ok(grew(b, a, 'tandem_engine_request_duration_seconds_count{op="update",outcome="completed"}') >= 1);
  assert.ok(grew(b, a, 'tandem_engine_request_duration_seconds_sum{op="update",outcome="completed"}') > 0);
  assert.ok(grew(b, a, 'tandem_engine_request_duration_seconds_count{op="generate",outcome="completed"}') >= grew(b, a, 'tandem_activities_completed_total{activity="agentTurn"}'), 'one engine request per turn');
  assert.ok(grew(b, a, 'tandem_generated_tokens_total') > 0);
  assert.ok(grew(b, a, 'tandem_engine_busy_seconds') > 0);
  assert.ok(grew(b, a, 'tandem_engine_decode_steps') > 0);
  // The row gauges are served (their values are exact in test/unit/metrics.unit.test.ts; here
  // another test's run may be generating).
  for (const gauge of ['tandem_engine_live_rows', 'tandem_engine_waiting_rows', 'tandem_engine_pending_ops']) {
    assert.ok(Number.isInteger(a.get(gauge)) && a.get(gauge)! >= 0, `${gauge} = ${a.get(gauge)}`);
  }
});
