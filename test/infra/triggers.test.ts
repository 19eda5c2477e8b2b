/**
 * CDK assertion tests of the upload triggers (infra/ingest.ts) and the operations baseline of the
 * stack: EventBridge rules, the jobs state machine, alarms, grants, retention, access logs.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { StateMachine as LocalStateMachine } from 'aws-local-stepfunctions';
import { buildStack, createSynthesisApp, NONCURRENT_VERSION_DAYS, type BuildStackOptions } from '../../infra/extagents-stack';
import { ConfigurationError } from '../../shared/errors';
import { EXECUTION_ALREADY_EXISTS, JOB_STATE_NAMES } from '../../infra/ingest';
import { ACCOUNT, REGION, resolveIntrinsics, type Json, type JsonObject, idStartingWith, resourceOf, statementsOfRole, roleOf, allows } from '../support/cdk';

interface AslState {
  Type: string;
  Next?: string;
  End?: boolean;
  Resource?: string;
  Parameters?: JsonObject;
  ResultSelector?: JsonObject;
  ResultPath?: string | null;
  Retry?: Array<{ ErrorEquals: string[] }>;
  Catch?: Array<{ ErrorEquals: string[]; Next: string }>;
  ItemReader?: JsonObject;
  ItemSelector?: JsonObject;
  ItemProcessor?: { ProcessorConfig: JsonObject; StartAt: string; States: Record<string, AslState> };
  MaxConcurrency?: number;
  Result?: Json;
}

function synth(options: BuildStackOptions = {}): Template {
  return Template.fromStack(buildStack(createSynthesisApp(), { env: { account: ACCOUNT, region: REGION }, ...options }));
}

describe('the upload triggers', () => {
  let template: Template;
  let bucketId: string;

  beforeAll(() => {
    template = synth();
    bucketId = idStartingWith(template, 'AWS::S3::Bucket', /^Bucket[0-9A-F]{8}$/);
  });

  it('sends the project bucket events to EventBridge without a notifications custom resource', () => {
    // Assert
    expect(resourceOf(template, bucketId).Properties.NotificationConfiguration).toEqual({ EventBridgeConfiguration: { EventBridgeEnabled: true } });
    expect(Object.keys(template.findResources('Custom::S3BucketNotifications'))).toEqual([]);
  });

  it('queues Object Created events of the bucket under corpora/ for the ingest function, in batches, with a dead-letter queue', () => {
    // Arrange
    const ruleId = idStartingWith(template, 'AWS::Events::Rule', 'UploadsIngestRule');
    const ingestId = idStartingWith(template, 'AWS::Lambda::Function', 'UploadsIngestFunction');
    const queueId = idStartingWith(template, 'AWS::SQS::Queue', 'UploadsIngestQueue');
    const dlqId = idStartingWith(template, 'AWS::SQS::Queue', 'UploadsIngestDeadLetterQueue');
    // Assert: the rule sends to the queue (its own delivery failures to the dead-letter queue)
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.s3'],
        'detail-type': ['Object Created'],
        detail: { bucket: { name: [{ Ref: bucketId }] }, object: { key: [{ prefix: 'corpora/' }] } },
      },
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [queueId, 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
        }),
      ],
    });
    expect(resourceOf(template, ruleId).Properties.State).toBe('ENABLED');
    // the queue: visibility six times the function's 15 minutes, three receives, then the dead-letter queue
    expect(resourceOf(template, queueId).Properties).toMatchObject({
      VisibilityTimeout: 5400,
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 3 },
    });
    expect(resourceOf(template, dlqId).Properties).toMatchObject({ MessageRetentionPeriod: 1_209_600, SqsManagedSseEnabled: true });
    // the function reads the queue in batches gathered for up to 5 minutes, reporting failures per message
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      FunctionName: { Ref: ingestId },
      BatchSize: 1000,
      MaximumBatchingWindowInSeconds: 300,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    // only EventBridge (this rule) may send to the queue, over TLS
    const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy')).map((p) => JSON.stringify(p.Properties));
    const queuePolicy = policies.find((p) => p.includes(queueId) && p.includes('events.amazonaws.com'));
    expect(queuePolicy).toBeDefined();
    expect(queuePolicy).toContain(ruleId);
    expect(policies.some((p) => p.includes(queueId) && p.includes('aws:SecureTransport'))).toBe(true);
  });

  it('routes Object Created events of the bucket for jobs/*.json to the jobs state machine', () => {
    // Arrange
    const jobsId = idStartingWith(template, 'AWS::StepFunctions::StateMachine', 'UploadsJobsStateMachine');
    // Assert
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.s3'],
        'detail-type': ['Object Created'],
        detail: { bucket: { name: [{ Ref: bucketId }] }, object: { key: [{ wildcard: 'jobs/*.json' }] } },
      },
      Targets: [Match.objectLike({ Arn: { Ref: jobsId }, RoleArn: Match.anyValue() })],
    });
  });

  it('gives the ingest function its chunk size and only the bucket prefixes it reads and writes', () => {
    // Arrange
    const ingestId = idStartingWith(template, 'AWS::Lambda::Function', 'UploadsIngestFunction');
    const statements = statementsOfRole(template, roleOf(template, ingestId, 'Role'));
    const bucketArn = `\${${bucketId}.Arn}`;
    // Assert
    expect(resourceOf(template, ingestId).Properties).toMatchObject({
      MemorySize: 2048,
      Timeout: 900,
      Environment: { Variables: { BUCKET_NAME: { Ref: bucketId }, INGEST_CHUNK_TOKENS: '8000' } },
    });
    expect(allows(statements, 's3:GetObject', `${bucketArn}/corpora/*`)).toBe(true);
    expect(allows(statements, 's3:GetObject', `${bucketArn}/cache/*`)).toBe(true);
    expect(allows(statements, 's3:PutObject', `${bucketArn}/cache/*`)).toBe(true);
    expect(allows(statements, 's3:PutObject', `${bucketArn}/corpora/*`)).toBe(false);
    expect(statements.flatMap((s) => [s.Action].flat()).some((a) => String(a).startsWith('dynamodb:'))).toBe(false);
  });

  it('takes the ingestion chunk size and the job concurrency from the stack properties', () => {
    // Arrange
    const custom = synth({ ingestChunkTokens: 2000, jobConcurrency: 2 });
    // Assert
    custom.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ INGEST_CHUNK_TOKENS: '2000' }) } });
    const jobsId = idStartingWith(custom, 'AWS::StepFunctions::StateMachine', 'UploadsJobsStateMachine');
    const asl = JSON.parse(resolveIntrinsics(resourceOf(custom, jobsId).Properties.DefinitionString) as string) as { States: Record<string, AslState> };
    expect(asl.States.RunQuestions.MaxConcurrency).toBe(2);
  });
});

describe('the jobs state machine', () => {
  let template: Template;
  let asl: { StartAt: string; States: Record<string, AslState> };
  let jobsId: string;
  let workflowId: string;

  beforeAll(() => {
    template = synth();
    jobsId = idStartingWith(template, 'AWS::StepFunctions::StateMachine', 'UploadsJobsStateMachine');
    workflowId = idStartingWith(template, 'AWS::StepFunctions::StateMachine', 'WorkflowStateMachine');
    asl = JSON.parse(resolveIntrinsics(resourceOf(template, jobsId).Properties.DefinitionString) as string);
  });

  it('plans the job, runs the questions in a Distributed Map, then writes the results', () => {
    // Assert
    expect(asl.StartAt).toBe('PlanJob');
    expect(asl.States.PlanJob).toMatchObject({
      Type: 'Task',
      Resource: `\${${idStartingWith(template, 'AWS::Lambda::Function', 'UploadsPlanJobFunction')}.Arn}`,
      Next: 'RunQuestions',
    });
    expect(asl.States.RunQuestions).toMatchObject({ Type: 'Map', Next: 'WriteResults', ResultPath: null });
    expect(asl.States.WriteResults).toMatchObject({
      Type: 'Task',
      Resource: `\${${idStartingWith(template, 'AWS::Lambda::Function', 'UploadsWriteResultsFunction')}.Arn}`,
      End: true,
    });
    expect(Object.keys(asl.States).sort()).toEqual(['JobRejected', 'PlanJob', 'RunQuestions', 'WriteResults']);
  });

  it('rejects an invalid job at JobRejected with the error and cause of PlanJob', () => {
    expect(asl.States.PlanJob.Catch).toEqual([{ ErrorEquals: ['InvalidInputError', 'ConfigurationError', 'NotFoundError'], Next: 'JobRejected' }]);
    expect(asl.States.JobRejected).toMatchObject({ Type: 'Fail', ErrorPath: '$.Error', CausePath: '$.Cause' });
  });

  it('reads the planned items from the bucket and runs at most MaxConcurrency questions at once', () => {
    // Arrange
    const map = asl.States.RunQuestions;
    // Assert
    expect(map.ItemProcessor?.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    expect(map.ItemReader).toEqual({
      Resource: 'arn:aws:states:::s3:getObject',
      ReaderConfig: { InputType: 'JSON' },
      Parameters: { Bucket: `\${${idStartingWith(template, 'AWS::S3::Bucket', /^Bucket[0-9A-F]{8}$/)}}`, 'Key.$': '$.itemsKey' },
    });
    expect(map.ItemSelector).toEqual({ 'executionName.$': '$$.Map.Item.Value.executionName', 'input.$': '$$.Map.Item.Value.input' });
    expect(map.MaxConcurrency).toBe(4);
  });

  it('runs each question as a named .sync execution of the question-answering workflow', () => {
    // Arrange
    const run = asl.States.RunQuestions.ItemProcessor?.States[JOB_STATE_NAMES.RunQuestion] as AslState;
    // Assert
    expect(run).toMatchObject({
      Type: 'Task',
      Resource: 'arn:aws:states:::states:startExecution.sync:2',
      Parameters: { StateMachineArn: `\${${workflowId}}`, 'Name.$': '$.executionName', 'Input.$': '$.input' },
      ResultSelector: { 'status.$': '$.Status' },
      End: true,
    });
    expect(run.Parameters).not.toHaveProperty('Input.AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$');
  });

  it('catches each question: an existing execution is already started, any other error fails only that question', () => {
    // Arrange
    const states = asl.States.RunQuestions.ItemProcessor?.States ?? {};
    // Assert
    expect(states.RunQuestion.Catch).toEqual([
      { ErrorEquals: [EXECUTION_ALREADY_EXISTS], Next: 'AlreadyStarted' },
      { ErrorEquals: ['States.ALL'], Next: 'QuestionFailed' },
    ]);
    expect(states.RunQuestion.Retry?.flatMap((r) => r.ErrorEquals)).toEqual(['StepFunctions.ExecutionLimitExceeded']);
    expect(states.AlreadyStarted).toMatchObject({ Type: 'Pass', End: true, Result: { status: 'ALREADY_STARTED' } });
    expect(states.QuestionFailed).toMatchObject({ Type: 'Pass', End: true, Result: { status: 'FAILED' } });
  });

  it('may start, watch and stop executions of the workflow, and read the items', () => {
    // Arrange
    const statements = statementsOfRole(template, roleOf(template, jobsId, 'RoleArn'));
    // Assert
    expect(allows(statements, 'states:StartExecution', `\${${workflowId}}`)).toBe(true);
    expect(statements.some((s) => [s.Action].flat().includes('states:DescribeExecution'))).toBe(true);
    expect(statements.some((s) => [s.Action].flat().includes('events:PutRule'))).toBe(true);
    expect(statements.some((s) => [s.Action].flat().includes('s3:GetObject'))).toBe(true);
  });

  it('lets the results function look up executions of the workflow and write results/ only', () => {
    // Arrange
    const fnId = idStartingWith(template, 'AWS::Lambda::Function', 'UploadsWriteResultsFunction');
    const statements = statementsOfRole(template, roleOf(template, fnId, 'Role'));
    const bucketArn = `\${${idStartingWith(template, 'AWS::S3::Bucket', /^Bucket[0-9A-F]{8}$/)}.Arn}`;
    // Assert
    expect(resourceOf(template, fnId).Properties).toMatchObject({
      Handler: 'index.resultsHandler',
      Environment: { Variables: { STATE_MACHINE_ARN: { Ref: workflowId } } },
    });
    expect(statements.some((s) => [s.Action].flat().includes('states:DescribeExecution'))).toBe(true);
    expect(allows(statements, 's3:PutObject', `${bucketArn}/results/*`)).toBe(true);
    expect(allows(statements, 's3:PutObject', `${bucketArn}/runs/*`)).toBe(false);
  });

  it('plans job questions as batch seeking (JOB_SEEK_MODE) only where the stack has batch inference (a bedrock: model)', () => {
    const planEnv = (t: Template) =>
      (
        resourceOf(t, idStartingWith(t, 'AWS::Lambda::Function', 'UploadsPlanJobFunction')).Properties as {
          Environment: { Variables: Record<string, unknown> };
        }
      ).Environment.Variables;
    expect(planEnv(synth({ modelSpec: 'bedrock:us.meta.llama3-1-8b-instruct-v1:0' })).JOB_SEEK_MODE).toBe('batch');
    expect(planEnv(synth({ modelSpec: 'extractive' }))).not.toHaveProperty('JOB_SEEK_MODE');
  });

  it('logs errors without execution data and traces with X-Ray', () => {
    expect(resourceOf(template, jobsId).Properties).toMatchObject({
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ERROR', IncludeExecutionData: false },
    });
  });

  it('is a definition aws-local-stepfunctions accepts', () => {
    expect(() => new LocalStateMachine(asl as never)).not.toThrow();
  });
});

describe('the operations baseline', () => {
  let template: Template;

  beforeAll(() => {
    template = synth();
  });

  it('alarms on failed and throttled executions of every state machine, on throttles of every function, on a dead-lettered ingest event and on a failed batch job', () => {
    // Arrange
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties as JsonObject);
    const byMetric = (namespace: string, metric: string) => alarms.filter((a) => a.Namespace === namespace && a.MetricName === metric);
    const functions = Object.keys(template.findResources('AWS::Lambda::Function'));
    // The QA workflow, jobs, survey and bulk survey state machines.
    const machines = Object.keys(template.findResources('AWS::StepFunctions::StateMachine'));
    // Assert
    expect(machines).toHaveLength(4);
    expect(byMetric('AWS/States', 'ExecutionsFailed')).toHaveLength(machines.length);
    expect(byMetric('AWS/States', 'ExecutionThrottled')).toHaveLength(machines.length);
    expect(byMetric('AWS/Lambda', 'Throttles')).toHaveLength(functions.length);
    const dlqId = idStartingWith(template, 'AWS::SQS::Queue', 'UploadsIngestDeadLetterQueue');
    // The failed Bedrock batch jobs' events (the default spec is a bedrock: one; infra/batch-inference.ts).
    const failedJobsId = idStartingWith(template, 'AWS::SQS::Queue', 'SeekBatchFailedJobsQueue');
    expect(byMetric('AWS/SQS', 'ApproximateNumberOfMessagesVisible')).toEqual([
      expect.objectContaining({ Statistic: 'Maximum', Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }] }),
      expect.objectContaining({ Statistic: 'Maximum', Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [failedJobsId, 'QueueName'] } }] }),
    ]);
    for (const alarm of alarms) {
      expect(alarm).toMatchObject({
        Threshold: 1,
        EvaluationPeriods: 1,
        Period: 300,
        Statistic: alarm.Namespace === 'AWS/SQS' ? 'Maximum' : 'Sum',
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
    }
    expect(Object.keys(template.findResources('AWS::SNS::Topic'))).toEqual([]);
  });

  it('notifies an SNS topic with an e-mail subscription when an alarm e-mail is given', () => {
    // Arrange
    const withTopic = synth({ alarmEmail: 'ops@example.com' });
    const topicId = idStartingWith(withTopic, 'AWS::SNS::Topic', 'AlarmsTopic');
    // Assert
    withTopic.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId } });
    for (const alarm of Object.values(withTopic.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
    }
    withTopic.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('expires run data after the retention: the handlers TTL and the runs/ objects', () => {
    // Arrange
    const custom = synth({ retentionDays: 7 });
    const bucketId = idStartingWith(custom, 'AWS::S3::Bucket', /^Bucket[0-9A-F]{8}$/);
    // Assert
    expect(resourceOf(custom, bucketId).Properties.LifecycleConfiguration).toEqual({
      Rules: [
        { Id: 'ExpireRunData', Prefix: 'runs/', ExpirationInDays: 7, Status: 'Enabled' },
        // Versioned bucket: an overwritten or deleted object keeps its previous version 30 days.
        {
          Id: 'ExpireNoncurrentVersions',
          NoncurrentVersionExpiration: { NoncurrentDays: NONCURRENT_VERSION_DAYS },
          ExpiredObjectDeleteMarker: true,
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 },
          Status: 'Enabled',
        },
      ],
    });
    expect(resourceOf(custom, bucketId).Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    const seekId = idStartingWith(custom, 'AWS::Lambda::Function', 'SeekFunction');
    expect(resourceOf(custom, seekId).Properties).toMatchObject({ Environment: { Variables: { RUN_RETENTION_DAYS: '7' } } });
    expect(() => synth({ retentionDays: 0 })).toThrow('retentionDays must be a positive integer');
  });

  it('logs the project bucket accesses to a private, encrypted, TLS-only log bucket under a bucket policy', () => {
    // Arrange
    const bucketId = idStartingWith(template, 'AWS::S3::Bucket', /^Bucket[0-9A-F]{8}$/);
    const logsId = idStartingWith(template, 'AWS::S3::Bucket', 'AccessLogsBucket');
    // Assert
    expect(resourceOf(template, bucketId).Properties.LoggingConfiguration).toEqual({
      DestinationBucketName: { Ref: logsId },
      LogFilePrefix: 'project-bucket/',
    });
    expect(resourceOf(template, logsId).Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logsId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Allow', Principal: { Service: 'logging.s3.amazonaws.com' }, Action: 's3:PutObject' }),
        ]),
      },
    });
  });

  it('gives every function its own role without AWS managed policies, writing only to its log group', () => {
    // Arrange
    const functions = template.findResources('AWS::Lambda::Function');
    // Assert
    expect(Object.keys(functions).length).toBeGreaterThanOrEqual(8);
    for (const fn of Object.values(functions)) {
      const roleId = (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
      expect(resourceOf(template, roleId).Properties.ManagedPolicyArns).toBeUndefined();
      const logGroupArn = `\${${(fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref}.Arn}`;
      const logStatements = statementsOfRole(template, roleId).filter((s) => [s.Action].flat().some((a) => String(a).startsWith('logs:')));
      expect(logStatements).toEqual([expect.objectContaining({ Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: logGroupArn })]);
    }
  });
});

describe('invalid stack settings', () => {
  it('are reported all at once, one line each, as CDK validation does, not only the first', () => {
    const build = () =>
      buildStack(createSynthesisApp(), {
        retentionDays: 0,
        seekReservedConcurrency: -1,
        ingestChunkTokens: 5,
        jobConcurrency: 0,
        surveyConcurrency: 500,
        surveyScheduleCron: 'daily',
      });

    expect(build).toThrow(ConfigurationError);
    const message = (() => {
      try {
        build();
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message.split('\n')).toEqual([
      '6 invalid settings:',
      '- retentionDays must be a positive integer, got 0',
      '- seekReservedConcurrency must be a non-negative integer (0: no reservation), got -1',
      '- ingestChunkTokens must be an integer from 64 to 200000, got 5',
      '- jobConcurrency must be an integer from 1 to 1000, got 0',
      '- surveyConcurrency must be an integer from 1 to 100, got 500',
      expect.stringMatching(/^- surveyScheduleCron must be an EventBridge Scheduler cron expression of six fields/),
    ]);
  });

  it('keeps one invalid setting a single line', () => {
    expect(() => buildStack(createSynthesisApp(), { retentionDays: 0 })).toThrow(/^retentionDays must be a positive integer, got 0$/);
  });
});
