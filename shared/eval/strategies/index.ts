/**
 * The evaluation strategies by name (`STRATEGIES` of shared/eval/records.ts). Each file documents how
 * its strategy maps onto `AgentModel.seek` / `reason` calls and their stages.
 */
import type { StrategyName } from '../records';
import { runDirect, runRag } from './baselines';
import { runChainOfAgents } from './chain-of-agents';
import { runExtAgents } from './extagents';
import { runMapReduce } from './mapreduce';
import { runOfficial } from './official';
import type { Strategy } from './types';

export * from './types';
export { CallRecorder } from './recorder';

/** Every strategy, by name. */
export const STRATEGY_FUNCTIONS: Record<StrategyName, Strategy> = {
  extagents: (input) => runExtAgents(input, { rounds: input.options.rounds, kar: true }),
  'extagents-no-sync': (input) => runExtAgents(input, { rounds: 1, kar: true }),
  'extagents-no-kar': (input) => runExtAgents(input, { rounds: input.options.rounds, kar: false }),
  official: runOfficial,
  direct: runDirect,
  rag: runRag,
  'chain-of-agents': runChainOfAgents,
  mapreduce: runMapReduce,
};
