/**
 * The state names of the ExtAgents workflow (infra/extagents-workflow.ts builds the states; this file
 * holds only their names, without aws-cdk-lib, so that local progress (local/engine/run-progress.ts)
 * and tests read the same names). They are a contract: local overrides, progress and docs
 * (docs/ARCHITECTURE.md) are keyed by them.
 */
export const STATE_NAMES = {
  Prepare: 'Prepare',
  PrepareFailed: 'PrepareFailed',
  SeekChunks: 'SeekChunks',
  Seek: 'Seek',
  SeekingFailed: 'SeekingFailed',
  Reason: 'Reason',
  Answered: 'Answered?',
  Synchronize: 'Synchronize',
  GrowCoverage: 'GrowCoverage',
  // Run option reseek 'promising': a round >= 2 whose rule chose no chunk is skipped.
  RoundToSeek: 'RoundToSeek?',
  AnswerBestEffort: 'AnswerBestEffort',
  Finalize: 'Finalize',
  // Pipelined rounds (run option pipelineRounds; paper 2B "Parallelism"):
  Pipelined: 'Pipelined?',
  PipelinedRound: 'PipelinedRound',
  PipelinedReason: 'PipelinedReason',
  PipelinedAnswered: 'PipelinedAnswered?',
  KarRefused: 'KarRefused',
  StopSpeculation: 'StopSpeculation',
  SpeculationStopped: 'SpeculationStopped',
  SpeculativeSynchronize: 'SpeculativeSynchronize',
  SpeculativeRoundToSeek: 'SpeculativeRoundToSeek?',
  SpeculativeRoundSkipped: 'SpeculativeRoundSkipped',
  SpeculativeSeekChunks: 'SpeculativeSeekChunks',
  SpeculativeSeek: 'SpeculativeSeek',
  SpeculationFailed: 'SpeculationFailed',
  StoppedState: 'StoppedState',
  SpeculativeRoundSought: 'SpeculativeRoundSought?',
  KarState: 'KarState',
  AdoptSpeculativeRound: 'AdoptSpeculativeRound',
  // Batch seeking (run option seekMode 'batch'; shared/pipeline/seek-batch.ts):
  SeekMode: 'SeekMode?',
  ...batchSeekingStateNames(''),
} as const;

/**
 * The states of a batch-seeking round (infra/batch-seeking.ts), with a prefix per state machine
 * (the QA workflow's: none; the survey's: `Survey`): submit the round's records, wait, check, and
 * leave with the chunks the jobs did not answer for the seeking Map, or none.
 */
export function batchSeekingStateNames<P extends string>(prefix: P) {
  return {
    SubmitSeekBatch: `${prefix}SubmitSeekBatch`,
    SeekBatchStatus: `${prefix}SeekBatchStatus?`,
    WaitForSeekBatch: `${prefix}WaitForSeekBatch`,
    CheckSeekBatch: `${prefix}CheckSeekBatch`,
    SeekBatchRemainder: `${prefix}SeekBatchRemainder`,
    SeekBatchComplete: `${prefix}SeekBatchComplete`,
  } as const satisfies Record<string, string>;
}

/** One of the workflow's state names. */
export type StateName = (typeof STATE_NAMES)[keyof typeof STATE_NAMES];
