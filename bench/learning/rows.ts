// The learning bench's suites and rows: the reference's results table in small, per environment
// and model. A row is a config (L0, L1 or L2) and an algorithm (null: no RL, the base model
// evaluated as it is); its family is what it trains (the whole shared model, or LoRA adapters),
// and every row of a family trains at one learning rate (bench/learning/run.ts --lr, --tune).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../infra/settings.js';
import { arithmetic } from './arith.js';

export type Family = 'full' | 'lora';

export interface Row {
  id: string;
  label: string;
  file: string;
  level: 'L0' | 'L1' | 'L2';
  algorithm: 'grpo' | 'at_grpo' | null;
  family: Family;
}

export interface Suite {
  name: string;
  /** What the table's caption says the suite is. */
  caption: string;
  /** The folder whose reference.preset.yaml `--preset reference` applies. */
  dir: string;
  rows: Row[];
  /**
   * Config overrides every row of the suite takes (beside the bench's): `run` for training and
   * validation, `test` added for the final evaluations; may write the suite's problem files.
   */
  overrides: () => { run: string[]; test: string[] };
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

export const SUITES: Suite[] = [
  {
    name: 'planpath',
    caption: 'Plan-Path with the tiny model (configs/planpath/)',
    dir: 'configs/planpath',
    rows: rowsOf('configs/planpath', 'planpath'),
    overrides: () => ({ run: [], test: [] }),
    reference: refRows(5, 11, 10, 96, 97),
  },
  {
    name: 'planpath-helper',
    caption: "the miniature of the paper's mechanism: Plan-Path with a path helper in the tool agent's sandbox (configs/planpath/planpath_helper_*; not the reference's setting)",
    dir: 'configs/planpath',
    rows: rowsOf('configs/planpath', 'planpath_helper'),
    overrides: () => ({ run: [], test: [] }),
  },
  {
    name: 'planpath-helper-reading',
    caption: "the miniature (Plan-Path with a path helper in the tool agent's sandbox) with a warm start that reads its prompts: tandem-tiny-helper-reading, reading stages before the warm start (infra/setup.sh)",
    dir: 'configs/planpath',
    rows: rowsOf('configs/planpath', 'planpath_helper'),
    overrides: () => {
      const model = '.tools/models/tandem-tiny-helper-reading';
      if (!existsSync(join(projectRoot, model, 'config.json'))) {
        throw new Error(`--suite planpath-helper-reading: ${model} is not built; TANDEM_READING_MODEL=1 bash infra/setup.sh builds it (55 minutes on one core of a 2-core VM)`);
      }
      return { run: [`base_models.policy_0.path=${model}`], test: [] };
    },
  },
  {
    name: 'sokoban',
    caption: 'Sokoban, one box, with the tiny Sokoban model (configs/sokoban/)',
    dir: 'configs/sokoban',
    rows: rowsOf('configs/sokoban', 'sokoban'),
    overrides: () => ({ run: [], test: [] }),
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
    overrides: () => ({ run: [], test: [] }),
  },
  {
    name: 'smollm2-arith',
    caption: 'one-step arithmetic (a + b, a - b with two-digit numbers, a x b with a of 2-12; no held-out question among the training ones) with SmolLM2-135M-Instruct (configs/smollm2/ math)',
    dir: 'configs/smollm2',
    rows: rowsOf('configs/smollm2', 'math'),
    overrides: arithmetic,
    // issue 39's SmolLM2 run: AT-GRPO (LoRA, L2) against the same agents without RL
    contrasts: [['at-grpo-l2', 'multi'], ['at-grpo-l1', 'multi']],
  },
];

export function suiteOf(name: string): Suite {
  const suite = SUITES.find((s) => s.name === name);
  if (!suite) throw new Error(`--suite: one of ${SUITES.map((s) => s.name).join(', ')}, not '${name}'`);
  return suite;
}

