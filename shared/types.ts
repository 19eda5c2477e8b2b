/**
 * Core data shapes of the ExtAgents method (see ../shared/PAPER.md, section 2).
 *
 * Units: `tokens` are always tokens of the project tokenizer (shared/tokenizer.ts);
 * character offsets (`start`, `end`, `chunkStart`) are UTF-16 code-unit offsets into a JavaScript
 * string (what `String.prototype.slice` uses), half-open `[start, end)`.
 */

import type { DocumentFormat, DocumentLocation } from './readers/types';

/** One source document of a corpus: a file, an S3 object or a paper. */
export interface SourceDocument {
  /** Stable id: the file name relative to the corpus root, or the S3 key below the corpus prefix. */
  id: string;
  /** Full text, already decoded (UTF-8, BOM removed, CRLF normalised to LF). */
  text: string;
  /** Optional display title (papers; an HTML page's `<title>`, a PDF's Title); defaults to the id. */
  title?: string;
  /** The format it was read as (shared/readers/); absent = plain text. */
  format?: DocumentFormat;
  /** Where the text comes from in the source, sorted by `start` (PDF pages, heading paths); absent for plain text. */
  locations?: DocumentLocation[];
}

/** A contiguous slice of one document that lies inside a chunk. */
export interface ChunkSegment {
  documentId: string;
  /** Offsets into the document text, `[start, end)`. */
  start: number;
  end: number;
  /** Offset of this segment's first character inside the chunk text. */
  chunkStart: number;
}

/**
 * A chunk: at most `chunkTokens` tokens of corpus text, read by exactly one seeking agent per round.
 * Small documents are packed together; a long document spans several chunks. The chunk text is the
 * segments' texts joined by "\n\n" (the separator is not part of any segment).
 */
export interface ChunkMeta {
  /** Zero-based position in corpus order; also the tie-breaker of the pool order. */
  index: number;
  /** Token count of the chunk text. */
  tokens: number;
  /** Character length of the chunk text. */
  chars: number;
  segments: ChunkSegment[];
}

/** A chunk with its text, as a seeking agent receives it. */
export interface Chunk extends ChunkMeta {
  text: string;
}

/** A verbatim span of a chunk that supports a message, located in its document. */
export interface Quote {
  documentId: string;
  /** Offsets into the document text, `[start, end)`. */
  start: number;
  end: number;
  text: string;
}

/**
 * A message: the evidence one seeking agent extracted from one chunk in one round, with its relevance
 * score. "No information" yields no message.
 */
export interface Message {
  /** `r<round>-c<chunkIndex>`, unique within a run (one message per chunk per round). */
  id: string;
  round: number;
  chunkIndex: number;
  /**
   * Pool score, an integer 0-100 (higher = more relevant to the query): the key of the pool order,
   * from the seeking agent's score and the lexical prior under the run's `ranking` (shared/ranking.ts).
   */
  score: number;
  /** The seeking agent's own relevance score, integer 0-100 (absent on messages stored before `ranking` existed). */
  modelScore?: number;
  /** The lexical prior of the message's cited text for the query, integer 0-100 (shared/ranking.ts `lexicalPrior`). */
  prior?: number;
  /** The extracted evidence as text (what the reasoning agent and synchronized seekers read). */
  evidence: string;
  /** Token count of `evidence`. */
  tokens: number;
  /** Verbatim spans located in the corpus; may be empty when the model paraphrased. */
  quotes: Quote[];
  /** Ids of the documents the evidence came from (the chunk's documents when quotes are empty). */
  sources: string[];
}

/** Model usage of one role. Tokens as reported by the model (Bedrock `usage`) or counted locally. */
export interface RoleUsage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /**
   * Milliseconds spent waiting for model calls, summed over the calls (parallel calls overlap, so
   * this can exceed the run's wall time); absent for models that make no calls (extractive).
   */
  modelMs?: number;
  /**
   * Milliseconds the adapter waited inside calls for a throttling server (HTTP 429, its Retry-After),
   * summed; not part of `modelMs`. Absent when none. (Step Functions' own retries of a throttled task
   * are not known to the run.)
   */
  throttleWaitMs?: number;
  /** Input tokens read from the model's prompt cache (Bedrock prompt caching), summed; absent when none. */
  cacheReadInputTokens?: number;
  /** Input tokens written to the model's prompt cache, summed; absent when none. */
  cacheWriteInputTokens?: number;
}

