/**
 * Upload triggers (docs/UPLOADS.md): the project bucket sends its events to EventBridge, and
 * - Object Created under `corpora/` -> the ingest queue (SQS) -> the ingest Lambda
 *   (lambdas/ingest.ts: chunk, count and cache each corpus of a batch once, shared/pipeline/ingest.ts).
 *   The queue's batching window gathers the events of one upload burst, so a corpus of n files is
 *   ingested a few times, not n times (each ingestion reads the whole corpus); events that keep
 *   failing go to a dead-letter queue (alarmed) instead of being dropped;
 * - Object Created under `jobs/` ending in `.json` -> the jobs state machine:
 *
 *     PlanJob (Lambda: read and validate the job file, write one item per question)
 *       -> RunQuestions (Distributed Map over the items, MaxConcurrency bounded; per item
 *          RunQuestion = StartExecution.sync:2 of the question-answering state machine with the
 *          item's execution name; ExecutionAlreadyExists -> AlreadyStarted, any other error ->
 *          QuestionFailed, so one question never fails the job)
 *       -> WriteResults (Lambda: results/<name>.jsonl in input order and results/<name>.summary.json)
 *     PlanJob's InvalidInputError / ConfigurationError / NotFoundError -> JobRejected (Fail).
 *
 * Sources: "Using Lambda with Amazon SQS" (batching window, partial batch responses, visibility
 * timeout at least six times the function timeout:
 * https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html), "Using EventBridge" (https://docs.aws.amazon.com/AmazonS3/latest/userguide/EventBridge.html),
 * "Start workflow executions from a task state"
 * (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-nested-workflows.html), "Distributed
 * Map state" (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html).
 */
