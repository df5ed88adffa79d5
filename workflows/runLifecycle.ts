// The pause/resume/stop state of a trainingRun and the time its current iteration has been
// active. Workflow code: Date.now() is workflow time here, so every duration is deterministic.
import { condition, setHandler } from '@temporalio/workflow';
import { pauseSignal, resumeSignal, stopSignal } from './messages.js';

/** What a run carries across continue-as-new: a signal may have arrived just before it. */
export interface LifecycleState {
  pausedSince: number | null;
  stopRequested: boolean;
}

export class RunLifecycle {
  pausedSince: number | null;
  stopRequested: boolean;
  iterationStartedAt = Date.now();
  /** Time the current iteration spent in pauses that have ended. */
  iterationPausedMs = 0;

  /** Installs the signal handlers; call before the workflow's first await. */
  constructor(carried: LifecycleState) {
    this.pausedSince = carried.pausedSince;
    this.stopRequested = carried.stopRequested;
    setHandler(pauseSignal, () => {
      if (!this.stopRequested && this.pausedSince === null) this.pausedSince = Date.now();
    });
    setHandler(resumeSignal, () => this.resume());
    // Stop lifts a pause: the current iteration must finish for the run to end cleanly.
    setHandler(stopSignal, () => {
      this.resume();
      this.stopRequested = true;
    });
  }

  get paused(): boolean {
    return this.pausedSince !== null;
  }

  /** Waits while the run is paused: call before starting any episode or update. */
  async untilResumed(): Promise<void> {
    if (this.paused) await condition(() => !this.paused);
  }

  startIteration(): void {
    this.iterationStartedAt = Date.now();
    this.iterationPausedMs = 0;
  }

  /** Time the current iteration has been running, paused time excluded. */
  activeMs(): number {
    const now = Date.now();
    return now - this.iterationStartedAt - this.iterationPausedMs - (this.pausedSince === null ? 0 : now - this.pausedSince);
  }

  carry(): LifecycleState {
    return { pausedSince: this.pausedSince, stopRequested: this.stopRequested };
  }

  private resume(): void {
    if (this.pausedSince === null) return;
    this.iterationPausedMs += Date.now() - this.pausedSince;
    this.pausedSince = null;
  }
}
