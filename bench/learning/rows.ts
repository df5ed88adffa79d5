// The learning bench's suites and rows: the reference's results table in small, per environment
// and model. A row is a config (L0, L1 or L2) and an algorithm (null: no RL, the base model
// evaluated as it is); its family is what it trains (the whole shared model, or LoRA adapters),
// and every row of a family trains at one learning rate (bench/learning/run.ts --lr, --tune).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../infra/settings.js';
import { arithmetic } from './arith.js';

export type Family = 'full' | 'lora';

export interface Overrides {
  run: string[];
  test: string[];
  validation: string[];
}
const NONE = (): Overrides => ({ run: [], test: [], validation: [] });

export interface Row {
  id: string;
  label: string;
  file: string;
  level: 'L0' | 'L1' | 'L2';
  algorithm: 'grpo' | 'at_grpo' | null;
  family: Family;
  /** Config overrides of this row alone (before the bench's own and --set). */
  set?: string[];
}

export interface Suite {
  name: string;
  /** What the table's caption says the suite is. */
  caption: string;
  /** The folder whose reference.preset.yaml `--preset reference` applies. */
  dir: string;
  rows: Row[];
  /**
   * Config overrides every row of seed `seed` takes (beside the bench's): `run` for training and
   * validation, `test` added for the final evaluations, `validation` added for final evaluations
   * on validation problems (--eval-on validation: choosing a task); may write the suite's problem files.
   */
  overrides: (seed: number) => Overrides;
  /** The reference's figures for the same rows (Qwen3-1.7B, its benchmark page), by row id; absent: none. */
  reference?: Partial<Record<string, number>>;
  /** The paired comparisons named in advance for this suite, "a > b"; absent: CONTRASTS. */
  contrasts?: [a: string, b: string][];
}

function rowsOf(dir: string, prefix: string): Row[] {
  const file = (level: string, kind: string) => `${dir}/${prefix}_${level}_${kind}.yaml`;
  const L0 = file('L0', 'single_agent');
  const L1 = file('L1', 'prompt');
  const L2 = file('L2', 'lora');
  return [
    { id: 'single', label: 'single agent', file: L0, level: 'L0', algorithm: null, family: 'full' },
    { id: 'single-grpo', label: 'single agent + GRPO (trajectory groups)', file: L0, level: 'L0', algorithm: 'grpo', family: 'full' },
    { id: 'single-atgrpo', label: 'single agent + tree-grouped GRPO', file: L0, level: 'L0', algorithm: 'at_grpo', family: 'full' },
    { id: 'multi', label: 'two agents, no RL', file: L1, level: 'L1', algorithm: null, family: 'full' },
    { id: 'multi-grpo', label: 'two agents + plain GRPO', file: L1, level: 'L1', algorithm: 'grpo', family: 'full' },
    { id: 'at-grpo-l1', label: 'AT-GRPO L1 (one shared model)', file: L1, level: 'L1', algorithm: 'at_grpo', family: 'full' },
    { id: 'at-grpo-l2', label: 'AT-GRPO L2 (one LoRA adapter per agent)', file: L2, level: 'L2', algorithm: 'at_grpo', family: 'lora' },
  ];
}

// The reference's Qwen3-1.7B rows (at-grpo-facts.md): single, +GRPO, multi-agent no RL, L1, L2.
const refRows = (single: number, grpo: number, multi: number, l1: number, l2: number) => ({ single, 'single-grpo': grpo, multi, 'at-grpo-l1': l1, 'at-grpo-l2': l2 });

/**
 * The paired comparisons named in advance (issue 39) for the puzzle tables: "a > b", each tested
 * one-sided, together under Holm's correction (over those whose two rows the bench ran).
 */
export const CONTRASTS: [a: string, b: string][] = [
  ['at-grpo-l1', 'multi-grpo'],
  ['at-grpo-l1', 'single-grpo'],
  ['at-grpo-l2', 'at-grpo-l1'],
  ['multi-grpo', 'single-grpo'],
];

/** A LoRA adapter as configs/smollm2/math_L2_lora.yaml's, for the rows whose config trains a whole model (L0, L1). */
const SMOLLM2_LORA = ['lora_rank=8', 'lora_alpha=16', 'lora_target_modules=[q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]'];

/**
 * Issue 53's rows: every trained row a LoRA (one family, one learning rate and schedule), so that
 * the level and the algorithm are the only differences. L0 and L1 train one adapter (the single
 * agent's; both roles' in L1), L2 one per agent.
 */
const ARITH2_ROWS: Row[] = (() => {
  const [L0, L1, L2] = ['L0_single_agent', 'L1_prompt', 'L2_lora'].map((f) => `configs/smollm2/math_${f}.yaml`);
  return [
    { id: 'single', label: 'single agent, no RL', file: L0, level: 'L0', algorithm: null, family: 'lora' },
    { id: 'multi', label: 'two agents, no RL', file: L1, level: 'L1', algorithm: null, family: 'lora' },
    { id: 'single-grpo', label: 'single agent + GRPO (one LoRA)', file: L0, level: 'L0', algorithm: 'grpo', family: 'lora', set: SMOLLM2_LORA },
    { id: 'multi-grpo', label: 'two agents + plain GRPO (L2: a LoRA per agent, trajectory groups)', file: L2, level: 'L2', algorithm: 'grpo', family: 'lora' },
    { id: 'at-grpo-l1', label: 'AT-GRPO L1 (one LoRA shared by both roles)', file: L1, level: 'L1', algorithm: 'at_grpo', family: 'lora', set: SMOLLM2_LORA },
    { id: 'at-grpo-l2', label: 'AT-GRPO L2 (a LoRA per agent)', file: L2, level: 'L2', algorithm: 'at_grpo', family: 'lora' },
  ];
})();

