/**
 * The contract between the evaluation strategies / runner and the report: one record per
 * (dataset, strategy, target length, example). Written as JSON Lines by the runner, read by the
 * report. Units are in the names; tokens are of the project tokenizer unless a model reported them.
 */
import type { AgentRole } from '../types';

/**
 * One model call of a strategy's run, for cost and the modeled latency. Calls with the same `stage`
 * may run in parallel (bounded by the runner's concurrency); stages run one after another, in
 * ascending order. E.g. extagents: stage 0 = all round-1 seeks, stage 1 = KAR step k=1, stage 2 =
 * k=2, …; chain-of-agents: one stage per worker.
 */
export interface EvalCall {
  stage: number;
  role: AgentRole;
  inputTokens: number;
  outputTokens: number;
}

/** Names of the strategies compared (docs/EVAL.md). */
export const STRATEGIES = [
  'extagents',
  'extagents-no-sync',
  'extagents-no-kar',
  'official',
  'direct',
  'rag',
  'chain-of-agents',
  'mapreduce',
] as const;
export type StrategyName = (typeof STRATEGIES)[number];

/** The result of one strategy on one example. */
export interface EvalRecord {
  dataset: string;
  strategy: StrategyName;
  /** Target input length in tokens (e.g. 8000, 128000, 1000000); the actual length is `inputTokens`. */
  targetTokens: number;
  /** Actual tokens of the example's context. */
  inputTokens: number;
  exampleId: string;
  question: string;
  prediction: string;
  answerable: boolean;
  gold: string[];
  /** Scores in [0, 1] by the dataset's official scorer. */
  em: number;
  f1: number;
  /**
   * Share of the gold supporting documents (e.g. HotpotQA supporting paragraphs) present in the final
   * reasoning context; null when the dataset has no such gold.
   */
  evidenceRecall: number | null;
  /** Model id per role (for the price table). */
  models: Record<AgentRole, string>;
  calls: EvalCall[];
  /** Wall time of this example in this process, ms (measured, not modeled). */
  wallMs: number;
  /** Set when the strategy failed on this example (then scores are 0). */
  error?: string;
}
