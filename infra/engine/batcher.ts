// Coalesces concurrent agent turns into engine batches: requests that arrive within a short
// window (or until a token budget fills) go to the engine as one `generate`, where samples of
// different adapters on the same base share each forward pass.
import type { EngineClient, GenerateRequest, GenerateResult } from './client.js';

export interface BatcherOptions {
  /** How long the first queued request waits for company. */
  windowMs: number;
  /** Flush early once the queued requests may generate this many tokens (n * max_new_tokens). */
  maxTokens: number;
  /** Told about every batch the engine answered (the worker's metrics count them). */
  onBatch?: (batch: BatchStats) => void;
}

/** One answered engine batch: its requests, samples (sum of n), generated tokens and engine time. */
export interface BatchStats {
  requests: number;
  samples: number;
  generatedTokens: number;
  seconds: number;
}

interface Queued {
  request: GenerateRequest;
  resolve: (r: GenerateResult) => void;
  reject: (e: Error) => void;
}

export class GenerateBatcher {
  private queue: Queued[] = [];
  private tokens = 0;
  private timer?: NodeJS.Timeout;
  private sent = 0;

  constructor(private readonly engine: EngineClient, private readonly opts: BatcherOptions) {}

  /** Requests queued for the next batch, not yet sent to the engine. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Requests sent to the engine whose batch has not been answered yet. */
  get inFlight(): number {
    return this.sent;
  }

  generate(request: GenerateRequest): Promise<GenerateResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.tokens += request.n * request.max_new_tokens;
      if (this.tokens >= this.opts.maxTokens) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.opts.windowMs);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    this.tokens = 0;
    if (batch.length === 0) return;
    this.sent += batch.length;
    const started = performance.now();
    this.engine.request<{ results: GenerateResult[] }>('generate', { requests: batch.map((q) => q.request) }).then(
      ({ results }) => {
        this.sent -= batch.length;
        this.opts.onBatch?.({
          requests: batch.length,
          samples: results.reduce((n, r) => n + r.samples.length, 0),
          generatedTokens: results.reduce((n, r) => n + r.samples.reduce((m, c) => m + c.response_ids.length, 0), 0),
          seconds: (performance.now() - started) / 1000,
        });
        batch.forEach((q, i) => q.resolve(results[i]));
      },
      (err: Error) => {
        this.sent -= batch.length;
        batch.forEach((q) => q.reject(err));
      },
    );
  }
}
