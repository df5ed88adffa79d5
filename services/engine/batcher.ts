// Coalesces concurrent agent turns into engine batches: requests that arrive within a short
// window (or until a token budget fills) go to the engine as one `generate`, where samples of
// different adapters on the same base share each forward pass.
import type { EngineClient, GenerateRequest, GenerateResult } from './client.js';

export interface BatcherOptions {
  /** How long the first queued request waits for company. */
  windowMs: number;
  /** Flush early once the queued requests may generate this many tokens (n * max_new_tokens). */
  maxTokens: number;
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

  constructor(private readonly engine: EngineClient, private readonly opts: BatcherOptions) {}

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
    this.engine.request<{ results: GenerateResult[] }>('generate', { requests: batch.map((q) => q.request) }).then(
      ({ results }) => batch.forEach((q, i) => q.resolve(results[i])),
      (err: Error) => batch.forEach((q) => q.reject(err)),
    );
  }
}
