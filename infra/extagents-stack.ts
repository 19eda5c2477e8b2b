/**
 * The ExtAgents stack: the project bucket, the run table, the five handlers with their grants, and
 * the workflow. `buildStack` is the one entry point used by the CDK app (infra/app.ts), the
 * infrastructure tests and the local run (which synthesizes in-process with bundling skipped).
 */
import { App, type AppProps, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY } from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';
import { ExtAgentsFunction, HANDLER_NAMES, type HandlerName } from './extagents-function';
import { grantObjectRead, grantObjectWrite } from './grants';
import { ExtAgentsApi } from './api';
import { ExtAgentsWorkflow } from './extagents-workflow';
import { OperationsAlarms } from './alarms';
import { SeekBatchInference } from './batch-inference';
import { OperationsDashboard } from './dashboard';
import { UploadTriggers, uploadTriggerSettingProblems } from './ingest';
import { SurveyWorkflows, surveySettingProblems } from './survey';
import { acknowledge, acknowledgeStackFindings } from './nag';
import { DEFAULT_SEEK_RESERVED_CONCURRENCY } from '../shared/capacity';
import { ConfigurationError, InvalidInputError } from '../shared/errors';
import { RELEVANCE_INDEX_NAME } from '../shared/pool';
import { modelTraits } from '../models/traits';
import type { ExternalServer } from '../models/port';
import { foundationModelIdOf, isInferenceProfileId } from '../models/bedrock/traits';
import { DEFAULT_MODEL_SPEC, parseModelSpec, type ModelSpec } from '../models/spec';

/** The default model spec of the app (models/spec.ts `DEFAULT_MODEL_SPEC`). */
export { DEFAULT_MODEL_SPEC };

/**
 * Days a replaced or deleted object of the project bucket keeps its previous version (S3 versioning,
 * NoncurrentVersionExpiration): long enough to restore an overwritten corpus, job or schedule.
 */
export const NONCURRENT_VERSION_DAYS = 30;

/** Reserved concurrency of the Seek function unless `seekReservedConcurrency` says otherwise (defined in shared/capacity.ts, whose model of the AWS path reads it). */
export { DEFAULT_SEEK_RESERVED_CONCURRENCY };

/** The concurrency bound of the workflow's handlers other than Seek (checkov CKV_AWS_115, infra/nag.ts). */
const WORKFLOW_STATE_CONCURRENCY = {
  boundBy:
    'A state of the workflow outside its Distributed Map (Prepare, the KAR steps, Synchronize, Finalize run one at a time): at most one invocation per running execution.',
} as const;

/** Name of the GSI that orders a run's messages by relevance score (shared/pool.ts; docs/ARCHITECTURE.md). */
export { RELEVANCE_INDEX_NAME };

/** Service name of the handlers' structured logs (Powertools `POWERTOOLS_SERVICE_NAME`). */
export const SERVICE_NAME = 'extagents';