/** The two agent roles of ExtAgents. */
export type AgentRole = 'seeker' | 'reasoner';

/**
 * Model usage per role. `speculative` (runs with `pipelineRounds` only): the seeking calls of a
 * speculative round that the run did not use, because KAR of the round before it answered (or
 * found the pool empty) — a subset of `seeker`, which counts every call made; zero calls when every
 * speculative round was used.
 */
export interface Usage {
  seeker: RoleUsage;
  reasoner: RoleUsage;
  speculative?: RoleUsage;
}

/** Outcome of one knowledge-accumulating reasoning step. */
export interface KarStep {
  round: number;
  /** Requested k (1, 2, 4, ...). */
  k: number;
  /** Messages actually given to the reasoning agent after fitting the token budget. */
  messagesUsed: number;
  /** Tokens of the evidence given. */
  evidenceTokens: number;
  /**
   * `answered`: the answer stands (the run ends with it); `refused`: the reasoning agent refused;
   * `unsupported`: it answered, but the quotes of the messages it cites do not hold the answer;
   * `unconfirmed`: a supported answer that the next, wider step must give again (run option
   * `karStop: 'confirmed'`); `filtered`: the provider's content filter withheld the reply (the run
   * ends there, refused: a wider step, a next round or a best-effort answer would send the same
   * question to the same filter). Every other outcome but `answered` reads on: k doubles, or the
   * round ends (shared/support.ts, the stopping rule).
   */
  outcome: KarOutcome;
  /** True when this step was the forced best-effort answer after the last round. */
  forced?: boolean;
  /**
   * The last step of a round that did not answer, under run option `synchronization: 'follow-up'`:
   * the question the reasoning agent said is still open, which the next round's seeking agents are
   * asked beside the synchronized messages.
   */
  followUp?: string;
}

/** The outcomes of a KAR step (see `KarStep.outcome`). */
export const KAR_OUTCOMES = ['answered', 'refused', 'unsupported', 'unconfirmed', 'filtered'] as const;
/** One outcome of a KAR step. */
export type KarOutcome = (typeof KAR_OUTCOMES)[number];

/** A citation of the final answer: one message, resolved to corpus positions. */
export interface Citation {
  messageId: string;
  chunkIndex: number;
  round: number;
  score: number;
  documentId: string;
  /** Offsets into the document text, `[start, end)`. */
  start: number;
  end: number;
  /** A short verbatim quote of the document at that range (at most ~300 characters). */
  quote: string;
  /** Where the quote is in the source: `page 3` of a PDF, the heading path of HTML, Markdown, DOCX (`Introduction › History`). */
  location?: string;
  /** The 1-based PDF page of the quote. */
  page?: number;
  /**
   * Where to open the source file at the quote (the text of HTML and Markdown is extracted, so
   * `start`/`end` count characters of that text, not of the file): Markdown, the 1-based line of the
   * source where the quote's block (paragraph, list item, table row, heading) starts.
   */
  sourceLine?: number;
  /** HTML: the character offset in the source file of the element whose block holds the quote (parse5's source location). */
  sourceOffset?: number;
}

/**
 * What a run keeps of each chunked document (the run record's and the chunk cache's `documents`):
 * its length in characters and, for a format with a source map, the format and its locations, from
 * which each citation gets its `location`.
 */
export interface DocumentSummary {
  id: string;
  chars: number;
  format?: DocumentFormat;
  locations?: DocumentLocation[];
}

/** The summary of a read document (see {@link DocumentSummary}). */
export function documentSummary(doc: SourceDocument): DocumentSummary {
  return {
    id: doc.id,
    chars: doc.text.length,
    ...(doc.format && doc.format !== 'text' && { format: doc.format }),
    ...(doc.locations && { locations: doc.locations }),
  };
}

/** The estimate of one role. */
export interface RoleEstimate {
  /** At most this many model calls. */
  calls: number;
  /** At most this many input tokens, summed over the calls. */
  inputTokens: number;
  /** At most this many output tokens, summed over the calls. */
  outputTokens: number;
  /** Of a model that caches prompts: input tokens written to the cache at most (the chunks; not in `inputTokens`). */
  cacheWriteInputTokens?: number;
}

