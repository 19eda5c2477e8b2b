/**
 * Uncertainty of the eval's means: 95% percentile-bootstrap confidence intervals of a mean, and a
 * paired bootstrap test of the difference of two strategies on the same questions (Efron &
 * Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 13 and 16). Written here because no
 * maintained npm package offers a seeded bootstrap (the method is a few lines); resampling uses the
 * eval's seeded PRNG (shared/prng.ts), so a report is reproducible.
 */
import { randomInt, seededRandom } from '../shared/prng';

/** Resamples of every bootstrap (the usual figure for 95% percentile intervals). */
export const BOOTSTRAP_RESAMPLES = 10_000;

/** A mean with its 95% interval, in the units of the values. */
export interface MeanInterval {
  mean: number;
  low: number;
  high: number;
  n: number;
}

const meanOf = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/** The q-quantile (0-1) of sorted values, linear interpolation. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

/** Bootstrap means of `values` (resampled with replacement), sorted. */
function bootstrapMeans(values: readonly number[], seed: string, resamples: number): number[] {
  const random = seededRandom(seed);
  const means: number[] = [];
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    for (let i = 0; i < values.length; i++) sum += values[randomInt(random, values.length)];
    means.push(sum / values.length);
  }
  return means.sort((a, b) => a - b);
}

/**
 * The mean of `values` with its 95% percentile-bootstrap interval.
 * @param seed resampling seed (the same seed, the same interval).
 * @returns mean, low, high (equal to the mean for fewer than 2 values), n.
 */
export function bootstrapMeanInterval(values: readonly number[], seed = '0', resamples = BOOTSTRAP_RESAMPLES): MeanInterval {
  const mean = meanOf(values);
  if (values.length < 2) return { mean, low: mean, high: mean, n: values.length };
  const means = bootstrapMeans(values, seed, resamples);
  return { mean, low: quantile(means, 0.025), high: quantile(means, 0.975), n: values.length };
}

/** A paired comparison of two strategies on the same questions. */
export interface PairedComparison extends MeanInterval {
  /**
   * Two-sided bootstrap p-value of "no difference": twice the share of resampled mean differences on
   * the far side of 0 (at most 1); 1 when every difference is 0.
   */
  p: number;
}

/**
 * Paired bootstrap of mean(a − b) over the same questions (a[i] and b[i] belong to question i).
 * @throws Error when the lengths differ.
 */
export function pairedBootstrap(a: readonly number[], b: readonly number[], seed = '0', resamples = BOOTSTRAP_RESAMPLES): PairedComparison {
  if (a.length !== b.length) throw new Error(`paired bootstrap: ${a.length} and ${b.length} values`);
  const diffs = a.map((x, i) => x - b[i]);
  const interval = bootstrapMeanInterval(diffs, seed, resamples);
  if (diffs.every((d) => d === 0)) return { ...interval, p: 1 };
  const means = bootstrapMeans(diffs, seed, resamples);
  const below = means.filter((m) => m <= 0).length / means.length;
  const above = means.filter((m) => m >= 0).length / means.length;
  return { ...interval, p: Math.min(1, 2 * Math.min(below, above)) };
}