/** Properties of {@link ExtAgentsStack}. */
export interface ExtAgentsStackProps extends StackProps {
  /**
   * Model spec: `extractive`, `bedrock:<modelId>`, `bedrock:<seekerModelId>,<reasonerModelId>`
   * (model ids or cross-region inference profile ids) or `openai:<model>[,<reasonerModel>]` (with
   * `openaiBaseUrl`). Passed to the handlers as `MODEL_SPEC` and used to scope
   * `bedrock:InvokeModel`; parsed with `parseModelSpec` (models/spec.ts).
   * @default DEFAULT_MODEL_SPEC
   */
  readonly modelSpec?: string;
  /** Retention of the handlers' and the state machine's log groups. @default one month */
  readonly logRetention?: logs.RetentionDays;
  /** Level of the state machine's execution logs. @default sfn.LogLevel.ERROR */
  readonly stateMachineLogLevel?: sfn.LogLevel;
  /**
   * Days run data is kept: DynamoDB TTL of run items (`RUN_RETENTION_DAYS`) and S3 expiration of
   * `runs/` (run files, job plans). @default 30
   */
  readonly retentionDays?: number;
  /** L of the chunks that ingestion of `corpora/<id>/` caches (tokens). @default 8000 */
  readonly ingestChunkTokens?: number;
  /** Questions of one job running at once. @default 4 */
  readonly jobConcurrency?: number;
  /** Create an SNS topic the alarms notify. @default false (true when `alarmEmail` is set) */
  readonly alarmTopic?: boolean;
  /** E-mail address subscribed to the alarm topic. */
  readonly alarmEmail?: string;
  /**
   * Cron expression of the bulk survey schedule (EventBridge Scheduler, six fields, e.g.
   * `0 6 ? * MON *`, UTC): runs every survey of `surveys/schedule.json`.
   * @default CDK context `surveyScheduleCron`; unset = no schedule
   */
  readonly surveyScheduleCron?: string;
  /** Surveys of one bulk run at once. @default 2 */
  readonly surveyConcurrency?: number;
  /**
   * Reserved concurrency of the Seek function (ReservedConcurrentExecutions): the most seeking agents
   * of all runs, jobs and surveys together that call the model at once, kept from the rest of the
   * account. Invocations beyond it are throttled and retried by the state machines (Lambda
   * TooManyRequestsException, backoff in infra/extagents-workflow.ts). 0: no reservation (an account
   * must keep 100 executions unreserved, so an account whose quota is below 100 + this needs 0).
   * @default DEFAULT_SEEK_RESERVED_CONCURRENCY
   */
  readonly seekReservedConcurrency?: number;
  /**
   * The seeking model's quota (Service Quotas → Amazon Bedrock → "On-demand InvokeModel requests per
   * minute for <model>" and "… tokens per minute for <model>"; "Cross-Region …" for an inference
   * profile), the default of every run (a run's options `quotaRequestsPerMinute` /
   * `quotaTokensPerMinute` override it): Prepare derives the seeking Map's MaxConcurrency from it
   * (shared/quota.ts). Set on the workflow's functions as SEEK_QUOTA_REQUESTS_PER_MINUTE /
   * SEEK_QUOTA_TOKENS_PER_MINUTE.
   * @default CDK context `quotaRequestsPerMinute`, `quotaTokensPerMinute`; unset = none stated
   */
  readonly seekQuota?: { readonly requestsPerMinute?: number; readonly tokensPerMinute?: number };
  /**
   * API root of the OpenAI-compatible server of an `openai:` spec, including the version path
   * (`https://<host>/v1`): required with such a spec, https:// only. Set as OPENAI_BASE_URL.
   * @default CDK context `openaiBaseUrl`
   */
  readonly openaiBaseUrl?: string;
  /**
   * Name of a Secrets Manager secret (stack's account and region) holding that server's API key:
   * the model-calling functions may read that secret only, and find its name in OPENAI_API_KEY_SECRET.
   * @default CDK context `openaiApiKeySecretName`; unset = requests carry no key
   */
  readonly openaiApiKeySecretName?: string;
}

