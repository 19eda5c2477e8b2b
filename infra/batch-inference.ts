/**
 * Amazon Bedrock batch inference of the seeking agents (run option `seekMode: 'batch'`;
 * shared/pipeline/seek-batch.ts, lambdas/adapters/bedrock-batch.ts), for a `bedrock:` model spec:
 *
 * - the batch service role Bedrock assumes to run the jobs: trusted by `bedrock.amazonaws.com` only
 *   for model invocation jobs of the stack's account and region (aws:SourceAccount, aws:SourceArn),
 *   allowed to read the records (`runs/*\/batch/*\/input/*`), write the output
 *   (`runs/*\/batch/*\/output/*`), list those keys, and invoke the seeking model (the same model
 *   ARNs the Seek function may invoke: an inference profile and its foundation models);
 * - the Seek function's grants: CreateModelInvocationJob (on the jobs and the seeking model),
 *   GetModelInvocationJob (on the jobs), iam:PassRole of that role to Bedrock only, and the role's
 *   ARN in its BATCH_ROLE_ARN (lambdas/adapters/env.ts; without it a run seeks on demand);
 * - the failed jobs: an EventBridge rule on Bedrock's "Batch Inference Job State Change" events of
 *   this project's jobs (names `extagents-…`, shared/pipeline/seek-batch.ts) that ended Failed,
 *   Stopped or Expired, which keeps each event in a queue; infra/alarms.ts alarms while the queue
 *   holds one. The run itself is not lost: the chunks a failed job did not answer are sought on demand.
 *
 * Sources: "Create a custom service role for batch inference"
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-iam-sr.html), "Required permissions
 * for batch inference" (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-permissions.html),
 * "How EventBridge for Amazon Bedrock works" (detail-type and the `detail.status`, `batchJobName`
 * fields: https://docs.aws.amazon.com/bedrock/latest/userguide/monitoring-eventbridge-how-it-works.html).
 */
import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { acknowledge } from './nag';

/** Key patterns of a batch job's files in the project bucket (`runs/<runId>/batch/r<round>/p<part>/…`). */
export const BATCH_KEYS = {
  /** Every batch file of every run: what the role may list. */
  all: 'runs/*/batch/*',
  /** The records Bedrock reads (`…/input/records.jsonl`). */
  input: 'runs/*/batch/*/input/*',
  /** Where Bedrock writes the job's output (`…/output/<job id>/records.jsonl.out`, `manifest.json.out`). */
  output: 'runs/*/batch/*/output/*',
} as const;

/**
 * Prefix of the job names SubmitSeekBatch gives (shared/pipeline/seek-batch.ts `jobName`:
 * `extagents-<run hash>-r<round>-p<part>`): the failed-jobs rule matches only these.
 */
export const BATCH_JOB_NAME_PREFIX = 'extagents-';

/** Job statuses the failed-jobs rule keeps (Bedrock's ended statuses but Completed and PartiallyCompleted). */
export const FAILED_BATCH_JOB_STATUSES = ['Failed', 'Stopped', 'Expired'] as const;

/** Properties of {@link SeekBatchInference}. */
export interface SeekBatchInferenceProps {
  /** The project bucket (the records and the output live under `runs/<runId>/batch/`). */
  readonly bucket: s3.IBucket;
  /** The Seek function: it submits the jobs and reads their status. */
  readonly seekFunction: lambda.Function;
  /** The Bedrock resource ARNs of the seeking model (infra/extagents-stack.ts `bedrockResourceArns`). */
  readonly seekerModelArns: readonly string[];
}

/** The batch service role, the Seek function's batch grants, and the failed-jobs rule and queue. */
export class SeekBatchInference extends Construct {
  /** The role Bedrock assumes to run the seeking agents' batch jobs (BATCH_ROLE_ARN of the Seek function). */
  public readonly role: iam.Role;
  /** The state change events of failed, stopped or expired batch jobs (alarmed while not empty). */
  public readonly failedJobs: sqs.Queue;
  /** The EventBridge rule that puts those events in {@link failedJobs}. */
  public readonly failedJobsRule: events.Rule;

  constructor(scope: Construct, id: string, props: SeekBatchInferenceProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const jobArns = stack.formatArn({ service: 'bedrock', resource: 'model-invocation-job', resourceName: '*' });

    // Bedrock assumes the role for a job of this account and region only (the confused-deputy
    // conditions AWS documents for batch inference service roles).
    this.role = new iam.Role(this, 'ServiceRole', {
      assumedBy: new iam.ServicePrincipal('bedrock.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnEquals: { 'aws:SourceArn': jobArns },
        },
      }),
      description: "Bedrock batch inference of the seeking agents: reads a job's records and writes its output under runs/*/batch/ of the project bucket",
    });
    const ownBucket = { StringEquals: { 'aws:ResourceAccount': stack.account } };
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [props.bucket.bucketArn],
        conditions: { ...ownBucket, StringLike: { 's3:prefix': BATCH_KEYS.all } },
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [props.bucket.arnForObjects(BATCH_KEYS.input)], conditions: ownBucket }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [props.bucket.arnForObjects(BATCH_KEYS.output)], conditions: ownBucket }),
    );
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: [...props.seekerModelArns] }));

    // The Seek function starts jobs of the seeking model and reads their status, and may pass this
    // role to Bedrock only (no other service, no other role).
    const fn = props.seekFunction;
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['bedrock:CreateModelInvocationJob'], resources: [jobArns, ...props.seekerModelArns] }));
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['bedrock:GetModelInvocationJob'], resources: [jobArns] }));
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'bedrock.amazonaws.com' } },
      }),
    );
    fn.addEnvironment('BATCH_ROLE_ARN', this.role.roleArn);

    this.failedJobs = new sqs.Queue(this, 'FailedJobsQueue', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(this.failedJobs, {
      nag: ['AwsSolutions-SQS3'],
      reason:
        "Nothing consumes this queue: it keeps the failed batch jobs' state change events for the operator to read (its alarm is on while one is there), so a dead-letter queue would never receive anything.",
    });
    acknowledge(this.failedJobs, {
      checkov: ['CKV_AWS_27'],
      reason:
        'Encrypted at rest with SSE-SQS (SqsManagedSseEnabled: true); checkov 3.3 CKV_AWS_27 recognises only KmsMasterKeyId. Messages are Bedrock job state change events (job name, ARN, model id, status, failure message).',
    });
    this.failedJobsRule = new events.Rule(this, 'FailedJobsRule', {
      description:
        "A Bedrock batch job of the seeking agents failed, stopped or expired: keep its event in the failed-jobs queue (alarmed); the run seeks the job's chunks on demand.",
      eventPattern: {
        source: ['aws.bedrock'],
        detailType: ['Batch Inference Job State Change'],
        detail: { status: [...FAILED_BATCH_JOB_STATUSES], batchJobName: events.Match.prefix(BATCH_JOB_NAME_PREFIX) },
      },
      targets: [new targets.SqsQueue(this.failedJobs, { retryAttempts: 8, maxEventAge: Duration.hours(24) })],
    });
    new CfnOutput(stack, 'SeekBatchFailedJobsQueueUrl', {
      value: this.failedJobs.queueUrl,
      description: 'Events of failed, stopped or expired Bedrock batch jobs of the seeking agents (alarmed while not empty; read, then purge)',
    });
  }
}
