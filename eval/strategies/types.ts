/**
 * Shapes shared by the evaluation strategies (eval/strategies/*): what a strategy receives
 * (the question, the example's documents, the chunks every strategy shares, one `AgentModel`) and
 * what it returns (the prediction, the model calls with their stages, and the final reasoning
 * context used for evidence recall).
 *
 * Every strategy goes through the same `AgentModel` port (shared/ports.ts: `seek` and `reason`) and
 * the same chunks (`chunkCorpus` with the same `chunkTokens`), so differences in score and cost come
 * from the orchestration only. Each strategy documents how it maps onto seek / reason calls.
 */
import type { AgentModel } from '../../shared/ports';
import type { Chunk, Message, RunResult, SourceDocument } from '../../shared/types';
import { RunOptionsSchema, type RunOptionsInput } from '../../shared/config';
import type { KarRounds, KarStopRule, SynchronizationMode } from '../../shared/kar';
import type { EvalCall } from '../records';

/** Tunables of the strategies. Units: tokens of shared/tokenizer.ts (o200k_base). */
export interface StrategyOptions {
  /** Rounds of the ExtAgents variants with synchronization (paper: 2 suffice for multi-hop). */
  rounds: number;
  /** Evidence tokens the reasoning agent reads per call (KAR step, RAG context, reduce, manager). */
  reasonerBudgetTokens: number;
  /** Tokens of synchronized messages each seeking agent reads in rounds >= 2 (also CoA's note and the official broadcast). */
  syncBudgetTokens: number;
  /** Upper bound on synchronized messages before the token budget. */
  syncMaxMessages: number;
  /** k of each round's first KAR step (the run option `karFirstK`; the paper: 1). */
  karFirstK: number;
  /** When a KAR step's answer stands (the run option `karStop`, shared/support.ts). */
  karStop: KarStopRule;
  /** After which rounds KAR runs (the run option `karRounds`): each, or only the last. */
  karRounds: KarRounds;
  /** What synchronization gives round 2 (the run option `synchronization`): plain, or with the reasoning agent's follow-up question. */
  synchronization: SynchronizationMode;
  /** Answer from the best evidence when the method would refuse (the official code always forces an answer). */
  bestEffort: boolean;
  /** Model calls of one stage run at once (bounded). */
  callConcurrency: number;
  /** The reasoning model's context window, for `direct` (Llama-3.1-8B: 128k). */
  contextWindowTokens: number;
  /** Tokens kept free in the window for instructions, the question and the answer (`direct`). */
  promptReserveTokens: number;
  /** `direct` truncation: keep the front, or the first and last halves (InfiniteBench's "middle" for books). */
  truncation: 'front' | 'middle';
  /** Rounds of the reference (official) ExtAgents procedure; the last one forces an answer. */
  officialMaxRounds: number;
}

/** Defaults: the `extagents ask` defaults (shared/config.ts) plus the baselines' settings. */
export const DEFAULT_STRATEGY_OPTIONS: StrategyOptions = {
  rounds: 2,
  reasonerBudgetTokens: 16_000,
  syncBudgetTokens: 4_000,
  syncMaxMessages: 16,
  karFirstK: 1,
  karStop: RunOptionsSchema.shape.karStop.parse(undefined),
  karRounds: RunOptionsSchema.shape.karRounds.parse(undefined),
  synchronization: RunOptionsSchema.shape.synchronization.parse(undefined),
  bestEffort: true,
  callConcurrency: 8,
  contextWindowTokens: 128_000,
  promptReserveTokens: 1_000,
  truncation: 'front',
  officialMaxRounds: 5,
};

/** What a strategy receives for one example. */
export interface StrategyInput {
  question: string;
  /** The example's documents, in corpus order (the chunks are made from them). */
  documents: SourceDocument[];
  /** `chunkCorpus(documents, {chunkTokens})`, shared by every strategy of the example. */
  chunks: Chunk[];
  model: AgentModel;
  options: StrategyOptions;
  /** The chunk size the chunks were made with (tokens); the workflow re-chunks with it. Default 8000. */
  chunkTokens?: number;
  /**
   * The product's workflow (the local stack, as `extagents ask` runs it). When given, the `extagents`
   * and `extagents-no-sync` strategies run through it, so that the eval measures what users run;
   * without it (unit tests) they run the in-memory implementation of eval/strategies/extagents.ts.
   */
  workflow?: WorkflowRunner;
}

/** One question through the product's workflow (local/engine/eval-workflow.ts implements it). */
export type WorkflowRunner = (request: {
  question: string;
  documents: SourceDocument[];
  options: RunOptionsInput;
  /** The model every agent of the run calls (the strategy's recorder). */
  model: AgentModel;
}) => Promise<{
  result: RunResult;
  /** The document id of the eval's corpus for a document id of the run (the workflow's corpus keys differ). */
  originalId: (runDocumentId: string) => string;
}>;

/** What a strategy returns for one example. */
export interface StrategyResult {
  /** The answer, or "NO ANSWER" when the strategy refused. */
  prediction: string;
  answerable: boolean;
  /** One entry per model call, with its stage (see `EvalCall`). */
  calls: EvalCall[];
  /**
   * The messages of the final reasoning call's context (the call that produced the prediction; the
   * widest context read when the strategy refused). Their `quotes` locate them in the documents for
   * evidence recall; a message without quotes is matched on its text.
   */
  finalContext: Message[];
  warnings: string[];
}

/** A strategy: one example in, one result out. Throws the model's errors unchanged. */
export type Strategy = (input: StrategyInput) => Promise<StrategyResult>;
