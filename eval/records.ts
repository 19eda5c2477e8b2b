/**
 * The contract between the evaluation strategies / runner and the report: one record per
 * (dataset, strategy, target length, example). Written as JSON Lines by the runner, read by the
 * report. Units are in the names; tokens are of the project tokenizer unless a model reported them.
 */
import type { AgentRole } from '../shared/types';

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
  'question-only',
] as const;

/**
 * Ablations of the pool's ranking (run option `ranking`, shared/ranking.ts), each `extagents` through
 * the workflow with one other mode: `score` (the seeking agents' scores alone, the paper's ranking)
 * and `retrieval` (the lexical prior alone). `extagents` itself runs the default, `hybrid`. Not in
 * "all" (`STRATEGIES`, the paper's comparison); named explicitly (docs/EVAL.md, "Ablations").
 */
export const RANKING_ABLATIONS = ['extagents-rank-score', 'extagents-rank-retrieval'] as const;

/**
 * The product's extensions of the method (docs/CONCEPTS.md, "Coverage that grows only when needed", "Later
 * rounds that re-read only promising chunks"), each `extagents` through the workflow with one run
 * option: `extagents-grow` = `coverage: 'grow'` with the default first tranche; `extagents-reseek` =
 * `reseek: 'promising'` (the eval's `rounds`, 2 by default); `extagents-follow-up` and
 * `extagents-plain-sync` = `synchronization: 'follow-up'` / `'plain'` whatever `--synchronization`
 * says (the two synchronization rows side by side); `extagents-first-k1` = `karFirstK: 1`, the
 * paper's first KAR step, whatever the model's profile defaults it to; `extagents-kar-last` =
 * `karRounds: 'last'` (every round sought, KAR once after the last). Not in "all"; named explicitly
 * (docs/EVAL.md, "Extensions").
 */
export const EXTENSIONS = [
  'extagents-grow',
  'extagents-reseek',
  'extagents-follow-up',
  'extagents-plain-sync',
  'extagents-first-k1',
  'extagents-kar-last',
] as const;

/** Every strategy the eval can run: `STRATEGIES`, `RANKING_ABLATIONS`, then `EXTENSIONS` (report order). */
export const EVAL_STRATEGIES = [...STRATEGIES, ...RANKING_ABLATIONS, ...EXTENSIONS] as const;
export type StrategyName = (typeof EVAL_STRATEGIES)[number];

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
  /**
   * Calls of `calls` answered from the example's call memo (`runEval`'s `reuseCalls`): the same
   * request another strategy of the example already sent, so `wallMs` excludes their model time.
   * Absent when calls were not reused.
   */
  reusedCalls?: number;
  /** Set when the strategy failed on this example (then scores are 0). */
  error?: string;
  /** The example's category when its data set has one (HotpotQA: bridge / comparison). */
  questionType?: string;
  /**
   * The model's context window the run was fitted to, tokens of the model (a `llama:` model's `?ctx=`);
   * the report plots scores against `targetTokens / windowTokens` (docs/EVAL.md, "The curve"). Absent
   * when the model's window is unknown (Bedrock, an OpenAI-compatible server, the extractive reader).
   */
  windowTokens?: number;
}
