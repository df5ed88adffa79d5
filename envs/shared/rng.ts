// A small seeded PRNG (mulberry32). Pure and deterministic: environment code runs inside
// Temporal workflows, where Math.random is not allowed to drive behaviour.

// Returns a generator of floats in [0, 1). The seed is reduced to an unsigned 32-bit integer.
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Uniform integer in [0, n).
export function randomInt(rng: () => number, n: number): number {
  return Math.floor(rng() * n);
}
