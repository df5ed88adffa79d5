// The stand-in's device: one simulated GPU that decodes the agent turns in flight as one
// continuous batch and runs the updates, in real (scaled) time, with timers only at the events
// (a row finishing, a prefill ending, an update ending), so it costs next to no CPU.
//
// Generation: a turn is one request of K rows, each with its own response length. Between two
// decoding steps newcomers are prefilled (each request's prompt once, the device doing nothing else
// meanwhile) and join the batch, at most maxRows rows in it; a step over B rows takes
// stepMs(B) = max(weights + B x row, B x row compute) (model.ts). The batch is treated as a fluid:
// between events every row advances elapsed / stepMs(B) tokens. A request is answered when its last
// row is done (Tandem's engine, services/engine/tandem_engine/batching.py, does the same).
//
// Updates, two models:
//   exclusive: the update needs the device alone, as Tandem's engine does today ("load, update and
//     unload wait until no rows decode", docs/ARCHITECTURE.md "The engine"): once an update is
//     queued no newcomer is admitted, the rows in flight finish, the update runs, then the waiting
//     turns are admitted.
//   overlap: the update runs beside generation and slows it not at all (separate GPUs for rollout and
//     training, or an engine that overlaps them: issue 42, item 3).
// Updates run one at a time in either model, in the order they came.
import type { DeviceCosts } from './model.js';
import { stepMs } from './model.js';

export type UpdateModel = 'exclusive' | 'overlap';

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

export class Device {
  private live: Request[] = [];
  private waiting: Request[] = [];
  private updates: Update[] = [];
  private updating = false;
  /** Prefill time left before decoding resumes. */
  private stall = 0;
  private last = performance.now();
  private timer: NodeJS.Timeout | null = null;
  /** Milliseconds the device spent prefilling and decoding, and running updates, since it started. */
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

  /** Runs an update of `ms`; `started` is called when it gets the device. */
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

  /** Moves the batch on to now: the prefill stall first, then decoding. */
  private advance(): void {
    const now = performance.now();
    let dt = now - this.last;
    this.last = now;
    if (this.stall > 0) {
      const s = Math.min(this.stall, dt);
      this.stall -= s;
      this.busyMs += s;
      dt -= s;
    }
    const b = this.rows();
    if (b > 0 && dt > 0) {
      const tokens = dt / stepMs(this.costs, b);
      for (const r of this.live) r.rows = r.rows.map((x) => x - tokens);
      this.busyMs += dt;
    }
    const EPS = 1e-6;
    for (const r of this.live) r.rows = r.rows.filter((x) => x > EPS);
    const finished = this.live.filter((r) => r.rows.length === 0);
    this.live = this.live.filter((r) => r.rows.length > 0);
    for (const r of finished) r.done();
  }

  /** Starts what can start, then sets the timer to the next event. */
  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.updates.length > 0 && !this.updating && (this.model === 'overlap' || (this.rows() === 0 && this.stall === 0))) {
      const u = this.updates[0];
      this.updating = true;
      u.started();
      const t0 = performance.now();
      setTimeout(() => {
        this.updates.shift();
        this.updating = false;
        this.updateMs += performance.now() - t0;
        this.advance();
        u.done();
        this.schedule();
      }, u.ms);
    }
    // Exclusive: an update queued or running holds back every newcomer.
    const admit = this.model === 'overlap' || this.updates.length === 0;
    while (admit && this.waiting.length > 0) {
      const b = this.rows();
      const next = this.waiting[0];
      if (b > 0 && b + next.rows.length > this.maxRows) break;
      this.waiting.shift();
      this.live.push(next);
      this.stall += next.prefillMs;
    }
    const b = this.rows();
    if (b === 0 && this.stall === 0) return;
    const shortest = Math.min(...this.live.flatMap((r) => r.rows));
    const wait = this.stall + (b > 0 ? shortest * stepMs(this.costs, b) : 0);
    this.timer = setTimeout(() => {
      this.advance();
      this.schedule();
    }, Math.max(0, wait));
  }
}