/**
 * The stack. Resources:
 * - S3 bucket (all public access blocked, TLS-only bucket policy, SSE-S3, versioned, retained on delete):
 *   `corpora/…` uploads and `runs/<runId>/…` run files and Map Run results.
 * - DynamoDB table `pk`/`sk` (S), on-demand, point-in-time recovery, TTL attribute `ttl`, GSI
 *   `byRelevance` (`gsi1pk`/`gsi1sk`, S, projection ALL).
 * - Five handlers, each with its own role (Prepare reads the bucket and writes runs/; the others read
 *   and write runs/ and the table; Seek and Reason may invoke their model: Bedrock InvokeModel, or read
 *   the key secret of an `openai:` spec).
 * - The workflow (Standard state machine).
 * - For a `bedrock:` spec, batch seeking (infra/batch-inference.ts): the batch service role Bedrock
 *   assumes (reads `runs/*\/batch/*\/input/*`, writes `…/output/*`, invokes the seeking model), the
 *   Seek function's grants to start and read jobs and pass that role (BATCH_ROLE_ARN), and a rule
 *   keeping the events of failed, stopped or expired jobs in an alarmed queue.
 * - The upload triggers (infra/ingest.ts, docs/UPLOADS.md): EventBridge notifications of the bucket,
 *   ingestion of `corpora/`, the jobs state machine for `jobs/*.json`.
 * - Surveys (infra/survey.ts, docs/SURVEY.md): the survey state machine (reusing the Seek function),
 *   the bulk state machine over `surveys/schedule.json`, and an EventBridge Scheduler schedule when
 *   `surveyScheduleCron` is set.
 * - The operations baseline: server access logs to a separate bucket, S3 expiry of `runs/` after
 *   `retentionDays` (the TTL of run items), alarms on failed/throttled executions and throttled
 *   functions (infra/alarms.ts, optional SNS topic), reviewed cdk-nag findings (infra/nag.ts).
 *
 * @throws ConfigurationError (from the constructor) listing every invalid setting, one line each: an
 *   invalid `modelSpec`, an `openai:` spec without an https:// `openaiBaseUrl`, numbers out of range.
 */
export class ExtAgentsStack extends Stack {
  /** The project bucket. */
  public readonly bucket: s3.Bucket;
  /** The run table (messages, seek records, counters, KAR steps). */
  public readonly table: dynamodb.Table;
  /** The workflow's state machine. */
  public readonly stateMachine: sfn.StateMachine;
  /** The five handlers, keyed by name. */
  public readonly functions: Readonly<Record<HandlerName, ExtAgentsFunction>>;
  /** The validated model spec. */
  public readonly modelSpec: ModelSpec;
  /** Ingestion of `corpora/` and jobs of `jobs/*.json` (infra/ingest.ts). */
  public readonly triggers: UploadTriggers;
  /** Alarms on failed and throttled executions and throttled functions (infra/alarms.ts). */
  public readonly alarms: OperationsAlarms;
  /** The operations dashboard: the workflow's metrics, executions and alarms (infra/dashboard.ts). */
  public readonly dashboard: OperationsDashboard;
  /** The survey and bulk survey state machines and the optional schedule (infra/survey.ts). */
  public readonly surveys: SurveyWorkflows;
  /** Bedrock batch inference of the seeking agents (infra/batch-inference.ts); only with a `bedrock:` spec. */
  public readonly seekBatch?: SeekBatchInference;

