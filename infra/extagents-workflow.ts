/**
 * The ExtAgents workflow as one Step Functions state machine (Standard, JSONPath), built from typed
 * CDK constructs. docs/ARCHITECTURE.md is the contract: state names, the small state object, the
 * payload shapes below. The same construct serves the cloud and the local run (local/ synthesizes
 * it with bundling skipped and runs the resolved definition with aws-local-stepfunctions).
 *
 * Payloads each handler receives (Lambda `event`):
 *   Prepare            the execution input `{runId, question, corpus: {keys?, prefix?}, options?}`
 *   Seek               `{runId, round, chunk, covered}` (ItemSelector of SeekChunks; chunk = chunk index;
 *                      `speculative: true` added by SpeculativeSeekChunks)
 *   Reason             `{state: <workflow state>, force: false}`
 *   AnswerBestEffort   `{state: <workflow state>, force: true}` (the Reason function)
 *   Synchronize        the workflow state
 *   GrowCoverage       `{growCoverage: <workflow state>}` (the Synchronize function; coverage 'grow')
 *   Finalize           the workflow state
 * Each handler's returned object becomes the state (`payloadResponseOnly`, ResultPath `$`), except
 * Seek, whose results go to S3 through the ResultWriter (SeekChunks discards them from the state).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2 } from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import {
  ConfigurationError,
  CostLimitExceededError,
  InvalidRunOptionsError,
  EmptyCorpusError,
  InvalidInputError,
  QuotaExceededError,
  RETRYABLE_ERRORS,
} from '../shared/errors';
import type { HandlerName } from './extagents-function';
import { batchSeekingRound } from './batch-seeking';
import { MODEL_RETRY_POLICY } from '../shared/quota';
import { EXCEED_TOLERATED_FAILURE_THRESHOLD, WorkflowStateSchema } from '../shared/pipeline/state';

// The state names live in shared/ (no aws-cdk-lib) so that local progress and docs read them too.
export { STATE_NAMES, type StateName } from '../shared/pipeline/state-names';
import { STATE_NAMES, type StateName } from '../shared/pipeline/state-names';

/**
 * Error of the Fail state that ends the KAR branch of `PipelinedRound` when KAR of round r answered
 * (or found the pool empty): failing a branch stops the Parallel state's other branch (the
 * speculative round's Map Run included), and the Parallel's Catch takes the KAR state out of the
 * error's cause. A control-flow signal, never an execution's error.
 */
export const SPECULATION_STOPPED = 'SpeculationStopped';

/**
 * Lambda service errors worth retrying (throttling of the function's concurrency, transient service
 * faults). With a plain function ARN as Task resource, Step Functions reports them under these names.
 * Source: https://docs.aws.amazon.com/step-functions/latest/dg/bp-lambda-serviceexception.html
 */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ClientExecutionTimeoutException',
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
] as const;

/** Error of a Distributed Map over its tolerated failures (shared/pipeline/state.ts; re-exported for infra callers). */
export { EXCEED_TOLERATED_FAILURE_THRESHOLD };

/** Errors of Prepare that end the run at `PrepareFailed` with the handler's error name and cause. */
export const PREPARE_ERRORS = [
  EmptyCorpusError.name,
  ConfigurationError.name,
  InvalidInputError.name,
  InvalidRunOptionsError.name,
  CostLimitExceededError.name,
  QuotaExceededError.name,
] as const;

/**
 * Retry of a Seek, Reason or AnswerBestEffort task failed by a transient model error
 * (`RETRYABLE_ERRORS`: ModelThrottledError, ModelUnavailableError, ModelTimeoutError): the one
 * bounded, jittered backoff of the project for throttling. Delays 2 s, 4 s, 8 s, 16 s, 32 s, 60 s
 * (doubling, capped at 60 s), each drawn uniformly from [0, delay] (full jitter, so many throttled
 * seeking agents do not come back at once), 6 retries after the first attempt: at most 7 attempts
 * and at most 122 s of waiting per task.
 *
 * It does not multiply with a second backoff: the Bedrock client (models/bedrock/bedrock.ts)
 * never retries throttling or model timeouts itself and retries other transient failures (connection
 * errors, HTTP 5xx) at most once, after at most 200 ms. One model call is therefore sent at most
 * 7 times when throttled and 2 x 7 = 14 times for transient failures. ContextOverflowError,
 * ModelError and ModelConfigurationError are never retried (the use cases handle the first).
 * Each retried error is counted in the run's `RunResult.retries`.
 * Source: https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */
