/**
 * The evaluation strategies by name (`STRATEGIES` of eval/records.ts). Each file documents how
 * its strategy maps onto `AgentModel.seek` / `reason` calls and their stages.
 */
import { EXTENSIONS, RANKING_ABLATIONS, type StrategyName } from '../records';
import { runDirect, runQuestionOnly, runRag } from './baselines';
import { runChainOfAgents } from './chain-of-agents';
import { runExtAgents, runExtAgentsWorkflow } from './extagents';
import { runMapReduce } from './mapreduce';
import { runOfficial } from './official';
import type { Strategy } from './types';
import { FORCED_MAX_MESSAGES } from '../../shared/method';

export * from './types';
export { CallRecorder } from './recorder';

/**
 * The strategies that run through the product's workflow when the caller gives one (the eval command
 * does), whose Retry then retries the transient model errors; every other strategy calls the model
 * in memory (eval/retrying-model.ts gives those the same policy).
 */
export const WORKFLOW_STRATEGIES: ReadonlySet<StrategyName> = new Set<StrategyName>([
  'extagents',
  'extagents-no-sync',
  'extagents-no-kar',
  ...RANKING_ABLATIONS,
  ...EXTENSIONS,
]);

/** Every strategy, by name. */
export const STRATEGY_FUNCTIONS: Record<StrategyName, Strategy> = {
  // Through the product's workflow when the caller gives it (the eval command does), else in memory.
  extagents: (input) => (input.workflow ? runExtAgentsWorkflow(input, input.options.rounds) : runExtAgents(input, { rounds: input.options.rounds, kar: true })),
  'extagents-no-sync': (input) => (input.workflow ? runExtAgentsWorkflow(input, 1) : runExtAgents(input, { rounds: 1, kar: true })),
  // Without knowledge-accumulating reasoning: each round's one KAR step reads every message, best
  // first, to the reasoner's budget (the workflow with karFirstK at its most). Through the workflow,
  // its round-1 seeks are the same requests as extagents' (so --reuse-calls answers them).
  'extagents-no-kar': (input) =>
    input.workflow
      ? runExtAgentsWorkflow(input, input.options.rounds, undefined, { karFirstK: FORCED_MAX_MESSAGES })
      : runExtAgents(input, { rounds: input.options.rounds, kar: false }),
  'extagents-rank-score': (input) =>
    input.workflow
      ? runExtAgentsWorkflow(input, input.options.rounds, 'score')
      : runExtAgents(input, { rounds: input.options.rounds, kar: true, ranking: 'score' }),
  'extagents-rank-retrieval': (input) =>
    input.workflow
      ? runExtAgentsWorkflow(input, input.options.rounds, 'retrieval')
      : runExtAgents(input, { rounds: input.options.rounds, kar: true, ranking: 'retrieval' }),
  'extagents-grow': (input) =>
    input.workflow
      ? runExtAgentsWorkflow(input, input.options.rounds, undefined, { coverage: 'grow' })
      : Promise.reject(new Error('extagents-grow runs only through the workflow (coverage is a run option of Prepare)')),
  'extagents-reseek': (input) =>
    input.workflow
      ? runExtAgentsWorkflow(input, input.options.rounds, undefined, { reseek: 'promising' })
      : Promise.reject(new Error('extagents-reseek runs only through the workflow (reseek is a run option of Synchronize)')),
  'extagents-follow-up': (input) =>
    input.workflow
      ? runExtAgentsWorkflow(input, input.options.rounds, undefined, { synchronization: 'follow-up' })
      : runExtAgents(input, { rounds: input.options.rounds, kar: true, synchronization: 'follow-up' }),
  'extagents-plain-sync': (input) =>
    input.workflow
      ? runExtAgentsWorkflow(input, input.options.rounds, undefined, { synchronization: 'plain' })
      : runExtAgents(input, { rounds: input.options.rounds, kar: true, synchronization: 'plain' }),
  // The paper's first KAR step (k = 1) whatever the model's profile defaults karFirstK to (the
  // reference model's first step reads 4 messages: docs/EVAL.md, "The first step's k").
  'extagents-first-k1': (input) =>
    input.workflow
      ? runExtAgentsWorkflow(input, input.options.rounds, undefined, { karFirstK: 1 })
      : runExtAgents(input, { rounds: input.options.rounds, kar: true, firstK: 1 }),
  // Every round sought (each after synchronization), KAR once after the last (karRounds 'last').
  'extagents-kar-last': (input) =>
    input.workflow
      ? runExtAgentsWorkflow(input, input.options.rounds, undefined, { karRounds: 'last' })
      : runExtAgents(input, { rounds: input.options.rounds, kar: true, karRounds: 'last' }),
  official: runOfficial,
  direct: runDirect,
  rag: runRag,
  'question-only': runQuestionOnly,
  'chain-of-agents': runChainOfAgents,
  mapreduce: runMapReduce,
};
