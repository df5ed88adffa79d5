// The modelled durations of the stand-in policy worker (bench/async/standin.ts): what one device
// would take to generate a turn and to run an update, for a named model on a named GPU, from a
// roofline of the device's datasheet figures and the model's published shape. No device is used.
//
// Sources:
//   H100 SXM5 80GB: 3.35 TB/s HBM3, 989 TFLOP/s dense BF16 (NVIDIA H100 Tensor Core GPU datasheet;
//   1,979 is with sparsity). H200: 4.8 TB/s, the same 989 TFLOP/s (NVIDIA H200 datasheet).
//   Qwen3-1.7B: 28 layers, hidden 2,048, MLP 6,144, 16 query heads and 8 key-value heads of 128,
//   vocabulary 151,936, tied embeddings (its Hugging Face config; bench/gpu/shapes.py holds the same
//   sizes): 1.72B parameters (1.41B without the embedding, as the model card says), 112 KiB of keys
//   and values per token in bf16.
// Assumptions (each a flag of bench/async/run.ts, none measured here): decoding reaches 70% of the
// memory bandwidth, prefill 50% and training 40% of the dense BF16 peak (MFU); a decoding step costs
// max(bytes read / bandwidth, FLOPs / compute), reading the weights once and each row's keys and values
// at the mean context; responses are `responseTokens` long on average, spread evenly over
// +-`spread` of that; an update's forward + backward is 3 forward passes over its tokens (full fine-tune:
// weight and activation gradients) or 2 (LoRA: activation gradients only, the adapters' own are
// negligible), plus one forward for the log-probs at the update's start, each group's prompt counted
// once (the engine runs a group's K samples over one pass of their prompt); the optimizer step and the
// checkpoint write are left out (tens of milliseconds and a few seconds, against a minute or two).

export interface Gpu {
  name: string;
  hbmBytesPerS: number;
  bf16FlopsPerS: number;
  memoryBytes: number;
}

export const GPUS: Record<string, Gpu> = {
  h100: { name: 'H100 SXM5 80GB', hbmBytesPerS: 3.35e12, bf16FlopsPerS: 989e12, memoryBytes: 80e9 },
  h200: { name: 'H200 SXM 141GB', hbmBytesPerS: 4.8e12, bf16FlopsPerS: 989e12, memoryBytes: 141e9 },
};

export interface ModelShape {
  name: string;
  layers: number;
  hidden: number;
  intermediate: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  vocab: number;
  tied: boolean;
}

export const MODELS: Record<string, ModelShape> = {
  'qwen3-1.7b': { name: 'Qwen3-1.7B', layers: 28, hidden: 2048, intermediate: 6144, heads: 16, kvHeads: 8, headDim: 128, vocab: 151936, tied: true },
};

/** Parameters (norms left out), bf16 bytes of the weights, and bf16 key-value bytes per token. */
export function sizesOf(m: ModelShape): { params: number; weightBytes: number; kvBytesPerToken: number } {
  const q = m.heads * m.headDim;
  const kv = m.kvHeads * m.headDim;
  const perLayer = m.hidden * q + 2 * m.hidden * kv + q * m.hidden + 3 * m.hidden * m.intermediate;
  const embeddings = m.vocab * m.hidden * (m.tied ? 1 : 2);
  const params = m.layers * perLayer + embeddings;
  return { params, weightBytes: 2 * params, kvBytesPerToken: 2 * m.layers * kv * 2 };
}

export interface Efficiency {
  /** Fraction of the memory bandwidth a decoding step reaches. */
  decodeBandwidth: number;
  /** Fraction of the dense BF16 peak a prefill reaches. */
  prefillMfu: number;
  /** Fraction of the dense BF16 peak an update reaches. */
  trainMfu: number;
}

export const DEFAULT_EFFICIENCY: Efficiency = { decodeBandwidth: 0.7, prefillMfu: 0.5, trainMfu: 0.4 };

/** One iteration's shape, as the stand-in models it (not the config's token limits, which bound the tiny model). */
export interface WorkShape {
  problems: number;
  k: number;
  /** Agent turns per episode played one after the other: max_turns x agents (every episode plays all of them here). */
  agentTurns: number;
  /** Mean prompt tokens of a turn (each group's prompt prefilled once). */
  promptTokens: number;
  /** Mean response tokens of a sample. */
  responseTokens: number;
  /** Response lengths spread evenly over responseTokens x (1 +- spread). */
  spread: number;
  /** full: a full fine-tune; lora: adapters on a frozen base. */
  training: 'full' | 'lora';
}

/** The device's costs in milliseconds (unscaled: the GPU's own time). */
export interface DeviceCosts {
  /** A decoding step's memory time: the weights once ... */
  stepWeightsMs: number;
  /** ... plus this per row (its keys and values at the mean context). */
  stepRowMs: number;
  /** A decoding step's compute time per row (the step takes the larger of memory and compute). */
  stepRowFlopsMs: number;
  /** Prefill of one request's prompt (once for its K rows). */
  prefillMs: number;
  /** An update's time per sample trained on. */
  updateMsPerSample: number;
}

