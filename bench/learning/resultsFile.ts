// The learning bench's results file, bench/learning/results/<stamp>.jsonl: its first line holds
// the settings (kind bench), each later line one finished row and seed (RunResult). Written by
// run.ts, read by report.ts and answers.ts.

/** What a results file's runs share: a later run with the same stamp must repeat these. */
export interface Settings {
  /** Where the final evaluations play: test problems, or validation problems (choosing a task before any RL row). */
  evalOn: 'test' | 'validation';
  /** --lr per family (null: each family's rate tuned in the file, else its config's; every run's own rate is in its line). */
  lr: Partial<Record<'full' | 'lora', number>> | null;
  suite: string;
  preset: string | null;
  iterations: number;
  batch: number;
  map: number | null;
  set: string[];
  testProblems: number;
  testSamples: number;
  curveEvery: number;
  curveProblems: number;
  /** The dtype every policy's weights ask for (placement.<base>.dtype): auto (bf16 on a GPU, float32 on a CPU), float32 or bfloat16. */
  dtype: 'auto' | 'float32' | 'bfloat16';
}

/** Settings as a file written before a setting existed holds them: the value those runs had. */
export function withDefaults(recorded: Omit<Settings, 'evalOn' | 'lr' | 'dtype'> & Partial<Settings>): Settings {
  return { evalOn: 'test', lr: null, dtype: 'auto', ...recorded };
}

/** One finished row and seed (kind final: evaluated on test problems; tune: on validation problems). */
export interface RunResult {
  kind: 'final' | 'tune';
  row: string;
  seed: number;
  /** The learning rate it trained at (null: no training). */
  lr: number | null;
  iterations: number;
  /** Sampled response tokens its updates consumed (the run's own count, RunProgress.tokensTrained); null for results written before the run counted them, when the bench did not see every iteration. */
  tokens: number | null;
  /** The primary figure: success at the configs' val_llm_config (its sampling), each problem played testSamples times. */
  success: number;
  episodes: number;
  /** The same problems played once greedily (temperature 0): a rise here is skill, not only a sharper sampler; absent before issue 53 and for tuning runs. */
  greedy?: { success: number; episodes: number };
  /** Held-out (validation) success during training, every curveEvery iterations. */
  curve: { iteration: number; success: number }[];
  minutes: number;
  /** The engine over the training phase, from the policy worker's metrics (dashboard/engineBusy.ts): wall
   * seconds, seconds decoding (prefills included) and updating, tokens generated; null when not measured
   * (no metrics, a re-attached run, --parallel above 1 or another run or evaluation on the stack meanwhile;
   * absent in results from before it existed). */
  engine?: { seconds: number; busyS: number; updateS: number; tokens: number } | null;
  /** Each trained policy's weights' dtype as its updates reported it (with the engine's note when auto fell back); absent for rows without training and in results from before it existed. */
  dtype?: Record<string, string>;
  /** The run's config as resolved (training, or for a row without training its evaluation's): every setting; absent before issue 53. */
  config?: unknown;
  runId: string;
  commit: string;
  machine: string;
  at: string;
}
