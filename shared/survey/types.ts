/**
 * Shapes of the survey task (the paper's second task, ../shared/PAPER.md: a long survey from a
 * corpus far larger than one context window). See docs/SURVEY.md.
 *
 * Units: `tokens` are tokens of the project tokenizer (shared/tokenizer.ts); `words` are runs of
 * non-space characters of the rendered prose (citations excluded).
 */
import type { RoleUsage } from '../types';
import type { SeekMode } from '../seek-mode';

/**
 * One source of a survey corpus: a paper (a JSONL / JSON record) or a text / Markdown file.
 * The `text` is what seeking agents read (title + abstract for a paper, the file text otherwise).
 */
export interface SurveySource {
  /** Citation id, unique in the corpus: a paper's `id` / `arxiv_id`, or the file id (relative path). */
  id: string;
  title: string;
  /** Text the agents read (already decoded, LF line ends). */
  text: string;
  /** Author names as given (a string "A and B" or a list joined with ", "). */
  authors?: string;
  /** Publication year as given (e.g. "2023"). */
  year?: string;
  /** URL of the paper, when known. */
  link?: string;
  /** The corpus's own category labels (e.g. arXiv `cs.CL`, or a taxonomy label). */
  categories?: string[];
}

/** Options of one survey (all optional on input; see `SurveyOptionsSchema` for defaults and bounds). */
export interface SurveyOptions {
  /** Target length of the survey body in words. */
  targetWords: number;
  /** At most this many sections. */
  maxSections: number;
  /** Maximum tokens per chunk (L). Papers are never split unless one alone exceeds L. */
  chunkTokens: number;
  /** Seeking agents at once: the cap; a stated quota sets the seeking Maps' MaxConcurrency below it (shared/quota.ts). */
  concurrency: number;
  /** The seeking model's quota of requests per minute (run option `quotaRequestsPerMinute`); absent: the deployment's, if any. */
  quotaRequestsPerMinute?: number;
  /** The seeking model's quota of tokens per minute, input + output (run option `quotaTokensPerMinute`). */
  quotaTokensPerMinute?: number;
  /** Expected seconds per seek for the quota's concurrency (run option `seekLatencySeconds`). */
  seekLatencySeconds?: number;
  /** Sections drafted at once. */
  sectionConcurrency: number;
  /** Evidence tokens the reasoning agent reads per outline (KAR) step. */
  outlineBudgetTokens: number;
  /** Evidence tokens the writer reads per section. */
  writerBudgetTokens: number;
  /** A section whose re-ranked pool has fewer relevant messages than this gets one synchronized seeking round. */
  minSectionMessages: number;
  /** Seeking rounds per section: 1 = never a synchronized round, 2 = one where evidence is thin. */
  rounds: number;
  /**
   * How the first seeking round (SeekSources, every chunk against the topic) is sought: on demand, or
   * as batch jobs (run option `seekMode`; shared/pipeline/seek-batch.ts). A scheduled survey's default
   * is `batch` (shared/survey/schedule.ts); a section's synchronized round is always on demand.
   */
  seekMode: SeekMode;
}

/** One section of the outline: a heading and a one-line scope (the section's query). */
export interface OutlineSection {
  heading: string;
  scope: string;
}

/** The survey outline drafted by the reasoning agent. */
export interface Outline {
  title: string;
  sections: OutlineSection[];
}

/** One knowledge-accumulating reasoning step of the outline. */
export interface OutlineStep {
  /** Requested k (1, 2, 4, …). */
  k: number;
  /** Messages actually given after fitting the token budget. */
  messagesUsed: number;
  /** True when the reasoning agent said the knowledge covers the topic (or the step was forced). */
  covered: boolean;
  /** True for the forced outline after the whole pool was read without coverage. */
  forced: boolean;
}

/** Model usage of the survey's roles. */
export type SurveyRole = 'seeker' | 'outliner' | 'writer';

export type SurveyUsage = Record<SurveyRole, RoleUsage>;

/** Why a citation was removed by the citation check. */
export type CitationFailure = 'fabricated' | 'unsupported';

/** One citation removed by the citation check. */
export interface RemovedCitation {
  section: number;
  sourceId: string;
  reason: CitationFailure;
  /** The sentence the citation was attached to (at most 300 characters). */
  sentence: string;
}

/** One drafted section after the citation check. */
export interface SectionResult {
  heading: string;
  scope: string;
  /** Markdown prose with `[id]` citations (checked). */
  text: string;
  words: number;
  /** Messages in the section's re-ranked pool that were relevant to its scope. */
  relevantMessages: number;
  /** True when the section got a synchronized seeking round (thin evidence). */
  synchronized: boolean;
  /** Sources cited in the section, in first-citation order. */
  cited: string[];
}

/** Counts of the citation check. */
export interface CitationCounts {
  kept: number;
  removed: number;
  fabricated: number;
  unsupported: number;
}

/** The JSON metadata written next to the Markdown survey. */
export interface SurveyMetadata {
  topic: string;
  title: string;
  /** True when written by the offline extractive reader: selected, ordered, cited corpus sentences. */
  extractive: boolean;
  model: string;
  createdAt: string;
  options: SurveyOptions;
  sections: Array<{ heading: string; scope: string; words: number; citations: number; synchronized: boolean; relevantMessages: number }>;
  words: number;
  citations: CitationCounts;
  removedCitations: RemovedCitation[];
  sources: { available: number; cited: number; skipped: number };
  chunks: number;
  messages: number;
  outlineTrace: OutlineStep[];
  usage: SurveyUsage;
  warnings: string[];
  /** The survey state machine's: its first seeking round priced before any model call (absent in-process). */
  seekingEstimate?: SurveySeekingEstimate;
}

/**
 * A survey's first seeking round (SeekSources: every chunk against the topic) priced before any model
 * call by SurveyPrepare (shared/cost.ts, the dated price table): at most, in USD, on demand and as
 * batch jobs (survey option `seekMode`). The outline, the sections' rounds and the writer are not
 * in it (their size depends on what the seeking finds).
 */
export interface SurveySeekingEstimate {
  /** The mode the survey seeks in. */
  mode: SeekMode;
  /** Seeking calls (one per chunk) and their tokens, at most. */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** USD at most seeking on demand; absent without a price (see `unpriced`). */
  onDemandUsd?: number;
  /** USD at most as batch jobs (the table's batch rate); absent without a batch price. */
  batchUsd?: number;
  /** Why a mode has no price (a model the table does not list, a local model). */
  unpriced?: string;
  /** The table's date and whether its figures were verified, e.g. "prices of 2026-11-30, unverified". */
  priceNote?: string;
  /**
   * How the first round was sought in fact, when `mode` is `batch`: `on-demand` with the reason when
   * the round had fewer chunks than a batch job takes (or the model has no batch inference), `batch`
   * otherwise. Absent for on-demand surveys and surveys written before it.
   */
  sought?: { mode: SeekMode; reason?: string };
}

/** The result of one survey: the Markdown and its metadata. */
export interface SurveyResult {
  markdown: string;
  metadata: SurveyMetadata;
  outline: Outline;
  sections: SectionResult[];
}
