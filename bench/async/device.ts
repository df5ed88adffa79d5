// The stand-in's device: one simulated GPU that decodes the agent turns in flight as one
// continuous batch and runs the updates, in real (scaled) time, with timers only at the events
// (a row finishing, a prefill ending, an update ending), so it costs next to no CPU.
//
// Generation: a turn is one request of K rows, each with its own response length. Between two
// decoding steps newcomers are prefilled (each request's prompt once, no decoding meanwhile) and join the batch, at most maxRows rows in it; a step over B rows takes
// stepMs(B) = max(weights + B x row, B x row compute) (model.ts). The batch is treated as a fluid:
// between events every row advances elapsed / stepMs(B) tokens. A request is answered when its last
// row is done (Tandem's engine, services/engine/tandem_engine/batching.py, does the same).
//
// Updates, three models:
//   exclusive: the update needs the device alone, as Tandem's engine does with an update sent without
//     overlap ("load, update and unload wait until no rows decode", docs/ARCHITECTURE.md "The
//     engine"): once an update is queued no newcomer is admitted, the rows in flight finish, the
//     update runs, then the waiting turns are admitted.
//   shared: Tandem's engine with an update sent with overlap, on one device (services/engine/
//     PROTOCOL.md "Overlap", tandem_engine/server.py Engine.tick): the update runs a micro-batch at
//     a time between decoding steps, and while both have work (a prefill or rows decoding, and an
//     update) each gets half of the device's time; with no rows the update has the whole device,
//     with no update generation has it. No row is held back. Modelled as a fluid time-share.
//   overlap: the update runs beside generation and slows it not at all (separate GPUs for rollout and
//     training: issue 42, item 3).
// Both coexist in the device's memory under shared and overlap, so fewer rows fit beside a full
// fine-tune's state than under exclusive (model.ts, maxRowsOf). An update is tracked by the device
// time it has left; updateMs counts the updates' device time and busyMs generation's (with shared,
// each advances at half the wall time while both run). Updates run one at a time in every model, in
// the order they came.
import type { DeviceCosts } from './model.js';
import { stepMs } from './model.js';

export type UpdateModel = 'exclusive' | 'shared' | 'overlap';

export const UPDATE_MODELS: readonly UpdateModel[] = ['exclusive', 'shared', 'overlap'];

/** What the stand-in (standin.ts) and its bench take: a device's update model, or split (a rollout engine and a trainer, two devices). */
export type StandinModel = UpdateModel | 'split';
export const STANDIN_MODELS: readonly StandinModel[] = [...UPDATE_MODELS, 'split'];

interface Request {
  rows: number[];
  prefillMs: number;
  done: () => void;
}

interface Update {
  ms: number;
  started: () => void;
  done: () => void;
}

/** Row lengths (tokens) and device milliseconds below these count as done. */
const EPS = 1e-6;

export class Device {
  private live: Request[] = [];
  private waiting: Request[] = [];
  /** Updates queued, the one running (if any) first. */
  private updates: Update[] = [];
  /** Device milliseconds the running update has left; null when none runs. */
  private updateLeft: number | null = null;
  /** Prefill time left before decoding resumes. */
  private stall = 0;
  private last = performance.now();
  private timer: NodeJS.Timeout | null = null;
  /** Device milliseconds spent prefilling and decoding, and running updates, since it started. */
  busyMs = 0;
  updateMs = 0;

  constructor(
    private readonly costs: Pick<DeviceCosts, 'stepWeightsMs' | 'stepRowMs' | 'stepRowFlopsMs'>,
    private readonly model: UpdateModel,
    private readonly maxRows: number,
  ) {}

  /** Decodes `lengths.length` rows of these lengths after a prefill of `prefillMs`; resolves when all are done. */
  generate(lengths: number[], prefillMs: number): Promise<void> {
    return new Promise((done) => {
      this.advance();
      this.waiting.push({ rows: [...lengths], prefillMs, done });
      this.schedule();
    });
  }