/** What a run costs at most, in calls and tokens (shared/cost.ts `estimateRun`; prices: `priceEstimate`). */
export interface RunEstimate {
  seeker: RoleEstimate;
  reasoner: RoleEstimate;
}

/** The model's throughput quota; either limit may be unknown. */
export interface ModelQuota {
  /** Requests per minute (Service Quotas: "On-demand InvokeModel requests per minute for <model>"). */
  requestsPerMinute?: number;
  /** Tokens per minute, input + output (Service Quotas: "On-demand InvokeModel tokens per minute for <model>"). */
  tokensPerMinute?: number;
}

/** The derived concurrency, with its reasoning (printed by `ask --estimate`, kept in the run record and result). */
export interface ConcurrencyPlan {
  /** The seeking Map's MaxConcurrency: at least 1, at most `requested`. */
  concurrency: number;
  requested: number;
  /** What set it: the run's own concurrency, one of the quota's limits, or the floor of 1. */
  boundBy: 'concurrency' | 'requestsPerMinute' | 'tokensPerMinute' | 'minimum';
  quota: ModelQuota;
  tokensPerSeek: number;
  seekLatencySeconds: number;
  /** Little's law under the request quota, before rounding (absent without one). */
  byRequests?: number;
  /** Little's law under the token quota, before rounding (absent without one). */
  byTokens?: number;
  /** Rates at `concurrency` with every slot busy, per minute. */
  expectedRequestsPerMinute: number;
  expectedTokensPerMinute: number;
  /** Modeled seeking time of the run, seconds (absent when the seeks are not known). */
  seekingSeconds?: number;
  /** Every step of the derivation, one line each. */
  reasoning: string[];
}

/** A run's plan with its pre-flight warnings: what the run record and the result keep. */
export interface SeekingPlan extends ConcurrencyPlan {
  /** Pre-flight warnings (shared/quota.ts `checkQuota`), each with its numbers. */
  warnings: string[];
}

/** A run's seeking plan as its result reports it (`RunResult.concurrency`). */
export interface RunConcurrency extends SeekingPlan {
  /** Throttled model calls of the run (seeking and reasoning), each retried by the workflow. */
  throttledCalls: number;
  /**
   * Seconds the seeking agents waited for the workflow's Retry after throttled attempts, summed over
   * chunks (each measured by the task from its chunk's failure record to its next attempt, so the
   * invocation's own start is included; the reasoning agent's waits are not counted).
   */
  throttleWaitSeconds: number;
}

/** A document that was not chunked, and why (binary, invalid UTF-8, empty, whitespace only). */
export interface SkippedDocument {
  documentId: string;
  reason: string;
}

/**
 * Transient model errors of a run: ModelThrottledError, ModelUnavailableError, ModelTimeoutError
 * (`RETRYABLE_ERRORS` of shared/errors.ts). Each one failed one attempt of a Seek or Reason task,
 * which the workflow's Retry (infra/extagents-workflow.ts, `MODEL_RETRY`) ran again after a jittered
 * backoff, unless the task's attempts were exhausted (then the chunk is in `chunkFailures`, or the run
 * failed). Counted by the task before it rethrows the error, so the figure is exact for errors that
 * reached the task; retries made inside the SDK client are not included.
 */
export interface RetryReport {
  /** Transient model errors in all. */
  total: number;
  /** Per agent role. */
  byRole: Record<AgentRole, number>;
  /** Per error name, e.g. `{"ModelThrottledError": 12}`. */
  byError: Record<string, number>;
}

/** Why a chunk's seeking agent failed: the last error its Seek task recorded. */
export interface ChunkFailure {
  chunk: number;
  round: number;
  /** Error name (a class of shared/errors.ts, e.g. "ContextOverflowError"), or "Unknown". */
  error: string;
  message: string;
}