  constructor(scope: Construct, id: string, props: ExtAgentsStackProps = {}) {
    super(scope, id, props);
    // Access logs are delivered under a bucket policy (logging.s3.amazonaws.com), not the legacy
    // LogDeliveryWrite ACL; CDK renders that only under this feature flag, set here (before any
    // child exists) so the stack is the same in any App.
    this.node.setContext(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    const modelSpecText = (props.modelSpec ?? DEFAULT_MODEL_SPEC).trim();
    // Every invalid setting at once (as CDK's own validation reports), not only the first.
    const problems = stackSettingProblems(this, modelSpecText, props);
    if (problems.length === 1) throw new ConfigurationError(problems[0]);
    if (problems.length > 1) throw new ConfigurationError(`${problems.length} invalid settings:\n- ${problems.join('\n- ')}`);
    this.modelSpec = parseModelSpec(modelSpecText);
    // What the deployment needs of the model, by its traits (models/traits.ts), never by its kind.
    const traits = modelTraits(this.modelSpec);
    const server = traits.externalServer ? serverDeploymentOf(this, modelSpecText, props, traits.externalServer) : undefined;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    const retentionDays = props.retentionDays ?? 30;

    // Server access logs of the project bucket (who read or wrote which corpus, job, result).
    const accessLogs = new s3.Bucket(this, 'AccessLogsBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ id: 'ExpireAccessLogs', expiration: Duration.days(365) }],
    });
    acknowledge(accessLogs, {
      nag: ['AwsSolutions-S1'],
      checkov: ['CKV_AWS_18'],
      reason: 'This is the access log bucket: logging its own accesses into itself would loop.',
    });
    acknowledge(accessLogs, {
      checkov: ['CKV_AWS_21'],
      reason:
        'Access log objects are written once under unique keys by the logging service and never overwritten; versioning would only keep expired logs longer.',
    });
    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'project-bucket/',
      // Versioned: a corpus, job or schedule file uploaded again under the same key (or deleted) keeps
      // its previous version for NONCURRENT_VERSION_DAYS, so an overwrite loses nothing at once.
      versioned: true,
      // Run files and job plans expire with the run items' TTL; corpora, cache, jobs and results stay.
      // api/ stays too: an idempotency record must outlive the execution name derived from its key
      // (Step Functions keeps a Standard execution's name for 90 days after it ends), or a reused key
      // with another body would be answered with the old run instead of 409.
      lifecycleRules: [
        { id: 'ExpireRunData', prefix: 'runs/', expiration: Duration.days(retentionDays) },
        {
          id: 'ExpireNoncurrentVersions',
          noncurrentVersionExpiration: Duration.days(NONCURRENT_VERSION_DAYS),
          expiredObjectDeleteMarker: true,
          abortIncompleteMultipartUploadAfter: Duration.days(7),
        },
      ],
    });

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: 'ttl',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(this.table, {
      checkov: ['CKV_AWS_119'],
      reason:
        'Encrypted at rest with the DynamoDB owned key (the default); its items are run state that expires with the TTL. A customer managed key is a per-account choice (cost per key and request), not needed by the workflow.',
    });
    this.table.addGlobalSecondaryIndex({
      indexName: RELEVANCE_INDEX_NAME,
      partitionKey: { name: 'gsi1pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'gsi1sk', type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });

    const seekReserved = props.seekReservedConcurrency ?? DEFAULT_SEEK_RESERVED_CONCURRENCY;
    const seekConcurrency =
      seekReserved > 0
        ? { reserved: seekReserved }
        : {
            boundBy:
              "seekReservedConcurrency=0: no reservation by choice; each run's Distributed Map MaxConcurrency (the run's concurrency) and the account quota bound it.",
          };

    const environment: Record<string, string> = {
      TABLE_NAME: this.table.tableName,
      BUCKET_NAME: this.bucket.bucketName,
      MODEL_SPEC: modelSpecText,
      RUN_RETENTION_DAYS: String(retentionDays),
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      NODE_OPTIONS: '--enable-source-maps',
      // Wherever MODEL_SPEC names a model on an external server, its base URL goes with it (the
      // provider's lambdaEnvIssues requires the pair); the key's secret only goes to the functions
      // that call the model.
      ...(server && { [server.spec.baseUrl.env]: server.baseUrl }),
      ...(props.seekQuota?.requestsPerMinute !== undefined && { SEEK_QUOTA_REQUESTS_PER_MINUTE: String(props.seekQuota.requestsPerMinute) }),
      ...(props.seekQuota?.tokensPerMinute !== undefined && { SEEK_QUOTA_TOKENS_PER_MINUTE: String(props.seekQuota.tokensPerMinute) }),
    };
    const functions = {} as Record<HandlerName, ExtAgentsFunction>;
    for (const name of HANDLER_NAMES) {
      const fn = new ExtAgentsFunction(this, `${capitalize(name)}Function`, {
        handler: name,
        environment,
        logRetention,
        concurrency: name === 'seek' ? seekConcurrency : WORKFLOW_STATE_CONCURRENCY,
      });
      // Least privilege: Prepare reads the corpus (any key), writes runs/ and the chunk cache (the
      // run and the next ones over the same files read its chunks in place); it never uses the
      // table. The other handlers read and write their run's files under runs/ and the table, and
      // read the run's chunks in the chunk cache.
      if (name === 'prepare') {
        grantObjectRead(this.bucket, fn);
        grantObjectWrite(this.bucket, fn, 'cache/chunks/*');
      } else {
        this.table.grantReadWriteData(fn);
        grantObjectRead(this.bucket, fn, 'runs/*');
        grantObjectRead(this.bucket, fn, 'cache/chunks/*');
      }
      grantObjectWrite(this.bucket, fn, 'runs/*');
      functions[name] = fn;
    }
    this.functions = functions;

    // Least privilege per agent role: seeking agents run in Seek, the reasoning agent in Reason.
    if (traits.invokedModels) {
      grantInvokeModel(this, functions.seek, traits.invokedModels.seeker);
      grantInvokeModel(this, functions.reason, traits.invokedModels.reasoner);
      // Batch seeking (run option seekMode 'batch'): Bedrock model invocation jobs of the seeking
      // model, submitted and read by the Seek function (its BATCH_ROLE_ARN). Other specs have no
      // batch service here: their batch runs seek on demand and say so.
      this.seekBatch = new SeekBatchInference(this, 'SeekBatch', {
        bucket: this.bucket,
        seekFunction: functions.seek,
        seekerModelArns: bedrockResourceArns(this, traits.invokedModels.seeker),
      });
    }
    // A spec on a server outside AWS (openai:): no Bedrock grant, only the key's secret (if any).
    if (server) for (const fn of [functions.seek, functions.reason]) grantServerApiKey(fn, server);

    const workflow = new ExtAgentsWorkflow(this, 'Workflow', {
      bucket: this.bucket,
      functions,
      logRetention,
      logLevel: props.stateMachineLogLevel,
    });
    this.stateMachine = workflow.stateMachine;

    // The HTTP API (infra/api.ts, docs/API.md): API Gateway REST API, IAM (SigV4) on every route.
    const api = new ExtAgentsApi(this, 'Api', {
      bucket: this.bucket,
      table: this.table,
      stateMachine: this.stateMachine,
      logRetention,
      serviceName: SERVICE_NAME,
      modelSpec: modelSpecText,
      ...(props.seekQuota && { seekQuota: props.seekQuota }),
    });
    new CfnOutput(this, 'ApiUrl', { value: api.url, description: 'ExtAgents API base URL (docs/API.md); requests need SigV4 (execute-api)' });

    // Upload triggers (docs/UPLOADS.md) and the operations baseline: alarms, reviewed nag findings.
    this.triggers = new UploadTriggers(this, 'Uploads', {
      bucket: this.bucket,
      stateMachine: this.stateMachine,
      environment: { POWERTOOLS_SERVICE_NAME: SERVICE_NAME, NODE_OPTIONS: '--enable-source-maps' },
      logRetention,
      ingestChunkTokens: props.ingestChunkTokens,
      jobConcurrency: props.jobConcurrency,
      logLevel: props.stateMachineLogLevel,
      // Job files are work nobody waits for: their questions seek as batch jobs where the stack has
      // batch inference (a bedrock: model), unless the job's options say otherwise.
      ...(this.seekBatch && { jobSeekMode: 'batch' as const }),
    });
    // Surveys (infra/survey.ts, docs/SURVEY.md): the survey and bulk state machines, the schedule.
    this.surveys = new SurveyWorkflows(this, 'Surveys', {
      bucket: this.bucket,
      table: this.table,
      seekFunction: functions.seek,
      environment,
      commonEnvironment: { POWERTOOLS_SERVICE_NAME: SERVICE_NAME, NODE_OPTIONS: '--enable-source-maps' },
      grantReasonerModel: (grantee) => {
        if (traits.invokedModels) grantInvokeModel(this, grantee, traits.invokedModels.reasoner);
        if (server) {
          // The key's secret name travels in the environment, so the grantee must be a function.
          if (!(grantee instanceof lambda.Function))
            throw new ConfigurationError(`A model spec on ${server.spec.what} needs the survey reasoner grantee to be a Lambda function`);
          grantServerApiKey(grantee, server);
        }
      },
      logRetention,
      logLevel: props.stateMachineLogLevel,
      surveyConcurrency: props.surveyConcurrency,
      scheduleCron: props.surveyScheduleCron ?? stringContextOf(this, 'surveyScheduleCron'),
    });
    this.alarms = new OperationsAlarms(this, 'Alarms', {
      stateMachines: {
        Workflow: this.stateMachine,
        Jobs: this.triggers.jobsStateMachine,
        Survey: this.surveys.surveyStateMachine,
        BulkSurveys: this.surveys.bulkStateMachine,
      },
      functions: {
        ...Object.fromEntries(HANDLER_NAMES.map((name) => [capitalize(name), functions[name]])),
        Ingest: this.triggers.ingestFunction,
        PlanJob: this.triggers.planJobFunction,
        WriteResults: this.triggers.writeResultsFunction,
        Api: api.handler,
        SurveyPrepare: this.surveys.prepareFunction,
        SurveySteps: this.surveys.stepsFunction,
        SurveyAssemble: this.surveys.assembleFunction,
        PlanSurveys: this.surveys.planSurveysFunction,
        WriteSurveyIndex: this.surveys.writeIndexFunction,
      },
      deadLetterQueues: { IngestDeadLetterQueue: this.triggers.ingestDeadLetterQueue },
      ...(this.seekBatch && {
        eventQueues: {
          SeekBatchFailedJobs: {
            queue: this.seekBatch.failedJobs,
            description:
              'A Bedrock batch job of the seeking agents failed, stopped or expired (its event waits in the queue: read, then purge it); the run sought those chunks on demand.',
          },
        },
      }),
      topic: props.alarmTopic,
      alarmEmail: props.alarmEmail,
    });
    this.dashboard = new OperationsDashboard(this, 'Dashboard', {
      stateMachine: this.stateMachine,
      alarms: Object.values(this.alarms.alarms),
      serviceName: SERVICE_NAME,
    });
    acknowledgeStackFindings(this);

    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName, description: 'Project bucket (corpora/, runs/)' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'Run table (messages, KAR steps)' });
    new CfnOutput(this, 'StateMachineArn', {
      value: this.stateMachine.stateMachineArn,
      description: 'ExtAgents workflow (StartExecution input: {runId, question, corpus, options?})',
    });
  }
}

