/**
 * A small seeded pseudo-random number generator for reproducible dataset construction.
 *
 * Why not a library: the project's dependencies hold none (seedrandom is not installed), and adding
 * one for ~15 lines is not worth it. These are two well-known public-domain algorithms:
 * - `xmur3` (Bob Jenkins-style string hash by bryc) turns a string seed into a 32-bit state;
 * - `mulberry32` (Tommy Ettinger) generates uniform 32-bit values from that state. Period 2^32,
 *   passes gjrand/PractRand to 2^32 outputs: ample for shuffling tens of thousands of paragraphs.
 * Source: https://github.com/bryc/code/blob/master/jshash/PRNGs.md
 * Not for cryptography.
 */

/** A function returning uniform floats in [0, 1). */
export type Random = () => number;

/** 32-bit hash of a string seed (xmur3 finalizer applied once). */
export function hashSeed(seed: string): number {
  let h = 1779033703 ^ seed.length;
  for (let i = 0; i < seed.length; i++) {
    h = Math.imul(h ^ seed.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  h = Math.imul(h ^ (h >>> 16), 2246822507);
  h = Math.imul(h ^ (h >>> 13), 3266489909);
  return (h ^= h >>> 16) >>> 0;
}

/**
 * A seeded generator: the same seed always yields the same sequence.
 * @param seed any string or number (numbers are hashed via their decimal string).
 */
export function seededRandom(seed: string | number): Random {
  let a = hashSeed(String(seed));
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A uniform integer in [0, n) (n >= 1). */
export function randomInt(random: Random, n: number): number {
  return Math.floor(random() * n);
}

/** Fisher-Yates shuffle into a new array (the input is not modified). */
export function shuffled<T>(items: readonly T[], random: Random): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