export const MODEL_RETRY: Readonly<sfn.RetryProps> = {
  errors: [...RETRYABLE_ERRORS],
  // The numbers live in shared/quota.ts, whose pre-flight check of a run's quota reads them too.
  interval: Duration.seconds(MODEL_RETRY_POLICY.intervalSeconds),
  backoffRate: MODEL_RETRY_POLICY.backoffRate,
  maxAttempts: MODEL_RETRY_POLICY.retries,
  maxDelay: Duration.seconds(MODEL_RETRY_POLICY.maxDelaySeconds),
  jitterStrategy: sfn.JitterType.FULL,
};

/** Bounded, fully jittered backoff of Lambda service errors: 1 s, 2 s, 4 s, … capped at 20 s, 5 attempts. */
export const LAMBDA_SERVICE_RETRY: Readonly<sfn.RetryProps> = {
  errors: [...LAMBDA_SERVICE_ERRORS],
  interval: Duration.seconds(1),
  backoffRate: 2,
  maxAttempts: 5,
  maxDelay: Duration.seconds(20),
  jitterStrategy: sfn.JitterType.FULL,
};

/** Properties of {@link ExtAgentsWorkflow}. */
export interface ExtAgentsWorkflowProps {
  /** The project bucket: holds the manifest SeekChunks reads and the Map Run results it writes. */
  readonly bucket: s3.IBucket;
  /** The five handlers, keyed by name (AnswerBestEffort invokes `reason`). */
  readonly functions: Readonly<Record<HandlerName, lambda.IFunction>>;
  /** Retention of the state machine's log group. @default one month */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Level of the state machine's execution logs (execution data is never included: it may hold
   * the question). @default sfn.LogLevel.ERROR
   */
  readonly logLevel?: sfn.LogLevel;
}

/**
 * The ExtAgents state machine:
 *
 *   Prepare -> SeekChunks (Distributed Map over the manifest; Seek per chunk) -> Reason -> Answered?
 *   Answered?: answered, or filtered (the content filter withheld the reply) -> Finalize | not exhausted -> Reason (k doubled)
 *            | covered < coverageCap -> GrowCoverage -> SeekChunks (the next tranche; coverage 'grow')
 *            | round < rounds and pool non-empty -> Synchronize -> RoundToSeek? -> SeekChunks (next round)
 *              (RoundToSeek?: a round with no chunk to seek, reseek 'promising', arrives refused -> Answered?)
 *            | bestEffort -> AnswerBestEffort -> Finalize | otherwise -> Finalize (refusal)
 *
 * Between SeekChunks and Reason, the Choice Pipelined?: with the run option pipelineRounds,
 * round < rounds and the coverage final (covered >= coverageCap), PipelinedRound (Parallel) runs KAR of round r (branch A) beside Synchronize +
 * SpeculativeSeekChunks of round r+1 (branch B); A fails with SpeculationStopped when round r needs
 * no next round (answered, or an empty pool), which stops B and is caught to Answered?; when both
 * end, round r+1 is adopted (AdoptSpeculativeRound -> Pipelined?) or, if its seeking failed, sought
 * again the ordinary way (KarState -> Answered? -> Synchronize). docs/ARCHITECTURE.md, "Pipelined rounds".
 * A round that reseek 'promising' skipped (Synchronize chose no chunk and returns it refused) never
 * reaches a seeking Map: RoundToSeek? (after Synchronize) and SpeculativeRoundToSeek? (branch B) end it,
 * and Pipelined?'s first rule sends its adopted state to Answered?. docs/ARCHITECTURE.md, "Reseek promising".
 *
 * Errors: Prepare's EmptyCorpusError / ConfigurationError / InvalidInputError / InvalidRunOptionsError / CostLimitExceededError / QuotaExceededError -> PrepareFailed;
 * SeekChunks' States.ExceedToleratedFailureThreshold, then States.ALL -> SeekingFailed. Both Fail
 * states take Error and Cause from the caught error (ErrorPath `$.Error`, CausePath `$.Cause`).
 *
 * Source: https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html
 */
