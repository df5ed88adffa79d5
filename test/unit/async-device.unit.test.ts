// The async bench's simulated device (bench/async/device.ts): its timing in each update model, in real
// milliseconds. A decoding step takes 10 ms x SCALE whatever the batch, so a generation of rows of 20
// tokens alone takes 200 ms x SCALE; every time below is written at SCALE 1 and scaled by `ms`. SCALE 3
// and the tolerances leave room for timers on a loaded machine (a whole test run beside the stack's
// lane delayed them by up to 90 ms).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Device, type UpdateModel } from '../../bench/async/device.js';

const SCALE = 3;
const ms = (x: number) => x * SCALE;
const STEP_MS = ms(10);
const costs = { stepWeightsMs: STEP_MS, stepRowMs: 0, stepRowFlopsMs: 0 };
const device = (model: UpdateModel) => new Device(costs, model, 64);

/** Milliseconds from t0 to when `p` settles. */
const timed = async (t0: number, p: Promise<void>) => {
  await p;
  return performance.now() - t0;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function near(actual: number, expected: number, what: string) {
  const tolerance = Math.max(ms(40), 0.25 * expected);
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual.toFixed(1)} ms, expected ${expected} ± ${tolerance.toFixed(0)}`);
}

for (const model of ['exclusive', 'shared', 'overlap'] as const) {
  test(`${model}: a generation alone takes its rows' steps, an update alone its own time`, async () => {
    const d = device(model);
    let t0 = performance.now();
    near(await timed(t0, d.generate([20, 10, 15, 20], 0)), 20 * STEP_MS, 'generation of 20-token rows');
    near(d.busyMs, 20 * STEP_MS, 'busy');
    t0 = performance.now();
    let started = NaN;
    near(await timed(t0, d.update(ms(200), () => (started = performance.now() - t0))), ms(200), 'update of 200 ms');
    near(started, 0, 'update started');
    near(d.updateMs, ms(200), 'update device time');
    near(d.busyMs, 20 * STEP_MS, 'busy after the update');
  });
}

test('a prefill stalls decoding: a generation takes its prefill plus its steps', async () => {
  const d = device('shared');
  const t0 = performance.now();
  near(await timed(t0, d.generate([15], ms(100))), ms(100) + 15 * STEP_MS, 'prefill 100 ms + 15 steps');
  near(d.busyMs, ms(250), 'busy');
});

test('shared: a generation and an update started together share the device half and half', async () => {
  const d = device('shared');
  const t0 = performance.now();
  // Generation 200 ms of device time, update 100 ms: the update ends at 2 x 100, the generation at 200 + 100.
  const [gen, upd] = await Promise.all([timed(t0, d.generate([20], 0)), timed(t0, d.update(ms(100)))]);
  near(upd, ms(200), 'update (the shorter) at twice its own time');
  near(gen, ms(300), 'generation at the sum');
  near(d.updateMs, ms(100), 'update device time');
  near(d.busyMs, ms(200), 'generation device time');
});

test('shared: a generation that comes while an update runs is not held back', async () => {
  const d = device('shared');
  const t0 = performance.now();
  let started = NaN;
  const upd = timed(t0, d.update(ms(300), () => (started = performance.now() - t0)));
  await sleep(ms(100));
  const t1 = performance.now();
  // From 100 ms: 100 ms of generation at half speed (200 ms), the update's 200 ms left at half speed till 300, then alone.
  const gen = await timed(t1, d.generate([10], 0));
  near(started, 0, 'update started');
  near(gen, ms(200), 'generation beside the update');
  near(await upd, ms(400), 'update: 300 ms of its own + 100 ms given to the generation');
});

test('overlap: a generation and an update started together take the longer of the two', async () => {
  const d = device('overlap');
  const t0 = performance.now();
  const [gen, upd] = await Promise.all([timed(t0, d.generate([20], 0)), timed(t0, d.update(ms(100)))]);
  near(upd, ms(100), 'update');
  near(gen, ms(200), 'generation');
});

test('exclusive: a generation queued after an update waits for it; an update queued after rows waits for them', async () => {
  let d = device('exclusive');
  let t0 = performance.now();
  let [upd, gen] = await Promise.all([timed(t0, d.update(ms(100))), timed(t0, d.generate([20], 0))]);
  near(upd, ms(100), 'update first');
  near(gen, ms(300), 'generation after the update');

  d = device('exclusive');
  t0 = performance.now();
  let started = NaN;
  [gen, upd] = await Promise.all([timed(t0, d.generate([20], 0)), timed(t0, d.update(ms(100), () => (started = performance.now() - t0)))]);
  near(gen, ms(200), 'generation first');
  near(started, ms(200), 'update started once the rows finished');
  near(upd, ms(300), 'update after the rows');
});