/**
 * Every invalid setting of the stack (none: empty), each one line: the model spec (and an `openai:`
 * spec's deployment settings), `retentionDays`, `seekReservedConcurrency`, and the settings of the
 * upload triggers and the surveys (their constructs' own checks).
 */
function stackSettingProblems(stack: Stack, modelSpecText: string, props: ExtAgentsStackProps): string[] {
  const problems: string[] = [];
  const attempt = (check: () => void): void => {
    try {
      check();
    } catch (error) {
      if (!(error instanceof ConfigurationError || error instanceof InvalidInputError)) throw error;
      problems.push(error.message);
    }
  };
  attempt(() => {
    const traits = modelTraits(modelSpecText);
    if (traits.cloudRefusal !== undefined) throw new ConfigurationError(`Model spec "${modelSpecText}": ${traits.cloudRefusal}`);
    if (traits.externalServer) serverSettings(stack, modelSpecText, props, traits.externalServer);
  });
  const retentionDays = props.retentionDays ?? 30;
  if (!Number.isInteger(retentionDays) || retentionDays < 1) problems.push(`retentionDays must be a positive integer, got ${retentionDays}`);
  const seekReserved = props.seekReservedConcurrency ?? DEFAULT_SEEK_RESERVED_CONCURRENCY;
  if (!Number.isInteger(seekReserved) || seekReserved < 0)
    problems.push(`seekReservedConcurrency must be a non-negative integer (0: no reservation), got ${seekReserved}`);
  for (const [key, value] of [
    ['quotaRequestsPerMinute', props.seekQuota?.requestsPerMinute],
    ['quotaTokensPerMinute', props.seekQuota?.tokensPerMinute],
  ] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) problems.push(`${key} must be a positive integer (per minute), got ${value}`);
  }
  problems.push(...uploadTriggerSettingProblems(props));
  problems.push(
    ...surveySettingProblems({
      surveyConcurrency: props.surveyConcurrency,
      scheduleCron: props.surveyScheduleCron ?? stringContextOf(stack, 'surveyScheduleCron'),
    }),
  );
  return problems;
}

