// Problem seeds by split. Generators are deterministic by seed, so disjoint seed ranges give
// disjoint train / validation / test instance streams (up to the rare coincidence of two seeds
// drawing the same small puzzle). All seeds are below 2^31, so they fit any int32 field.
//
//   train       [0, 1_000_000_000)               index i -> i
//   validation  [1_000_000_000, 1_100_000_000)   index i -> 1_000_000_000 + i
//   test        [1_100_000_000, 1_200_000_000)   index i -> 1_100_000_000 + i

export type SeedSplit = 'train' | 'validation' | 'test';

export const SEED_RANGES: Readonly<Record<SeedSplit, { readonly start: number; readonly size: number }>> = Object.freeze({
  train: Object.freeze({ start: 0, size: 1_000_000_000 }),
  validation: Object.freeze({ start: 1_000_000_000, size: 100_000_000 }),
  test: Object.freeze({ start: 1_100_000_000, size: 100_000_000 }),
});

/** The problem seed of the index-th instance of a split; a RangeError outside [0, size). */
export function seedRange(split: SeedSplit, index: number): number {
  const range = SEED_RANGES[split];
  if (range === undefined) throw new RangeError(`unknown seed split ${String(split)}`);
  if (!Number.isInteger(index) || index < 0 || index >= range.size) {
    throw new RangeError(`${split} seed index must be an integer in [0, ${range.size}), got ${index}`);
  }
  return range.start + index;
}

/** The split a seed belongs to, or null when it is in none. */
export function splitOfSeed(seed: number): SeedSplit | null {
  for (const split of ['train', 'validation', 'test'] as const) {
    const { start, size } = SEED_RANGES[split];
    if (Number.isInteger(seed) && seed >= start && seed < start + size) return split;
  }
  return null;
}