export class ExtAgentsWorkflow extends Construct {
  /** The Standard state machine. */
  public readonly stateMachine: sfn.StateMachine;
  /** The state machine's execution log group. */
  public readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ExtAgentsWorkflowProps) {
    super(scope, id);
    // ResultWriterV2 is the non-deprecated ResultWriter; CDK renders it only under this feature
    // flag. Set here (before any child exists) so the construct works in any App.
    this.node.setContext(STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2, true);

    const { bucket, functions } = props;

    // --- Prepare ------------------------------------------------------------------------------
    const prepare = invoke(this, STATE_NAMES.Prepare, functions.prepare);
    const prepareFailed = new sfn.Fail(this, STATE_NAMES.PrepareFailed, {
      comment: 'Prepare rejected the run (empty corpus, invalid options or input): error and cause of the handler.',
      errorPath: '$.Error',
      causePath: '$.Cause',
    });
    prepare.addCatch(prepareFailed, { errors: [...PREPARE_ERRORS] });

    // --- SeekChunks: one seeking agent per chunk ----------------------------------------------
    const seek = invoke(this, STATE_NAMES.Seek, functions.seek);
    seek.addRetry(MODEL_RETRY);

    /**
     * A Distributed Map of one seeking agent per chunk of the manifest Prepare wrote: SeekChunks, and
     * its speculative twin of pipelined rounds (whose items say `speculative: true`).
     */
    const seekingMap = (id: string, comment: string, speculative: boolean): sfn.DistributedMap =>
      new sfn.DistributedMap(this, id, {
        comment,
        itemReader: new sfn.S3JsonItemReader({ bucket, key: sfn.JsonPath.stringAt('$.manifestKey') }),
        itemSelector: {
          runId: sfn.JsonPath.stringAt('$.runId'),
          round: sfn.JsonPath.numberAt('$.round'),
          chunk: sfn.JsonPath.numberAt('$$.Map.Item.Value.chunk'),
          // The coverage the chunk is sought at: recorded with its message, bounds the pool's reads.
          covered: sfn.JsonPath.numberAt('$.covered'),
          ...(speculative && { speculative: true }),
        },
        maxConcurrencyPath: '$.config.concurrency',
        toleratedFailurePercentagePath: '$.config.toleratedFailurePercentage',
        // Up to 100,000 item results: to S3 (runs/<runId>/map/<MapRunId>/…), never into the state.
        resultWriterV2: new sfn.ResultWriterV2({
          bucket,
          prefix: sfn.JsonPath.format('runs/{}/map', sfn.JsonPath.stringAt('$.runId')),
        }),
        resultPath: sfn.JsonPath.DISCARD,
        // Child workflows are Standard: an Express child is capped at 5 minutes, less than one Seek
        // invocation (10-minute timeout) plus its retries.
        mapExecutionType: sfn.StateMachineType.STANDARD,
        label: id,
      });
    const seekChunks = seekingMap(STATE_NAMES.SeekChunks, 'One seeking agent per chunk of the manifest written by Prepare.', false);
    seekChunks.itemProcessor(seek);
    const seekingFailed = new sfn.Fail(this, STATE_NAMES.SeekingFailed, {
      comment: 'Too many seeking agents failed (or the Map Run failed): error and cause of the Map Run.',
      errorPath: '$.Error',
      causePath: '$.Cause',
    });
    seekChunks.addCatch(seekingFailed, { errors: [EXCEED_TOLERATED_FAILURE_THRESHOLD] });
    seekChunks.addCatch(seekingFailed, { errors: [sfn.Errors.ALL] });

    // --- Knowledge-accumulating reasoning -----------------------------------------------------
    const reason = invoke(this, STATE_NAMES.Reason, functions.reason, { force: false });
    // The reasoning agent calls the model too: the same transient model errors are retried.
    reason.addRetry(MODEL_RETRY);
    const answerBestEffort = invoke(this, STATE_NAMES.AnswerBestEffort, functions.reason, { force: true });
    answerBestEffort.addRetry(MODEL_RETRY);
    const synchronize = invoke(this, STATE_NAMES.Synchronize, functions.synchronize);
    // Coverage that grows (run option coverage 'grow'; shared/coverage.ts): the next tranche of the
    // BM25 order, sought in the same round. The Synchronize function: light bookkeeping between a
    // refusal and the next seeking, as Synchronize is.
    const growCoverage = invoke(this, STATE_NAMES.GrowCoverage, functions.synchronize, { payload: { growCoverage: sfn.JsonPath.entirePayload } });
    const finalize = invoke(this, STATE_NAMES.Finalize, functions.finalize);

    const answered = new sfn.Choice(this, STATE_NAMES.Answered, {
      comment: 'After one KAR step: finish, widen k, grow the coverage, synchronize for the next round, or answer best-effort.',
    })
      .when(sfn.Condition.stringEquals('$.outcome', 'answered'), finalize)
      // The content filter withheld the reasoning agent's reply: no wider step, next round or
      // best-effort answer (each sends the same question to the same filter).
      .when(sfn.Condition.stringEquals('$.outcome', 'filtered'), finalize)
      .when(sfn.Condition.booleanEquals('$.exhausted', false), reason)
      .when(sfn.Condition.numberLessThanJsonPath('$.covered', '$.config.coverageCap'), growCoverage)
      .when(
        sfn.Condition.and(sfn.Condition.numberLessThanJsonPath('$.round', '$.config.rounds'), sfn.Condition.numberGreaterThan('$.poolSize', 0)),
        synchronize,
      )
      .when(sfn.Condition.booleanEquals('$.config.bestEffort', true), answerBestEffort)
      .otherwise(finalize);

    // --- Pipelined rounds (run option pipelineRounds) ------------------------------------------
    // After round r's seeking, with pipelineRounds and r < rounds: KAR of round r (branch A) and,
    // speculatively, Synchronize + seeking of round r+1 (branch B) at once. Round r's KAR steps read
    // only rounds 1..r (the top-k's round bound), so round r+1's messages cannot change them.
    const pipelined = new sfn.Choice(this, STATE_NAMES.Pipelined, {
      comment: 'With pipelineRounds, a next round and the coverage final: KAR of this round beside the next round seeking speculatively; else plain KAR.',
    });
    const pipelinedRound = new sfn.Parallel(this, STATE_NAMES.PipelinedRound, {
      comment: 'A: KAR of round r. B: Synchronize + SeekChunks of round r+1, speculatively. A ends B by failing with SpeculationStopped when it answers.',
      // kar: A's state; next: B's (the state of round r+1 from Synchronize, or with speculationError);
      // adopted: B's state with A's KAR step count (every field of the workflow state, from its schema).
      resultSelector: {
        kar: sfn.JsonPath.objectAt('$[0]'),
        next: sfn.JsonPath.objectAt('$[1]'),
        adopted: Object.fromEntries(
          Object.keys(WorkflowStateSchema.shape).map((field) => [field, sfn.JsonPath.objectAt(field === 'seq' ? '$[0].seq' : `$[1].${field}`)]),
        ),
      },
    });
    // Branch A: the KAR loop of round r.
    const pipelinedReason = invoke(this, STATE_NAMES.PipelinedReason, functions.reason, { force: false });
    pipelinedReason.addRetry(MODEL_RETRY);
    const stopSpeculation = new sfn.Pass(this, STATE_NAMES.StopSpeculation, {
      comment: 'The KAR state as the cause of SpeculationStopped.',
      parameters: { cause: sfn.JsonPath.jsonToString(sfn.JsonPath.entirePayload) },
    });
    stopSpeculation.next(
      new sfn.Fail(this, STATE_NAMES.SpeculationStopped, {
        comment: 'Round r needs no next round: stop the speculative one (its calls are reported as usage.speculative).',
        error: SPECULATION_STOPPED,
        causePath: '$.cause',
      }),
    );
    const pipelinedAnswered = new sfn.Choice(this, STATE_NAMES.PipelinedAnswered, {
      comment: 'As Answered?, for a round with a speculative next round: the next round is needed only after a refusal over a non-empty pool.',
    })
      .when(sfn.Condition.or(sfn.Condition.stringEquals('$.outcome', 'answered'), sfn.Condition.stringEquals('$.outcome', 'filtered')), stopSpeculation)
      .when(sfn.Condition.booleanEquals('$.exhausted', false), pipelinedReason)
      .when(
        sfn.Condition.numberGreaterThan('$.poolSize', 0),
        new sfn.Succeed(this, STATE_NAMES.KarRefused, { comment: 'Round r refused: the speculative round is used.' }),
      )
      .otherwise(stopSpeculation);
    pipelinedReason.next(pipelinedAnswered);
    // Branch B: round r+1, speculatively.
    const speculativeSynchronize = invoke(this, STATE_NAMES.SpeculativeSynchronize, functions.synchronize);
    const speculativeSeek = invoke(this, STATE_NAMES.SpeculativeSeek, functions.seek);
    speculativeSeek.addRetry(MODEL_RETRY);
    const speculativeSeekChunks = seekingMap(
      STATE_NAMES.SpeculativeSeekChunks,
      'SeekChunks of round r+1, started before KAR of round r ends; its calls are usage.speculative when round r answers.',
      true,
    );
    speculativeSeekChunks.itemProcessor(speculativeSeek);
    // A failed speculative round does not fail the run (round r may answer): the run seeks round r+1
    // again the ordinary way (chunks already sought are skipped), failing there as it would unpipelined.
    speculativeSeekChunks.addCatch(new sfn.Pass(this, STATE_NAMES.SpeculationFailed, { comment: 'Marks the speculative round as not sought.' }), {
      errors: [sfn.Errors.ALL],
      resultPath: '$.speculationError',
    });
    pipelinedRound.branch(pipelinedReason);
    // A promising run's round with no chunk to seek (shared/reseek.ts): its Synchronize returns it
    // refused; branch B ends without a Map over no items, and Pipelined? sends the adopted state on.
    pipelinedRound.branch(
      speculativeSynchronize.next(
        new sfn.Choice(this, STATE_NAMES.SpeculativeRoundToSeek, { comment: 'Reseek promising: did the rule choose any chunk for round r+1?' })
          .when(
            sfn.Condition.stringEquals('$.outcome', 'refused'),
            new sfn.Succeed(this, STATE_NAMES.SpeculativeRoundSkipped, { comment: 'No chunk to seek in round r+1: nothing new can enter the pool.' }),
          )
          .otherwise(speculativeSeekChunks),
      ),
    );
    // After the Parallel: A stopped B (answered, or nothing to seek) -> the KAR state to Answered?.
    const stoppedState = new sfn.Pass(this, STATE_NAMES.StoppedState, {
      comment: 'The KAR state of round r, from the cause of SpeculationStopped.',
      parameters: { state: sfn.JsonPath.stringToJson(sfn.JsonPath.stringAt('$.stopped.Cause')) },
      outputPath: '$.state',
    });
    pipelinedRound.addCatch(stoppedState, { errors: [SPECULATION_STOPPED], resultPath: '$.stopped' });
    stoppedState.next(answered);
    // Both ended: round r refused. B sought round r+1 -> its KAR (the state of Synchronize, with the
    // KAR step count of A); B failed -> the ordinary Synchronize and SeekChunks from A's state.
    const karState = new sfn.Pass(this, STATE_NAMES.KarState, { comment: 'The KAR state of round r.', outputPath: '$.kar' });
    karState.next(answered);
    const adopt = new sfn.Pass(this, STATE_NAMES.AdoptSpeculativeRound, {
      comment: 'The state of round r+1 (Synchronize) with the KAR step count of round r.',
      outputPath: '$.adopted',
    });
    adopt.next(pipelined);
    pipelinedRound.next(
      new sfn.Choice(this, STATE_NAMES.SpeculativeRoundSought, { comment: 'Did the speculative round r+1 finish its seeking?' })
        .when(sfn.Condition.isPresent('$.next.speculationError'), karState)
        .otherwise(adopt),
    );
    pipelined
      // A round Synchronize skipped (reseek 'promising', no chunk chosen) arrives refused at every k.
      .when(sfn.Condition.stringEquals('$.outcome', 'refused'), answered)
      .when(
        sfn.Condition.and(
          sfn.Condition.booleanEquals('$.config.pipelineRounds', true),
          sfn.Condition.numberLessThanJsonPath('$.round', '$.config.rounds'),
          // A grow run's refusal grows the coverage before any next round: speculate only once it is final.
          sfn.Condition.numberGreaterThanEqualsJsonPath('$.covered', '$.config.coverageCap'),
        ),
        pipelinedRound,
      )
      .otherwise(reason);

    // Each round's seeking: on demand (SeekChunks), or with seekMode 'batch' as batch jobs first
    // (infra/batch-seeking.ts), the Map seeking on demand only what the jobs did not answer.
    const seekRound = new sfn.Choice(this, STATE_NAMES.SeekMode, { comment: "Run option seekMode: 'batch' submits the round as batch jobs first." })
      .when(
        sfn.Condition.and(sfn.Condition.isPresent('$.config.seekMode'), sfn.Condition.stringEquals('$.config.seekMode', 'batch')),
        batchSeekingRound(this, {
          prefix: '',
          seekFunction: functions.seek,
          eventFields: {
            runId: sfn.JsonPath.stringAt('$.runId'),
            round: sfn.JsonPath.numberAt('$.round'),
            manifestKey: sfn.JsonPath.stringAt('$.manifestKey'),
            covered: sfn.JsonPath.numberAt('$.covered'),
          },
          stateFields: Object.keys(WorkflowStateSchema.shape),
          seekingMap: seekChunks,
          afterSeeking: pipelined,
          lambdaServiceRetry: LAMBDA_SERVICE_RETRY,
          modelRetry: MODEL_RETRY,
        }),
      )
      .otherwise(seekChunks);
    const definition = prepare.next(seekRound);
    seekChunks.next(pipelined);
    reason.next(answered);
    // Reseek 'promising' (shared/reseek.ts): a next round whose rule chose no chunk is skipped,
    // refused at every k over the pool of the rounds before (Synchronize says so); else it is sought.
    synchronize.next(
      new sfn.Choice(this, STATE_NAMES.RoundToSeek, { comment: 'Reseek promising: did the rule choose any chunk for the next round?' })
        .when(sfn.Condition.stringEquals('$.outcome', 'refused'), answered)
        .otherwise(seekRound),
    );
    growCoverage.next(seekRound);
    answerBestEffort.next(finalize);

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      comment: 'ExtAgents: seeking agents over all chunks, knowledge-accumulating reasoning, global knowledge synchronization.',
      definitionBody: sfn.DefinitionBody.fromChainable(definition),
      stateMachineType: sfn.StateMachineType.STANDARD,
      tracingEnabled: true,
      logs: { destination: this.logGroup, level: props.logLevel ?? sfn.LogLevel.ERROR, includeExecutionData: false },
    });
  }
}

/**
 * A LambdaInvoke whose output is the function's returned object (`payloadResponseOnly`: the Task
 * resource is the function ARN, no `Payload` envelope). Without `input` the payload is the state
 * itself; with `{force}`, `{"state.$": "$", "force": <force>}` (Reason); with `{payload}`, that object. The default Lambda retry
 * of CDK is replaced by {@link LAMBDA_SERVICE_RETRY} (adds full jitter, a delay cap and
 * Lambda.TooManyRequestsException).
 */
function invoke(
  scope: Construct,
  stateName: StateName,
  fn: lambda.IFunction,
  input?: { force: boolean } | { payload: Record<string, unknown> },
): tasks.LambdaInvoke {
  const task = new tasks.LambdaInvoke(scope, stateName, {
    lambdaFunction: fn,
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
    ...(input && {
      payload: sfn.TaskInput.fromObject('force' in input ? { state: sfn.JsonPath.entirePayload, force: input.force } : input.payload),
    }),
  });
  task.addRetry(LAMBDA_SERVICE_RETRY);
  return task;
}