/**
 * Bedrock resources one model id needs for `bedrock:InvokeModel` (which also authorises the
 * Converse API):
 * - a cross-region inference profile id (`us.meta.llama3-1-8b-instruct-v1:0`): the profile in the
 *   stack's region and account, and the foundation model in every region the profile may route to
 *   (`arn:<partition>:bedrock:*::foundation-model/meta.llama3-1-8b-instruct-v1:0`);
 * - a foundation-model id: that model in the stack's region.
 * Source: https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-prereq.html
 */
export function bedrockResourceArns(stack: Stack, modelId: string): string[] {
  if (isInferenceProfileId(modelId)) {
    return [
      stack.formatArn({ service: 'bedrock', resource: 'inference-profile', resourceName: modelId }),
      stack.formatArn({
        service: 'bedrock',
        region: '*',
        account: '',
        resource: 'foundation-model',
        resourceName: foundationModelIdOf(modelId),
      }),
    ];
  }
  return [stack.formatArn({ service: 'bedrock', account: '', resource: 'foundation-model', resourceName: modelId })];
}

/**
 * Grant `bedrock:InvokeModel` on one model id (see {@link bedrockResourceArns}). aws-cdk-lib has no
 * grant method for Bedrock models, so this goes through `iam.Grant.addToPrincipal`, the mechanism
 * the grant* methods use.
 */