/**
 * Issue 53's contrasts, named before any of its RL rows ran: the algorithm (turn-wise groups
 * against trajectory groups, same agents and adapters), specialisation (an adapter per role
 * against one shared), the team against a single agent under AT-GRPO and under plain GRPO.
 */
const ARITH2_CONTRASTS: [a: string, b: string][] = [
  ['at-grpo-l2', 'multi-grpo'],
  ['at-grpo-l2', 'at-grpo-l1'],
  ['at-grpo-l2', 'single-grpo'],
  ['multi-grpo', 'single-grpo'],
];

export const SUITES: Suite[] = [
  {
    name: 'planpath',
    caption: 'Plan-Path with the tiny model (configs/planpath/)',
    dir: 'configs/planpath',
    rows: rowsOf('configs/planpath', 'planpath'),
    overrides: NONE,
    reference: refRows(5, 11, 10, 96, 97),
  },
  {
    name: 'planpath-helper',
    caption: "the miniature of the paper's mechanism: Plan-Path with a path helper in the tool agent's sandbox (configs/planpath/planpath_helper_*; not the reference's setting)",
    dir: 'configs/planpath',
    rows: rowsOf('configs/planpath', 'planpath_helper'),
    overrides: NONE,
  },
  {
    name: 'planpath-helper-reading',
    caption: "the miniature (Plan-Path with a path helper in the tool agent's sandbox) with a warm start that reads its prompts: tandem-tiny-helper-reading, reading stages before the warm start (infra/setup.sh)",
    dir: 'configs/planpath',
    rows: rowsOf('configs/planpath', 'planpath_helper'),
    overrides: () => {
      const model = '.tools/models/tandem-tiny-helper-reading';
      if (!existsSync(join(projectRoot, model, 'config.json'))) {
        throw new Error(`--suite planpath-helper-reading: ${model} is not built; 'bash infra/models.sh tandem-tiny-helper-reading' builds it (55 minutes on one core of a 2-core VM)`);
      }
      return { ...NONE(), run: [`base_models.policy_0.path=${model}`] };
    },
  },
  {
    name: 'sokoban',
    caption: 'Sokoban, one box, with the tiny Sokoban model (configs/sokoban/)',
    dir: 'configs/sokoban',
    rows: rowsOf('configs/sokoban', 'sokoban'),
    overrides: NONE,
    reference: refRows(0, 3, 0, 10, 11.5),
    // issue 39's Sokoban tables (two agents and AT-GRPO L1, Tandem's settings and the reference
    // preset) ask whether RL lifts the team at all; named before their seeds 1-4 ran
    contrasts: [...CONTRASTS, ['at-grpo-l1', 'multi']],
  },
  {
    name: 'smollm2-math',
    caption: "math (the project's generated problems) with SmolLM2-135M-Instruct (configs/smollm2/)",
    dir: 'configs/smollm2',
    rows: rowsOf('configs/smollm2', 'math'),
    overrides: NONE,
  },
  {
    name: 'smollm2-arith',
    caption: 'one-step arithmetic (bench/learning/arith.ts: a + b, a - b with two-digit numbers, a x b with a of 2-12, in turn; each seed its own training problems, none held out) with SmolLM2-135M-Instruct (configs/smollm2/ math)',
    dir: 'configs/smollm2',
    rows: rowsOf('configs/smollm2', 'math'),
    overrides: (seed) => arithmetic('arith1', seed),
    // issue 39's SmolLM2 run: AT-GRPO (LoRA, L2) against the same agents without RL
    contrasts: [['at-grpo-l2', 'multi'], ['at-grpo-l1', 'multi']],
  },
  {
    name: 'smollm2-arith2',
    caption: "two-step arithmetic (bench/learning/arith.ts: a + b + c, a + b - c, a - b + c, a - b - c, a x b + c, a x b - c, in turn; each seed its own training problems, none held out) with SmolLM2-135M-Instruct, the math environment's two turns (configs/smollm2/ math: the tool agent's program, the reasoner's answer; a second turn when they disagree, each shown the other's first); every trained row one LoRA family",
    dir: 'configs/smollm2',
    rows: ARITH2_ROWS,
    overrides: (seed) => arithmetic('arith2', seed),
    contrasts: ARITH2_CONTRASTS,
  },
  {
    // The same table on harder sums: chosen when the two-digit task's untrained team was above
    // the window greedily (bench/learning/plans/arith2.sh).
    name: 'smollm2-arith2-3d',
    caption: "two-step arithmetic with three-digit operands (bench/learning/arith.ts: a + b + c, a + b - c, a - b + c, a - b - c, a x b + c, a x b - c, a x b's a of 2-9 and b two-digit, in turn; each seed its own training problems, none held out) with SmolLM2-135M-Instruct, the math environment's two turns (configs/smollm2/ math); every trained row one LoRA family",
    dir: 'configs/smollm2',
    rows: ARITH2_ROWS,
    overrides: (seed) => arithmetic('arith2-3d', seed),
    contrasts: ARITH2_CONTRASTS,
  },
];

export function suiteOf(name: string): Suite {
  const suite = SUITES.find((s) => s.name === name);
  if (!suite) throw new Error(`--suite: one of ${SUITES.map((s) => s.name).join(', ')}, not '${name}'`);
  return suite;
}