  /** Runs an update of `ms` of device time; `started` is called when it begins. */
  update(ms: number, started: () => void = () => {}): Promise<void> {
    return new Promise((done) => {
      this.advance();
      this.updates.push({ ms, started, done });
      this.schedule();
    });
  }

  private rows(): number {
    return this.live.reduce((n, r) => n + r.rows.length, 0);
  }

  /** The shares of the device's time generation and the running update get now (0 when idle). */
  private rates(): { gen: number; update: number } {
    const gen = this.stall > 0 || this.rows() > 0;
    const update = this.updateLeft !== null;
    const half = this.model === 'shared' && gen && update;
    return { gen: gen ? (half ? 0.5 : 1) : 0, update: update ? (half ? 0.5 : 1) : 0 };
  }

  /** Wall milliseconds to the next event at the current rates: the prefill's end, a row done, the update done. */
  private untilNext(r: { gen: number; update: number }): number {
    let next = Infinity;
    if (r.gen > 0) {
      const b = this.rows();
      if (this.stall > 0) next = this.stall / r.gen;
      else if (b > 0) next = (Math.min(...this.live.flatMap((q) => q.rows)) * stepMs(this.costs, b)) / r.gen;
    }
    if (r.update > 0) next = Math.min(next, this.updateLeft! / r.update);
    return next;
  }

  /** Answers the requests whose rows are all done and ends the update if it is done. */
  private settle(): void {
    if (this.stall < EPS) this.stall = 0;
    for (const r of this.live) r.rows = r.rows.filter((x) => x > EPS);
    const finished = this.live.filter((r) => r.rows.length === 0);
    this.live = this.live.filter((r) => r.rows.length > 0);
    for (const r of finished) r.done();
    if (this.updateLeft !== null && this.updateLeft < EPS) {
      const u = this.updates.shift()!;
      this.updateLeft = null;
      u.done();
    }
  }

  /** Moves the device on to now, event by event: the prefill stall first, then decoding, beside the update. */
  private advance(): void {
    const now = performance.now();
    let dt = now - this.last;
    this.last = now;
    for (;;) {
      this.settle();
      const r = this.rates();
      const next = this.untilNext(r);
      if (dt <= 0 || next === Infinity) break;
      const step = Math.min(dt, next);
      dt -= step;
      // Generation: its share of the step's device time, to the prefill first, then to decoding.
      let g = r.gen * step;
      this.busyMs += g;
      const s = Math.min(this.stall, g);
      this.stall -= s;
      g -= s;
      const b = this.rows();
      if (b > 0 && g > 0) {
        const tokens = g / stepMs(this.costs, b);
        for (const q of this.live) q.rows = q.rows.map((x) => x - tokens);
      }
      if (r.update > 0) {
        this.updateLeft! -= r.update * step;
        this.updateMs += r.update * step;
      }
    }
  }

  /** Starts what can start, then sets the timer to the next event. */
  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // Exclusive: the next update waits until no rows decode and no prefill runs.
    if (this.updates.length > 0 && this.updateLeft === null && (this.model !== 'exclusive' || (this.rows() === 0 && this.stall === 0))) {
      this.updateLeft = this.updates[0].ms;
      this.updates[0].started();
    }
    // Exclusive: an update queued or running holds back every newcomer.
    const admit = this.model !== 'exclusive' || this.updates.length === 0;
    while (admit && this.waiting.length > 0) {
      const b = this.rows();
      const next = this.waiting[0];
      if (b > 0 && b + next.rows.length > this.maxRows) break;
      this.waiting.shift();
      this.live.push(next);
      this.stall += next.prefillMs;
    }
    const wait = this.untilNext(this.rates());
    if (wait === Infinity) return;
    this.timer = setTimeout(() => {
      this.advance();
      this.schedule();
    }, Math.max(0, wait));
  }
}
