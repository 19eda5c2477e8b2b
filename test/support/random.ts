/**
 * Deterministic pseudo-random numbers for generated test inputs (a linear congruential generator),
 * so the generated texts are the same on every run.
 */

/** A generator of numbers in [0, 1) from `seed`. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) / 16777216;
  };
}

/** One of `items`, drawn with `random`. */
export const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)];