export function deviceCosts(gpu: Gpu, model: ModelShape, shape: WorkShape, eff: Efficiency = DEFAULT_EFFICIENCY): DeviceCosts {
  const { params, weightBytes, kvBytesPerToken } = sizesOf(model);
  const bw = gpu.hbmBytesPerS * eff.decodeBandwidth;
  const q = model.heads * model.headDim;
  // Forward FLOPs of one token at context c: 2 per parameter, plus attention's QK^T and AV.
  const forward = (c: number) => 2 * params + 4 * model.layers * q * c;
  const decodeContext = shape.promptTokens + shape.responseTokens / 2;
  const trainContext = shape.promptTokens + shape.responseTokens / 2;
  const prefillFlops = shape.promptTokens * forward(shape.promptTokens / 2);
  const passes = shape.training === 'full' ? 4 : 3; // (forward + backward) + the start's log-prob forward
  const tokensPerSample = shape.responseTokens + shape.promptTokens / shape.k;
  return {
    stepWeightsMs: (1000 * weightBytes) / bw,
    stepRowMs: (1000 * decodeContext * kvBytesPerToken) / bw,
    stepRowFlopsMs: (1000 * forward(decodeContext)) / (gpu.bf16FlopsPerS * eff.prefillMfu),
    prefillMs: (1000 * prefillFlops) / (gpu.bf16FlopsPerS * eff.prefillMfu),
    updateMsPerSample: (1000 * passes * tokensPerSample * forward(trainContext)) / (gpu.bf16FlopsPerS * eff.trainMfu),
  };
}

/** A decoding step over `rows` rows: the larger of its memory time and its compute time. */
export const stepMs = (c: Pick<DeviceCosts, 'stepWeightsMs' | 'stepRowMs' | 'stepRowFlopsMs'>, rows: number) =>
  Math.max(c.stepWeightsMs + rows * c.stepRowMs, rows * c.stepRowFlopsMs);

/** A sample's response length from its id: a stable point of the same even spread. */
export function lengthOf(sampleKey: string, mean: number, spread: number, cap = Infinity): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < sampleKey.length; i++) h = Math.imul(h ^ sampleKey.charCodeAt(i), 0x01000193);
  const u = (h >>> 0) / 2 ** 32;
  return Math.min(cap, Math.max(1, Math.round(mean * (1 + spread * (2 * u - 1)))));
}

/**
 * Rows that fit the device at once: 90% of its memory, less the weights and, when an update shares
 * the device with a full fine-tune, its bf16 gradients and fp32 AdamW moments and master weights
 * (14 bytes a parameter) kept resident; each row holding its keys and values at the mean context
 * (paged, as vLLM's and SGLang's caches are). At most `cap`.
 */
export function maxRowsOf(gpu: Gpu, model: ModelShape, shape: WorkShape, sharesWithTraining: boolean, cap = 256): number {
  const { params, weightBytes, kvBytesPerToken } = sizesOf(model);
  const training = sharesWithTraining && shape.training === 'full' ? 14 * params : 0;
  const free = 0.9 * gpu.memoryBytes - weightBytes - training;
  return Math.max(1, Math.min(cap, Math.floor(free / (kvBytesPerToken * (shape.promptTokens + shape.responseTokens / 2)))));
}

/**
 * The device's rollout time of one iteration, had every episode played its turns in lock step: per
 * wave (one agent turn of every episode), each request's prompt prefilled as it is admitted, at most
 * maxRows rows decoding together, a waiting request admitted as soon as its rows fit. An estimate:
 * through the stack the episodes drift apart (an episode whose rows finished early starts its next
 * turn early, another waits on its scoring), so steps carry fewer rows each and the device's busy
 * time comes out higher, by a quarter at 4 problems on this machine; the bench reports the busy time
 * it saw. Used to scale the modelled time to the bench's seconds and to size the update.
 */
export function lockstepRolloutMs(c: DeviceCosts, shape: WorkShape, maxRows: number): number {
  const waiting = Array.from({ length: shape.problems }, (_, p) => Array.from({ length: shape.k }, (_, i) => lengthOf(`p${p}/c${i}`, shape.responseTokens, shape.spread)));
  let live: number[] = [];
  let t = 0;
  while (waiting.length > 0 || live.length > 0) {
    while (waiting.length > 0 && (live.length === 0 || live.length + waiting[0].length <= maxRows)) {
      live.push(...waiting.shift()!);
      t += c.prefillMs;
    }
    const shortest = Math.min(...live);
    t += shortest * stepMs(c, live.length);
    live = live.map((x) => x - shortest).filter((x) => x > 0);
  }
  return shape.agentTurns * t;
}

export const samplesPerIteration = (shape: WorkShape) => shape.problems * shape.k * shape.agentTurns;