function grantInvokeModel(stack: Stack, grantee: iam.IGrantable, modelId: string): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['bedrock:InvokeModel'],
    resourceArns: bedrockResourceArns(stack, modelId),
  });
}

/** The deployment of a spec on an external server (`ModelTraits.externalServer`): validated base URL and the imported key secret, if any. */
interface ServerDeployment {
  readonly spec: ExternalServer;
  readonly baseUrl: string;
  readonly apiKeySecret?: secretsmanager.ISecret;
}

/**
 * Validate the deployment settings of a spec on an external server (the stack prop, else the CDK
 * context, of each key its traits name: `openaiBaseUrl`, `openaiApiKeySecretName` for `openai:`) and
 * import the key's secret by name.
 * @throws ConfigurationError when the base URL is missing or not https://, or the secret name is an ARN.
 */
function serverDeploymentOf(stack: Stack, modelSpecText: string, props: ExtAgentsStackProps, server: ExternalServer): ServerDeployment {
  const { baseUrl, secretName } = serverSettings(stack, modelSpecText, props, server);
  if (secretName === undefined) return { spec: server, baseUrl };
  return { spec: server, baseUrl, apiKeySecret: secretsmanager.Secret.fromSecretNameV2(stack, 'OpenAiApiKeySecret', secretName) };
}

/** A setting of the stack: the prop of that name (typed ones: `openaiBaseUrl`, …), else the CDK context value. */
function settingOf(stack: Stack, props: ExtAgentsStackProps, key: string): string | undefined {
  const prop = (props as Record<string, unknown>)[key];
  return (typeof prop === 'string' ? prop : stringContextOf(stack, key))?.trim();
}

/**
 * The validated deployment settings of a spec on an external server (props, else CDK context): the
 * https base URL and the key secret's name, if any.
 * @throws ConfigurationError when the base URL is missing or not https://, or the secret name is an ARN.
 */
