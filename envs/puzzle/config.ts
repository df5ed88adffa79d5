// The config options every puzzle environment (plan_path, sokoban, sudoku) has beside envCommon,
// and their mapping to PuzzleOptions.
import { z } from 'zod';
import type { PuzzleOptions, RewardFormula } from './types.js';

export const puzzleCommon = {
  // How an agent's reward mixes its own term and the team's (types.ts RewardFormula): tandem
  // (local + alpha x [solved]) or reference (the reference's calculate_reward: local + the env
  // reward at the end of the turn; alpha unused).
  reward_formula: z.enum(['tandem', 'reference']).default('tandem'),
};

export const puzzleOptions = (c: { reward_formula: RewardFormula }): PuzzleOptions => ({ rewardFormula: c.reward_formula });