import type { SeekMode } from '../shared/seek-mode';
import { CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as lambdaEventSources from 'aws-cdk-lib/aws-lambda-event-sources';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { ConfigurationError, InvalidInputError, NotFoundError } from '../shared/errors';
import { ExtAgentsFunction } from './extagents-function';
import { grantObjectRead, grantObjectWrite } from './grants';
import { LAMBDA_SERVICE_RETRY } from './extagents-workflow';
import { acknowledge } from './nag';

/** How long the ingest queue gathers events before invoking the function (the SQS maximum). */
export const INGEST_BATCHING_WINDOW = Duration.minutes(5);
/** Events per ingest invocation at most (Lambda allows up to 10,000 with a batching window). */
export const INGEST_BATCH_SIZE = 1000;
/**
 * What is wrong with the settings of {@link UploadTriggers} (none: empty): `ingestChunkTokens`
 * 64-200,000, `jobConcurrency` 1-1,000. The stack lists these with its own before failing.
 */
export function uploadTriggerSettingProblems(props: { ingestChunkTokens?: number; jobConcurrency?: number }): string[] {
  const problems: string[] = [];
  const { ingestChunkTokens = 8000, jobConcurrency = 4 } = props;
  if (!Number.isInteger(ingestChunkTokens) || ingestChunkTokens < 64 || ingestChunkTokens > 200_000)
    problems.push(`ingestChunkTokens must be an integer from 64 to 200000, got ${ingestChunkTokens}`);
  if (!Number.isInteger(jobConcurrency) || jobConcurrency < 1 || jobConcurrency > 1000)
    problems.push(`jobConcurrency must be an integer from 1 to 1000, got ${jobConcurrency}`);
  return problems;
}

/** Receives of one event before it moves to the dead-letter queue. */
export const INGEST_MAX_RECEIVES = 3;
/** Ingest batches processed at once at most (the SQS event source's MaximumConcurrency; 2 is the minimum). */
export const INGEST_MAX_CONCURRENCY = 2;

/** State names of the jobs state machine. */
export const JOB_STATE_NAMES = {
  PlanJob: 'PlanJob',
  JobRejected: 'JobRejected',
  RunQuestions: 'RunQuestions',
  RunQuestion: 'RunQuestion',
  AlreadyStarted: 'AlreadyStarted',
  QuestionFailed: 'QuestionFailed',
  WriteResults: 'WriteResults',
} as const;

/**
 * Error of StartExecution when an execution of that name already exists (closed, or running with
 * another input). A running one with the same input is returned instead (StartExecution is
 * idempotent for Standard workflows), and `.sync` waits for it.
 * Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
 */
export const EXECUTION_ALREADY_EXISTS = 'StepFunctions.ExecutionAlreadyExists';

/** StartExecution refused for too many running executions (account quota): retried with backoff. */
export const EXECUTION_LIMIT_EXCEEDED = 'StepFunctions.ExecutionLimitExceeded';

/** Errors of PlanJob that reject the job (the job file or its key is invalid, or it is gone). */
export const PLAN_JOB_ERRORS = [InvalidInputError.name, ConfigurationError.name, NotFoundError.name] as const;

/** Properties of {@link UploadTriggers}. */
export interface UploadTriggersProps {
  /** The project bucket (its CloudFormation resource gets EventBridge notifications enabled). */
  readonly bucket: s3.Bucket;
  /** The question-answering state machine each job question runs on. */
  readonly stateMachine: sfn.StateMachine;
  /** Environment common to the project's functions (service name, NODE_OPTIONS). */
  readonly environment: Record<string, string>;
  readonly logRetention: logs.RetentionDays;
  /** L of the chunks ingestion caches, tokens: runs with this `chunkTokens` reuse them. @default 8000 */
  readonly ingestChunkTokens?: number;
  /**
   * The seeking mode of a job's questions whose options name none (run option `seekMode`; JOB_SEEK_MODE
   * of the PlanJob function). @default the run option's default (on demand)
   */
  readonly jobSeekMode?: SeekMode;
  /** Questions of one job running at once (Map MaxConcurrency). @default 4 */
  readonly jobConcurrency?: number;
  /** Level of the jobs state machine's execution logs. @default sfn.LogLevel.ERROR */
  readonly logLevel?: sfn.LogLevel;
}

/**
 * The upload triggers: ingestion of `corpora/`, jobs of `jobs/*.json`. Exposes its functions, rules
 * and the jobs state machine read-only.
 */
export class UploadTriggers extends Construct {
  public readonly ingestFunction: ExtAgentsFunction;
  public readonly planJobFunction: ExtAgentsFunction;
  public readonly writeResultsFunction: ExtAgentsFunction;
  /** Object Created under `corpora/` -> ingestQueue. */
  public readonly ingestRule: events.Rule;
  /** The events of `ingestRule`, read in batches by ingestFunction. */
  public readonly ingestQueue: sqs.Queue;
  /** Events that failed ingestion `INGEST_MAX_RECEIVES` times (kept 14 days; alarmed). */
  public readonly ingestDeadLetterQueue: sqs.Queue;
  /** Object Created under `jobs/` with suffix `.json` -> jobsStateMachine. */
  public readonly jobsRule: events.Rule;
  public readonly jobsStateMachine: sfn.StateMachine;
  public readonly jobsLogGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: UploadTriggersProps) {
    super(scope, id);
    const { bucket, stateMachine } = props;
    const ingestChunkTokens = props.ingestChunkTokens ?? 8000;
    const jobConcurrency = props.jobConcurrency ?? 4;
    const problems = uploadTriggerSettingProblems(props);
    if (problems.length > 0) throw new ConfigurationError(problems.join('; '));

    // EventBridge notifications, set on the CloudFormation resource (NotificationConfiguration.
    // EventBridgeConfiguration): the L2 `eventBridgeEnabled` prop deploys them through a custom
    // resource Lambda instead, which this needs not.
    const cfnBucket = bucket.node.defaultChild as s3.CfnBucket;
    cfnBucket.notificationConfiguration = { eventBridgeConfiguration: { eventBridgeEnabled: true } };

    // --- Ingestion -----------------------------------------------------------------------------
    this.ingestFunction = new ExtAgentsFunction(this, 'IngestFunction', {
      handler: 'ingest',
      sizing: { memorySize: 2048, timeout: Duration.minutes(15) },
      environment: { ...props.environment, BUCKET_NAME: bucket.bucketName, INGEST_CHUNK_TOKENS: String(ingestChunkTokens) },
      logRetention: props.logRetention,
      concurrency: { boundBy: `Invoked only by the ingest queue's SQS event source, whose maximum concurrency is ${INGEST_MAX_CONCURRENCY}.` },
    });
    grantObjectRead(bucket, this.ingestFunction, 'corpora/*');
    grantObjectRead(bucket, this.ingestFunction, 'cache/*');
    grantObjectWrite(bucket, this.ingestFunction, 'cache/*');

    this.ingestDeadLetterQueue = new sqs.Queue(this, 'IngestDeadLetterQueue', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(this.ingestDeadLetterQueue, { nag: ['AwsSolutions-SQS3'], reason: 'This is the dead-letter queue of the ingest queue.' });
    this.ingestQueue = new sqs.Queue(this, 'IngestQueue', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      // Lambda's guidance: at least six times the function timeout, so a batch is not received twice
      // while it is being ingested.
      visibilityTimeout: Duration.minutes(90),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.ingestDeadLetterQueue, maxReceiveCount: INGEST_MAX_RECEIVES },
    });
    for (const queue of [this.ingestQueue, this.ingestDeadLetterQueue]) {
      acknowledge(queue, {
        checkov: ['CKV_AWS_27'],
        reason:
          'Encrypted at rest with SSE-SQS (SqsManagedSseEnabled: true); checkov 3.3 CKV_AWS_27 recognises only KmsMasterKeyId. Messages are S3 event notifications (bucket and key names).',
      });
    }
    this.ingestFunction.addEventSource(
      new lambdaEventSources.SqsEventSource(this.ingestQueue, {
        batchSize: INGEST_BATCH_SIZE,
        maxBatchingWindow: INGEST_BATCHING_WINDOW,
        reportBatchItemFailures: true,
        // Two batches at once at most (the minimum): ingestions of one corpus are safe but repeat work.
        maxConcurrency: INGEST_MAX_CONCURRENCY,
      }),
    );
    this.ingestRule = new events.Rule(this, 'IngestRule', {
      description: 'Object Created under corpora/ in the project bucket: queue it for ingestion of that corpus.',
      eventPattern: objectCreatedPattern(bucket, events.Match.prefix('corpora/')),
      targets: [new targets.SqsQueue(this.ingestQueue, { retryAttempts: 2, maxEventAge: Duration.hours(1), deadLetterQueue: this.ingestDeadLetterQueue })],
    });

    // --- Jobs ----------------------------------------------------------------------------------
    const jobsEnvironment = {
      ...props.environment,
      BUCKET_NAME: bucket.bucketName,
      STATE_MACHINE_ARN: stateMachine.stateMachineArn,
      ...(props.jobSeekMode !== undefined && { JOB_SEEK_MODE: props.jobSeekMode }),
    };
    this.planJobFunction = new ExtAgentsFunction(this, 'PlanJobFunction', {
      handler: 'jobs',
      exportName: 'planHandler',
      sizing: { memorySize: 512, timeout: Duration.minutes(1) },
      environment: jobsEnvironment,
      logRetention: props.logRetention,
      concurrency: { boundBy: 'One invocation per job execution (its first state); jobs start from uploads of jobs/*.json.' },
    });
    grantObjectRead(bucket, this.planJobFunction, 'jobs/*');
    grantObjectWrite(bucket, this.planJobFunction, 'runs/_jobs/*');
    grantObjectWrite(bucket, this.planJobFunction, 'results/*');

    this.writeResultsFunction = new ExtAgentsFunction(this, 'WriteResultsFunction', {
      handler: 'jobs',
      exportName: 'resultsHandler',
      sizing: { memorySize: 1024, timeout: Duration.minutes(5) },
      environment: jobsEnvironment,
      logRetention: props.logRetention,
      concurrency: { boundBy: 'One invocation per job execution (its last state); jobs start from uploads of jobs/*.json.' },
    });
    grantObjectRead(bucket, this.writeResultsFunction, 'runs/*');
    grantObjectWrite(bucket, this.writeResultsFunction, 'results/*');
    stateMachine.grantExecution(this.writeResultsFunction, 'states:DescribeExecution');

    const planJob = new tasks.LambdaInvoke(this, JOB_STATE_NAMES.PlanJob, {
      lambdaFunction: this.planJobFunction,
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
    });
    planJob.addRetry(LAMBDA_SERVICE_RETRY);
    const jobRejected = new sfn.Fail(this, JOB_STATE_NAMES.JobRejected, {
      comment: 'The job file was rejected (results/<name>.summary.json says why): error and cause of PlanJob.',
      errorPath: '$.Error',
      causePath: '$.Cause',
    });
    planJob.addCatch(jobRejected, { errors: [...PLAN_JOB_ERRORS] });

    const runQuestion = new tasks.StepFunctionsStartExecution(this, JOB_STATE_NAMES.RunQuestion, {
      comment: 'One question: an execution of the question-answering workflow named after the job version and the question index.',
      stateMachine,
      integrationPattern: sfn.IntegrationPattern.RUN_JOB,
      name: sfn.JsonPath.stringAt('$.executionName'),
      input: sfn.TaskInput.fromJsonPathAt('$.input'),
      // The workflow's input schema is strict: no AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID key.
      associateWithParent: false,
      resultSelector: { 'status.$': '$.Status' },
    });
    runQuestion.addRetry({
      errors: [EXECUTION_LIMIT_EXCEEDED],
      interval: Duration.seconds(10),
      backoffRate: 2,
      maxAttempts: 6,
      maxDelay: Duration.minutes(5),
      jitterStrategy: sfn.JitterType.FULL,
    });
    const alreadyStarted = new sfn.Pass(this, JOB_STATE_NAMES.AlreadyStarted, {
      comment: 'A duplicate delivery: this question was started before (its result or error is read by WriteResults).',
      result: sfn.Result.fromObject({ status: 'ALREADY_STARTED' }),
    });
    const questionFailed = new sfn.Pass(this, JOB_STATE_NAMES.QuestionFailed, {
      comment: 'The question failed; WriteResults reports its error. The job goes on.',
      result: sfn.Result.fromObject({ status: 'FAILED' }),
    });
    runQuestion.addCatch(alreadyStarted, { errors: [EXECUTION_ALREADY_EXISTS] });
    runQuestion.addCatch(questionFailed, { errors: [sfn.Errors.ALL] });

    const runQuestions = new sfn.DistributedMap(this, JOB_STATE_NAMES.RunQuestions, {
      comment: 'Every question of the job, at most MaxConcurrency at once.',
      itemReader: new sfn.S3JsonItemReader({ bucket, key: sfn.JsonPath.stringAt('$.itemsKey') }),
      itemSelector: {
        executionName: sfn.JsonPath.stringAt('$$.Map.Item.Value.executionName'),
        input: sfn.JsonPath.objectAt('$$.Map.Item.Value.input'),
      },
      maxConcurrency: jobConcurrency,
      // Item outputs are a few bytes each ({"status": …}); the state after the Map is PlanJob's.
      resultPath: sfn.JsonPath.DISCARD,
      // Child workflows wait for a whole question-answering run: Express children stop at 5 minutes.
      mapExecutionType: sfn.StateMachineType.STANDARD,
      label: JOB_STATE_NAMES.RunQuestions,
    });
    runQuestions.itemProcessor(runQuestion);

    const writeResults = new tasks.LambdaInvoke(this, JOB_STATE_NAMES.WriteResults, {
      lambdaFunction: this.writeResultsFunction,
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
    });
    writeResults.addRetry(LAMBDA_SERVICE_RETRY);

    this.jobsLogGroup = new logs.LogGroup(this, 'JobsLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.jobsStateMachine = new sfn.StateMachine(this, 'JobsStateMachine', {
      comment: 'ExtAgents jobs: every question of jobs/<name>.json on the question-answering workflow; results to results/<name>.jsonl.',
      definitionBody: sfn.DefinitionBody.fromChainable(planJob.next(runQuestions).next(writeResults)),
      stateMachineType: sfn.StateMachineType.STANDARD,
      tracingEnabled: true,
      logs: { destination: this.jobsLogGroup, level: props.logLevel ?? sfn.LogLevel.ERROR, includeExecutionData: false },
    });

    this.jobsRule = new events.Rule(this, 'JobsRule', {
      description: 'Object Created under jobs/ with suffix .json in the project bucket: run the job.',
      eventPattern: objectCreatedPattern(bucket, events.Match.wildcard('jobs/*.json')),
      targets: [new targets.SfnStateMachine(this.jobsStateMachine, { retryAttempts: 2, maxEventAge: Duration.hours(1) })],
    });

    new CfnOutput(Stack.of(this), 'JobsStateMachineArn', {
      value: this.jobsStateMachine.stateMachineArn,
      description: 'Jobs workflow (started by uploads to jobs/<name>.json)',
    });
  }
}

/** S3 Object Created events of one bucket whose key matches `key`. */
function objectCreatedPattern(bucket: s3.IBucket, key: string[]): events.EventPattern {
  return {
    source: ['aws.s3'],
    detailType: ['Object Created'],
    detail: { bucket: { name: [bucket.bucketName] }, object: { key } },
  };
}
