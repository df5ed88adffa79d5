// Hanabi's config section (`env.name: hanabi`) and its registry entry.
import { z } from 'zod';
import { defineEnv, envCommon } from '../shared/config.js';
import type { EnvDefinition } from '../types.js';
import { hanabi } from './definition.js';
import { hanabiOptionIssues, type HanabiOptions } from './rules.js';

export const hanabiEnv = defineEnv({
  config: z.strictObject({
    name: z.literal('hanabi'),
    ...envCommon,
    players: z.number().int().min(2).max(5).default(2),
    // full: 5 colours, ranks 1-5, 8 info tokens, 3 lives; small: 2 colours, 2 ranks, hand 3, 3 tokens.
    preset: z.enum(['full', 'small']).default('full'),
    colors: z.number().int().min(1).max(5).optional(),
    ranks: z.number().int().min(1).max(5).optional(),
    hand_size: z.number().int().min(1).optional(),
    info_tokens: z.number().int().min(1).optional(),
    lives: z.number().int().min(1).optional(),
    // Losing the last life scores 0 (the standard rule); false keeps the fireworks.
    zero_on_loss: z.boolean().default(true),
  }),
  definition: hanabi as EnvDefinition<unknown, unknown>,
  options: (c) => {
    const options: HanabiOptions = {
      players: c.players,
      preset: c.preset,
      colors: c.colors,
      ranks: c.ranks,
      handSize: c.hand_size,
      infoTokens: c.info_tokens,
      lives: c.lives,
      zeroOnLoss: c.zero_on_loss,
    };
    return { options, issues: hanabiOptionIssues(options) };
  },
});