/** The final result of one question-answering run. */
export interface RunResult {
  runId: string;
  question: string;
  /** The answer, or exactly "NO ANSWER" when the run refuses. */
  answer: string;
  answerable: boolean;
  /**
   * What the answer (or refusal) is, when it is not a language model's reply: the extractive
   * reader's "extractive: a sentence chosen by word overlap, covering 72% of the question's weighted
   * words (it answers from 50%)". Absent for language models and for a refusal no KAR step made
   * (an empty pool).
   */
  answerBasis?: string;
  /**
   * The best-effort answer after the last round (run option `bestEffort`) when the quotes of the
   * messages it cites do not hold it (shared/support.ts): the run refuses (`answer` is "NO ANSWER",
   * `answerable` false) and the guess is kept here, never printed as an answer. Absent otherwise.
   */
  unsupportedAnswer?: string;
  /**
   * The model of each role that answered (`extractive`, `bedrock:<id>`, `openai:<model>`,
   * `llama:<file>`), from the run record; absent for runs prepared before it was recorded.
   */
  models?: Record<AgentRole, string>;
  citations: Citation[];
  /** KAR steps of the execution that produced this result (a resumed run re-runs KAR from k = 1). */
  trace: KarStep[];
  /**
   * Model calls and tokens per role for this run id, over all its executions: a resumed run adds
   * the calls its interrupted executions really made (the same holds for `retries` and `warnings`).
   */
  usage: Usage;
  /** What Prepare estimated before any model call (shared/cost.ts: at most), beside `usage`; absent for runs prepared before estimates. */
  estimate?: RunEstimate;
  /**
   * The seeking Map's MaxConcurrency, how Prepare derived it from the model's quota (shared/quota.ts)
   * with its warnings, and the throttled model calls of the run (`throttledCalls`: each one retried by
   * the workflow; the same count as `retries.byError.ModelThrottledError`). The time the workflow's
   * Retry waited is not known to the run (Step Functions does not tell the task). Absent for runs
   * prepared before it.
   */
  concurrency?: RunConcurrency;
  rounds: number;
  chunks: number;
  poolSize: number;
  /** Runs with `coverage: 'grow'` only: how many chunks each round sought (shared/coverage.ts). */
  coverage?: CoverageReport;
  /** Runs with `reseek: 'promising'` only: how many chunks each round sought (shared/reseek.ts). */
  reseek?: ReseekReport;
  /** Runs with `seekMode: 'batch'` only: how each round was sought (shared/pipeline/seek-batch.ts). */
  batch?: BatchReport;
  skipped: SkippedDocument[];
  /**
   * The chunks whose seeking agent failed permanently in the last round (tolerated by the
   * Distributed Map), in chunk order, each with the error that failed it.
   */
  chunkFailures: ChunkFailure[];
  /** Transient model errors, each retried by the workflow (see `RetryReport`). */
  retries: RetryReport;
  warnings: string[];
}

/**
 * What a run with `coverage: 'grow'` covered (shared/coverage.ts; docs/CONCEPTS.md, "Coverage that grows only
 * when needed"). Counts are chunks.
 */
export interface CoverageReport {
  mode: 'grow';
  /** Chunks sought in each round: the first `covered` chunks of the BM25 order. */
  covered: number;
  /** The most it could cover: min(`coverageMaxChunks`, chunks). */
  cap: number;
  /** Tranches sought in round 1 (1 = only the first). */
  tranches: number;
}

/**
 * What a run with `reseek: 'promising'` sought (shared/reseek.ts; docs/CONCEPTS.md, "Later rounds that re-read
 * only promising chunks"). Counts are chunks.
 */
/** How the rounds of a run with `seekMode: 'batch'` were sought, round 1 first (`RunResult.batch`). */
export interface BatchReport {
  rounds: Array<{
    round: number;
    /** `batch`: as batch jobs; `on-demand`: the round's seeking Map alone (`reason` says why). */
    mode: 'batch' | 'on-demand';
    reason?: string;
    /** Batch jobs submitted, and the service's final status of each (Bedrock: Completed, PartiallyCompleted, Failed, Expired, Stopped). */
    jobs: Array<{ status?: string; message?: string; records: number }>;
    /** Chunks asked as batch records. */
    records: number;
    /** Records whose reply became the chunk's seek; failed records and records a job never wrote were sought on demand. */
    recorded?: number;
    failedRecords?: number;
    missingRecords?: number;
  }>;
}

export interface ReseekReport {
  mode: 'promising';
  /**
   * Chunks each round was to seek, round 1 first: the chunks covered in round 1 (every chunk, or a
   * grow run's coverage), then the chunks the rule chose for each later round (0: the round was skipped).
   */
  chunksPerRound: number[];
}

/** The exact refusal marker of the method. */
export const NO_ANSWER = 'NO ANSWER' as const;