function serverSettings(stack: Stack, modelSpecText: string, props: ExtAgentsStackProps, server: ExternalServer): { baseUrl: string; secretName?: string } {
  const { baseUrl: urlKey, apiKeySecret: secretKey } = server;
  const baseUrl = settingOf(stack, props, urlKey.context);
  if (baseUrl === undefined || baseUrl === '') {
    throw new ConfigurationError(
      `Model spec "${modelSpecText}" needs ${server.what}'s API root: cdk deploy -c model=${modelSpecText} -c ${urlKey.context}=${urlKey.example} [-c ${secretKey.context}=<secret>]`,
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'https:') {
    // Lambdas outside a VPC reach the server over the internet, with the prompts (corpus text) and the
    // key in every request: plain http would expose both. A private server needs a TLS endpoint too.
    throw new ConfigurationError(
      `CDK context ${urlKey.context} must be an https:// URL (the deployed functions send corpus text and the API key in every request), got "${baseUrl}"; put a private server behind a TLS endpoint`,
    );
  }
  const secretName = settingOf(stack, props, secretKey.context);
  if (secretName === undefined || secretName === '') return { baseUrl };
  if (secretName.startsWith('arn:')) {
    throw new ConfigurationError(
      `CDK context ${secretKey.context} must be the secret's name (in the stack's account and region), not an ARN: got "${secretName}"`,
    );
  }
  return { baseUrl, secretName };
}

/**
 * Let one model-calling function read the key's secret (GetSecretValue on that secret only, through
 * the CDK grant) and name it in the server's variable (OPENAI_API_KEY_SECRET); nothing when the
 * server needs no key.
 */
function grantServerApiKey(fn: lambda.Function, server: ServerDeployment): void {
  if (server.apiKeySecret === undefined) return;
  server.apiKeySecret.grantRead(fn);
  fn.addEnvironment(server.spec.apiKeySecret.env, server.apiKeySecret.secretName);
}

/** Options of {@link buildStack}. */
export interface BuildStackOptions extends ExtAgentsStackProps {
  /** Construct id of the stack (also its CloudFormation stack name by default). @default "ExtAgents" */
  readonly id?: string;
}

/**
 * Add the ExtAgents stack to an app.
 * @param app the CDK app (for a fast in-process synth, create it with {@link createSynthesisApp}).
 * @param options stack id and properties; `modelSpec` defaults to {@link DEFAULT_MODEL_SPEC}.
 * @returns the stack (read its `stateMachine`, `table`, `bucket`, `functions`).
 * @throws ConfigurationError when the model spec is invalid.
 */
export function buildStack(app: App, options: BuildStackOptions = {}): ExtAgentsStack {
  const { id = 'ExtAgents', ...props } = options;
  return new ExtAgentsStack(app, id, props);
}

/**
 * App properties for an in-process synth that needs the template but not deployable assets (the
 * infrastructure tests and the local run):
 * - `aws:cdk:bundling-stacks: []` skips asset bundling (no esbuild run; assets are placeholders);
 * - `builtinCloudFormationValidation: false` skips the CloudFormation template validation plugin
 *   (seconds on the first synth of a process; the same as `CDK_VALIDATION=false`);
 * - no construct tree file, no stack traces in metadata.
 * Source: https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.AppProps.html
 */
export const SYNTHESIS_APP_PROPS: Readonly<AppProps> = {
  context: { 'aws:cdk:bundling-stacks': [] },
  builtinCloudFormationValidation: false,
  treeMetadata: false,
  stackTraces: false,
  analyticsReporting: false,
};

/**
 * A new App for a fast in-process synth (see {@link SYNTHESIS_APP_PROPS}).
 * @param outdir where the cloud assembly goes; @default a fresh temporary directory (CDK's default).
 */
export function createSynthesisApp(outdir?: string): App {
  return new App({ ...SYNTHESIS_APP_PROPS, ...(outdir !== undefined && { outdir }) });
}

/**
 * A string CDK context value (`cdk deploy -c key=value` or cdk.json), undefined when unset or empty.
 * @throws ConfigurationError when it is set to a non-string.
 */
function stringContextOf(scope: Construct, key: string): string | undefined {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new ConfigurationError(`CDK context "${key}" must be a string, got ${JSON.stringify(value)}`);
  return value;
}

function capitalize(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
