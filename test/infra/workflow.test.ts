/**
 * CDK assertion tests of the ExtAgents stack and workflow. Synthesized in-process with asset
 * bundling and template validation skipped (createSynthesisApp), as the local run does.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { StateMachine as LocalStateMachine } from 'aws-local-stepfunctions';
import { ConfigurationError, RETRYABLE_ERRORS } from '../../shared/errors';
import { buildStack, createSynthesisApp, type BuildStackOptions } from '../../infra/extagents-stack';
import { STATE_NAMES } from '../../infra/extagents-workflow';
import { WorkflowStateSchema } from '../../shared/pipeline/state';
import { ACCOUNT, REGION, idStartingWith, resolveIntrinsics, type Json, type JsonObject } from '../support/cdk';

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

interface AslState {
  Type: string;
  Next?: string;
  End?: boolean;
  Resource?: string;
  Parameters?: JsonObject;
  ResultPath?: string | null;
  Retry?: Array<{
    ErrorEquals: string[];
    IntervalSeconds?: number;
    MaxAttempts?: number;
    BackoffRate?: number;
    MaxDelaySeconds?: number;
    JitterStrategy?: string;
  }>;
  Catch?: Array<{ ErrorEquals: string[]; Next: string; ResultPath?: string | null }>;
  Choices?: JsonObject[];
  Default?: string;
  ErrorPath?: string;
  CausePath?: string;
  ItemReader?: JsonObject;
  ItemSelector?: JsonObject;
  ItemProcessor?: { ProcessorConfig: JsonObject; StartAt: string; States: Record<string, AslState> };
  MaxConcurrencyPath?: string;
  ToleratedFailurePercentagePath?: string;
  ResultWriter?: JsonObject;
  Branches?: AslDefinition[];
  ResultSelector?: JsonObject;
  OutputPath?: string;
  Error?: string;
}

interface AslDefinition {
  StartAt: string;
  States: Record<string, AslState>;
}

/** Every state at any depth (Parallel branches, Map item processors), by name. */
function allStates(definition: AslDefinition): Record<string, AslState> {
  const out: Record<string, AslState> = {};
  for (const [name, state] of Object.entries(definition.States)) {
    out[name] = state;
    for (const child of [...(state.Branches ?? []), ...(state.ItemProcessor ? [state.ItemProcessor] : [])]) Object.assign(out, allStates(child));
  }
  return out;
}

/**
 * Resolve the intrinsics CDK puts in templates into plain strings: pseudo parameters to the test
 * account/region/partition, `Ref` of a resource to `${LogicalId}`, `Fn::GetAtt` to
 * `${LogicalId.Attr}`, `Fn::Join` to the joined string.
 */

function synth(options: BuildStackOptions = {}): Template {
  const stack = buildStack(createSynthesisApp(), { env: { account: ACCOUNT, region: REGION }, ...options });
  return Template.fromStack(stack);
}

function functionLogicalId(template: Template, handler: string): string {
  const functions = template.findResources('AWS::Lambda::Function');
  const ids = Object.keys(functions).filter((id) => id.startsWith(`${handler}Function`));
  expect(ids).toHaveLength(1);
  return ids[0];
}

/** The question-answering state machine (the stack also holds the jobs state machine). */
function workflowMachine(template: Template): { id: string; Properties: { DefinitionString: Json; RoleArn: { 'Fn::GetAtt': string[] } } } {
  const machines = template.findResources('AWS::StepFunctions::StateMachine');
  const ids = Object.keys(machines).filter((id) => id.startsWith('WorkflowStateMachine'));
  expect(ids).toHaveLength(1);
  return { id: ids[0], ...machines[ids[0]] } as ReturnType<typeof workflowMachine>;
}

function renderDefinition(template: Template): AslDefinition {
  return JSON.parse(resolveIntrinsics(workflowMachine(template).Properties.DefinitionString) as string) as AslDefinition;
}

/** The project bucket (the stack also holds its access log bucket). */
function projectBucketId(template: Template): string {
  const ids = Object.keys(template.findResources('AWS::S3::Bucket')).filter((id) => /^Bucket[0-9A-F]{8}$/.test(id));
  expect(ids).toHaveLength(1);
  return ids[0];
}

/** The IAM policy statements attached to the role of a resource (a Lambda function or the state machine). */
function statementsOfRole(template: Template, roleLogicalId: string): JsonObject[] {
  const policies = template.findResources('AWS::IAM::Policy');
  return Object.values(policies)
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleLogicalId}"`))
    .flatMap((policy) => resolveIntrinsics(policy.Properties.PolicyDocument.Statement) as JsonObject[]);
}

function roleOfFunction(template: Template, handler: string): string {
  const fn = template.toJSON().Resources[functionLogicalId(template, handler)];
  return fn.Properties.Role['Fn::GetAtt'][0];
}

function bedrockResourcesOf(template: Template, handler: string): string[] {
  return statementsOfRole(template, roleOfFunction(template, handler))
    .filter((statement) => [statement.Action].flat().includes('bedrock:InvokeModel'))
    .flatMap((statement) => [statement.Resource].flat() as string[]);
}

// ---------------------------------------------------------------------------------------------
// The state machine graph
// ---------------------------------------------------------------------------------------------

describe('the workflow definition', () => {
  let template: Template;
  let asl: AslDefinition;
  let fnArn: (handler: string) => string;
  let bucketRef: string;

  beforeAll(() => {
    template = synth();
    asl = renderDefinition(template);
    fnArn = (handler) => `\${${functionLogicalId(template, handler)}.Arn}`;
    bucketRef = `\${${projectBucketId(template)}}`;
  });

  it('has exactly the states of the contract and starts at Prepare', () => {
    // Assert
    expect(asl.StartAt).toBe('Prepare');
    expect(Object.keys(asl.States).sort()).toEqual(
      [
        'Prepare',
        'PrepareFailed',
        'SeekChunks',
        'SeekingFailed',
        'Pipelined?',
        'Reason',
        'Answered?',
        'Synchronize',
        // reseek promising: a round with no chunk to seek is skipped
        'RoundToSeek?',
        // coverage that grows (run option coverage 'grow')
        'GrowCoverage',
        'AnswerBestEffort',
        'Finalize',
        // pipelined rounds (run option pipelineRounds)
        'PipelinedRound',
        'StoppedState',
        'SpeculativeRoundSought?',
        'KarState',
        'AdoptSpeculativeRound',
        // batch seeking (run option seekMode 'batch')
        'SeekMode?',
        'SubmitSeekBatch',
        'SeekBatchStatus?',
        'WaitForSeekBatch',
        'CheckSeekBatch',
        'SeekBatchRemainder',
        'SeekBatchComplete',
      ].sort(),
    );
    expect(Object.keys(asl.States.SeekChunks.ItemProcessor?.States ?? {})).toEqual(['Seek']);
  });

  it('runs Prepare on the execution input and fails the run on its input errors with their name and cause', () => {
    // Arrange
    const prepare = asl.States.Prepare;
    // Assert
    expect(prepare).toMatchObject({ Type: 'Task', Resource: fnArn('Prepare'), Next: 'SeekMode?' });
    expect(prepare.Parameters).toBeUndefined();
    expect(prepare.Catch).toEqual([
      {
        ErrorEquals: ['EmptyCorpusError', 'ConfigurationError', 'InvalidInputError', 'InvalidRunOptionsError', 'CostLimitExceededError', 'QuotaExceededError'],
        Next: 'PrepareFailed',
      },
    ]);
    expect(asl.States.PrepareFailed).toMatchObject({ Type: 'Fail', ErrorPath: '$.Error', CausePath: '$.Cause' });
  });

  it('reads the chunk manifest as an S3 JSON array with a Distributed Map', () => {
    // Arrange
    const seekChunks = asl.States.SeekChunks;
    // Assert
    expect(seekChunks.Type).toBe('Map');
    expect(seekChunks.ItemProcessor?.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    expect(seekChunks.ItemReader).toEqual({
      Resource: 'arn:aws:states:::s3:getObject',
      ReaderConfig: { InputType: 'JSON' },
      Parameters: { Bucket: bucketRef, 'Key.$': '$.manifestKey' },
    });
  });

  it('gives each seeking agent the run, the round, its chunk index and the coverage it is sought at', () => {
    expect(asl.States.SeekChunks.ItemSelector).toEqual({
      'runId.$': '$.runId',
      'round.$': '$.round',
      'chunk.$': '$$.Map.Item.Value.chunk',
      'covered.$': '$.covered',
    });
  });

  it('takes concurrency and tolerated failures from the run config', () => {
    expect(asl.States.SeekChunks.MaxConcurrencyPath).toBe('$.config.concurrency');
    expect(asl.States.SeekChunks.ToleratedFailurePercentagePath).toBe('$.config.toleratedFailurePercentage');
  });

  it('writes item results to the bucket under runs/ and keeps them out of the state', () => {
    // Arrange
    const seekChunks = asl.States.SeekChunks;
    // Assert
    expect(seekChunks.ResultWriter).toEqual({
      Resource: 'arn:aws:states:::s3:putObject',
      Parameters: { Bucket: bucketRef, 'Prefix.$': "States.Format('runs/{}/map', $.runId)" },
    });
    expect(seekChunks.ResultPath).toBeNull();
    expect(seekChunks.Next).toBe('Pipelined?');
  });

  it('fails the run at SeekingFailed when too many seeking agents fail, catching States.ALL last', () => {
    // Assert
    expect(asl.States.SeekChunks.Catch).toEqual([
      { ErrorEquals: ['States.ExceedToleratedFailureThreshold'], Next: 'SeekingFailed' },
      { ErrorEquals: ['States.ALL'], Next: 'SeekingFailed' },
    ]);
    expect(asl.States.SeekingFailed).toMatchObject({ Type: 'Fail', ErrorPath: '$.Error', CausePath: '$.Cause' });
  });

  it('retries transient model and Lambda errors of a seeking agent with bounded full-jitter backoff', () => {
    // Arrange
    const seek = asl.States.SeekChunks.ItemProcessor?.States.Seek as AslState;
    const retriedErrors = (seek.Retry ?? []).flatMap((retrier) => retrier.ErrorEquals);
    // Assert
    expect(seek).toMatchObject({ Type: 'Task', Resource: fnArn('Seek'), End: true });
    expect(seek.Parameters).toBeUndefined();
    expect(retriedErrors).toEqual(expect.arrayContaining([...RETRYABLE_ERRORS]));
    expect(retriedErrors).toEqual(expect.arrayContaining(['Lambda.ServiceException', 'Lambda.TooManyRequestsException']));
    expect(retriedErrors).not.toContain('States.ALL');
    for (const retrier of seek.Retry ?? []) {
      expect(retrier.JitterStrategy).toBe('FULL');
      expect(retrier.MaxAttempts).toBeGreaterThan(0);
      expect(retrier.MaxAttempts).toBeLessThanOrEqual(10);
      expect(retrier.MaxDelaySeconds).toBeGreaterThan(0);
    }
  });

  it('invokes the Reason function with one payload shape, force false for a KAR step and true for the best-effort answer', () => {
    // Assert
    expect(asl.States.Reason).toMatchObject({
      Type: 'Task',
      Resource: fnArn('Reason'),
      Parameters: { 'state.$': '$', force: false },
      Next: 'Answered?',
    });
    expect(asl.States.AnswerBestEffort).toMatchObject({
      Type: 'Task',
      Resource: fnArn('Reason'),
      Parameters: { 'state.$': '$', force: true },
      Next: 'Finalize',
    });
  });

  it('decides after each KAR step: answered or filtered, widen k, grow the coverage, synchronize, best effort, else refuse', () => {
    // Assert
    expect(asl.States['Answered?']).toEqual({
      Type: 'Choice',
      Comment: expect.any(String),
      Choices: [
        { Variable: '$.outcome', StringEquals: 'answered', Next: 'Finalize' },
        { Variable: '$.outcome', StringEquals: 'filtered', Next: 'Finalize' },
        { Variable: '$.exhausted', BooleanEquals: false, Next: 'Reason' },
        { Variable: '$.covered', NumericLessThanPath: '$.config.coverageCap', Next: 'GrowCoverage' },
        {
          And: [
            { Variable: '$.round', NumericLessThanPath: '$.config.rounds' },
            { Variable: '$.poolSize', NumericGreaterThan: 0 },
          ],
          Next: 'Synchronize',
        },
        { Variable: '$.config.bestEffort', BooleanEquals: true, Next: 'AnswerBestEffort' },
      ],
      Default: 'Finalize',
    });
  });

  it('starts the next round after global knowledge synchronization, unless Synchronize skipped it (reseek promising), and ends at Finalize', () => {
    // Assert
    expect(asl.States.Synchronize).toMatchObject({ Type: 'Task', Resource: fnArn('Synchronize'), Next: 'RoundToSeek?' });
    expect(asl.States.Synchronize.Parameters).toBeUndefined();
    expect(asl.States['RoundToSeek?']).toEqual({
      Type: 'Choice',
      Comment: expect.any(String),
      Choices: [{ Variable: '$.outcome', StringEquals: 'refused', Next: 'Answered?' }],
      Default: 'SeekMode?',
    });
    expect(asl.States.Finalize).toMatchObject({ Type: 'Task', Resource: fnArn('Finalize'), End: true });
    expect(asl.States.Finalize.Parameters).toBeUndefined();
  });

  it('grows the coverage with the Synchronize function and seeks the next tranche in the same round', () => {
    expect(asl.States.GrowCoverage).toMatchObject({ Type: 'Task', Resource: fnArn('Synchronize'), Parameters: { 'growCoverage.$': '$' }, Next: 'SeekMode?' });
  });

  it('runs plain KAR after seeking unless pipelineRounds is set, a next round exists and the coverage is final; a skipped round goes to Answered?', () => {
    expect(asl.States['Pipelined?']).toEqual({
      Type: 'Choice',
      Comment: expect.any(String),
      Choices: [
        { Variable: '$.outcome', StringEquals: 'refused', Next: 'Answered?' },
        {
          And: [
            { Variable: '$.config.pipelineRounds', BooleanEquals: true },
            { Variable: '$.round', NumericLessThanPath: '$.config.rounds' },
            { Variable: '$.covered', NumericGreaterThanEqualsPath: '$.config.coverageCap' },
          ],
          Next: 'PipelinedRound',
        },
      ],
      Default: 'Reason',
    });
  });

  it('pipelines a round: KAR of round r in one branch, Synchronize and speculative seeking of round r+1 in the other', () => {
    // Arrange
    const parallel = asl.States.PipelinedRound;
    const [kar, speculative] = parallel.Branches ?? [];
    // Assert: branch A, the KAR loop, ends the Parallel by failing with SpeculationStopped unless round r+1 is needed
    expect(parallel.Type).toBe('Parallel');
    expect(parallel.Branches).toHaveLength(2);
    expect(kar.StartAt).toBe('PipelinedReason');
    expect(kar.States.PipelinedReason).toMatchObject({
      Type: 'Task',
      Resource: fnArn('Reason'),
      Parameters: { 'state.$': '$', force: false },
      Next: 'PipelinedAnswered?',
    });
    expect((kar.States.PipelinedReason.Retry ?? []).flatMap((r) => r.ErrorEquals)).toEqual(expect.arrayContaining([...RETRYABLE_ERRORS]));
    expect(kar.States['PipelinedAnswered?']).toMatchObject({
      Choices: [
        {
          Or: [
            { Variable: '$.outcome', StringEquals: 'answered' },
            { Variable: '$.outcome', StringEquals: 'filtered' },
          ],
          Next: 'StopSpeculation',
        },
        { Variable: '$.exhausted', BooleanEquals: false, Next: 'PipelinedReason' },
        { Variable: '$.poolSize', NumericGreaterThan: 0, Next: 'KarRefused' },
      ],
      Default: 'StopSpeculation',
    });
    expect(kar.States.KarRefused.Type).toBe('Succeed');
    expect(kar.States.StopSpeculation).toMatchObject({ Type: 'Pass', Parameters: { 'cause.$': 'States.JsonToString($)' }, Next: 'SpeculationStopped' });
    expect(kar.States.SpeculationStopped).toMatchObject({ Type: 'Fail', Error: 'SpeculationStopped', CausePath: '$.cause' });
    // Branch B: round r+1, its Seek tasks marked speculative; a failure does not fail the run
    expect(speculative.StartAt).toBe('SpeculativeSynchronize');
    expect(speculative.States.SpeculativeSynchronize).toMatchObject({ Type: 'Task', Resource: fnArn('Synchronize'), Next: 'SpeculativeRoundToSeek?' });
    // A round with no chunk to seek (reseek promising) ends the branch without a Map over no items
    expect(speculative.States['SpeculativeRoundToSeek?']).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.outcome', StringEquals: 'refused', Next: 'SpeculativeRoundSkipped' }],
      Default: 'SpeculativeSeekChunks',
    });
    expect(speculative.States.SpeculativeRoundSkipped.Type).toBe('Succeed');
    const map = speculative.States.SpeculativeSeekChunks;
    expect(map.ItemSelector).toEqual({ ...asl.States.SeekChunks.ItemSelector, speculative: true });
    expect(map.ItemReader).toEqual(asl.States.SeekChunks.ItemReader);
    expect(map.ResultWriter).toEqual(asl.States.SeekChunks.ResultWriter);
    expect(map.ResultPath).toBeNull();
    expect(map.ItemProcessor?.States.SpeculativeSeek).toMatchObject({ Type: 'Task', Resource: fnArn('Seek'), End: true });
    expect(map.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.speculationError', Next: 'SpeculationFailed' }]);
    expect(speculative.States.SpeculationFailed).toMatchObject({ Type: 'Pass', End: true });
  });

  it('after a pipelined round: the stopped KAR state to Answered?, a refusal to KAR of the speculative round, a failed speculation to Synchronize', () => {
    // Arrange
    const parallel = asl.States.PipelinedRound;
    // Assert
    expect(parallel.Catch).toEqual([{ ErrorEquals: ['SpeculationStopped'], ResultPath: '$.stopped', Next: 'StoppedState' }]);
    expect(asl.States.StoppedState).toMatchObject({
      Type: 'Pass',
      Parameters: { 'state.$': 'States.StringToJson($.stopped.Cause)' },
      OutputPath: '$.state',
      Next: 'Answered?',
    });
    // The adopted state: every workflow state field of branch B's (round r+1), the KAR step count of branch A's.
    const fields = Object.keys(WorkflowStateSchema.shape);
    expect(parallel.ResultSelector).toEqual({
      'kar.$': '$[0]',
      'next.$': '$[1]',
      adopted: Object.fromEntries(fields.map((f) => [`${f}.$`, f === 'seq' ? '$[0].seq' : `$[1].${f}`])),
    });
    expect(parallel.Next).toBe('SpeculativeRoundSought?');
    expect(asl.States['SpeculativeRoundSought?']).toMatchObject({
      Choices: [{ Variable: '$.next.speculationError', IsPresent: true, Next: 'KarState' }],
      Default: 'AdoptSpeculativeRound',
    });
    expect(asl.States.KarState).toMatchObject({ Type: 'Pass', OutputPath: '$.kar', Next: 'Answered?' });
    expect(asl.States.AdoptSpeculativeRound).toMatchObject({ Type: 'Pass', OutputPath: '$.adopted', Next: 'Pipelined?' });
  });

  it("seeks a round as batch jobs with seekMode 'batch' (waiting between status reads, no polling Lambda), then on demand only what the jobs left", () => {
    // Assert: SeekMode? chooses batch only when the config says so (states written before it: on demand)
    expect(asl.States['SeekMode?']).toEqual({
      Type: 'Choice',
      Comment: expect.any(String),
      Choices: [
        {
          And: [
            { Variable: '$.config.seekMode', IsPresent: true },
            { Variable: '$.config.seekMode', StringEquals: 'batch' },
          ],
          Next: 'SubmitSeekBatch',
        },
      ],
      Default: 'SeekChunks',
    });
    const event = { 'runId.$': '$.runId', 'round.$': '$.round', 'manifestKey.$': '$.manifestKey', 'covered.$': '$.covered' };
    for (const [name, step] of [
      ['SubmitSeekBatch', 'submit'],
      ['CheckSeekBatch', 'check'],
    ] as const) {
      expect(asl.States[name]).toMatchObject({
        Type: 'Task',
        Resource: fnArn('Seek'),
        Parameters: { seekBatch: step, ...event },
        ResultPath: '$.seekBatch',
        Next: 'SeekBatchStatus?',
      });
      expect((asl.States[name].Retry ?? []).flatMap((r) => r.ErrorEquals)).toEqual(
        expect.arrayContaining(['ModelThrottledError', 'Lambda.TooManyRequestsException']),
      );
    }
    expect(asl.States.WaitForSeekBatch).toMatchObject({ Type: 'Wait', SecondsPath: '$.seekBatch.waitSeconds', Next: 'CheckSeekBatch' });
    expect(asl.States['SeekBatchStatus?']).toMatchObject({
      Type: 'Choice',
      Choices: [
        { Variable: '$.seekBatch.status', StringEquals: 'waiting', Next: 'WaitForSeekBatch' },
        { Variable: '$.seekBatch.status', StringEquals: 'collecting', Next: 'CheckSeekBatch' },
        { Variable: '$.seekBatch.remaining', NumericGreaterThan: 0, Next: 'SeekBatchRemainder' },
      ],
      Default: 'SeekBatchComplete',
    });
    // Both exits keep every field of the state and drop $.seekBatch (the next tasks validate strictly)
    const kept = Object.fromEntries(Object.keys(WorkflowStateSchema.shape).map((field) => [`${field}.$`, `$.${field}`]));
    expect(asl.States.SeekBatchRemainder).toMatchObject({ Type: 'Pass', Parameters: kept, Next: 'SeekChunks' });
    expect(asl.States.SeekBatchComplete).toMatchObject({ Type: 'Pass', Parameters: kept, Next: 'Pipelined?' });
  });

  it('passes every Lambda result through as the state (no Payload envelope, no ResultSelector)', () => {
    // Arrange: the batch-seeking tasks keep their result beside the state (ResultPath $.seekBatch), tested above
    const tasks = Object.entries(asl.States).filter(([name, state]) => state.Type === 'Task' && !name.endsWith('SeekBatch'));
    // Assert
    expect(tasks.map(([name]) => name).sort()).toEqual(['AnswerBestEffort', 'Finalize', 'GrowCoverage', 'Prepare', 'Reason', 'Synchronize']);
    for (const [, state] of tasks) {
      expect(state.Resource).toMatch(/^\$\{\w+Function\w*\.Arn\}$/);
      expect(state).not.toHaveProperty('ResultSelector');
      expect(state).not.toHaveProperty('ResultPath');
      expect(state).not.toHaveProperty('OutputPath');
    }
  });

  it('keeps States.ALL last in every Catch list', () => {
    // Arrange
    const states = Object.values(allStates(asl));
    // Assert
    for (const state of states) {
      const catchers = state.Catch ?? [];
      catchers.forEach((catcher, index) => {
        if (catcher.ErrorEquals.includes('States.ALL')) expect(index).toBe(catchers.length - 1);
      });
    }
  });

  it('exports the state names it renders', () => {
    expect(Object.values(STATE_NAMES).sort()).toEqual(Object.keys(allStates(asl)).sort());
  });

  it('is a definition aws-local-stepfunctions accepts', () => {
    // Act
    const construct = () => new LocalStateMachine(asl as never);
    // Assert
    expect(construct).not.toThrow();
  });
});

// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------

describe('the stack resources', () => {
  let template: Template;

  beforeAll(() => {
    template = synth();
  });

  it('creates a private, encrypted, TLS-only bucket that is retained on delete', () => {
    // Assert
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
      }),
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('creates the run table with the byRelevance GSI, point-in-time recovery and TTL', () => {
    // Assert
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'gsi1pk', AttributeType: 'S' },
        { AttributeName: 'gsi1sk', AttributeType: 'S' },
      ]),
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      GlobalSecondaryIndexes: [
        {
          IndexName: 'byRelevance',
          KeySchema: [
            { AttributeName: 'gsi1pk', KeyType: 'HASH' },
            { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });

  it.each([
    ['Prepare', 2048, 900],
    ['Seek', 1024, 600],
    ['Reason', 1024, 600],
    ['Synchronize', 512, 60],
    ['Finalize', 512, 60],
  ])('deploys %s on nodejs24.x arm64 with %i MB, %i s, tracing, its log group and the project environment', (handler, memory, timeout) => {
    // Arrange
    const fn = template.toJSON().Resources[functionLogicalId(template, handler)];
    // Assert
    expect(fn.Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: memory,
      Timeout: timeout,
      Handler: 'index.handler',
      TracingConfig: { Mode: 'Active' },
      LoggingConfig: { LogGroup: { Ref: expect.stringMatching(new RegExp(`^${handler}FunctionLogGroup`)) } },
      Environment: {
        Variables: {
          TABLE_NAME: { Ref: expect.stringMatching(/^Table/) },
          BUCKET_NAME: { Ref: expect.stringMatching(/^Bucket/) },
          MODEL_SPEC: 'bedrock:us.meta.llama3-1-8b-instruct-v1:0,us.meta.llama3-3-70b-instruct-v1:0',
          POWERTOOLS_SERVICE_NAME: 'extagents',
          NODE_OPTIONS: '--enable-source-maps',
        },
      },
    });
  });

  it('gives every log group a retention', () => {
    // Arrange
    const logGroups = Object.values(template.findResources('AWS::Logs::LogGroup'));
    // Assert: at least five handlers and the state machine (the upload triggers add theirs)
    expect(logGroups.length).toBeGreaterThanOrEqual(6);
    for (const logGroup of logGroups) expect(logGroup.Properties.RetentionInDays).toBeGreaterThan(0);
  });

  it('lets Prepare read the corpus and write runs/ and the chunk cache, and the other handlers read and write runs/ and the table and read the chunk cache', () => {
    // Arrange
    const bucketArn = `\${${projectBucketId(template)}.Arn}`;
    const grants = (handler: string) => statementsOfRole(template, roleOfFunction(template, handler));
    const objectsOf = (handler: string, action: string) =>
      grants(handler)
        .filter((s) => [s.Action].flat().includes(action))
        .flatMap((s) => [s.Resource].flat())
        .filter((r) => typeof r === 'string' && r.startsWith(`${bucketArn}/`));
    // Assert
    expect(objectsOf('Prepare', 's3:GetObject')).toEqual([`${bucketArn}/*`]);
    expect(objectsOf('Prepare', 's3:PutObject')).toEqual([`${bucketArn}/cache/chunks/*`, `${bucketArn}/runs/*`]);
    expect(
      grants('Prepare')
        .flatMap((s) => [s.Action].flat())
        .filter((a) => String(a).startsWith('dynamodb:')),
    ).toEqual([]);
    for (const handler of ['Seek', 'Reason', 'Synchronize', 'Finalize']) {
      const actions = grants(handler).flatMap((s) => [s.Action].flat());
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem']));
      expect(objectsOf(handler, 's3:GetObject')).toEqual([`${bucketArn}/runs/*`, `${bucketArn}/cache/chunks/*`]);
      expect(objectsOf(handler, 's3:PutObject')).toEqual([`${bucketArn}/runs/*`]);
      expect(actions).not.toContain('s3:DeleteObject*');
    }
  });

  it('creates a Standard state machine with X-Ray tracing and ERROR logs without execution data', () => {
    // Assert
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: {
        Level: 'ERROR',
        IncludeExecutionData: false,
        Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: Match.anyValue() } }],
      },
    });
  });

  it('lets the state machine read the manifest, write Map Run results and invoke the handlers', () => {
    // Arrange
    const roleId = workflowMachine(template).Properties.RoleArn['Fn::GetAtt'][0];
    const bucketId = projectBucketId(template);
    const statements = statementsOfRole(template, roleId);
    const objectArn = `arn:aws:s3:::\${${bucketId}}/*`;
    const allows = (action: string, resource: string) => statements.some((s) => [s.Action].flat().includes(action) && [s.Resource].flat().includes(resource));
    // Assert
    expect(allows('s3:GetObject', objectArn)).toBe(true);
    expect(allows('s3:PutObject', objectArn)).toBe(true);
    for (const handler of ['Prepare', 'Seek', 'Reason', 'Synchronize', 'Finalize']) {
      expect(allows('lambda:InvokeFunction', `\${${functionLogicalId(template, handler)}.Arn}`)).toBe(true);
    }
    expect(statements.some((s) => [s.Action].flat().includes('states:StartExecution'))).toBe(true);
  });

  it('outputs the bucket name, the table name and the state machine ARN', () => {
    // Assert
    template.hasOutput('BucketName', { Value: { Ref: Match.stringLikeRegexp('^Bucket') } });
    template.hasOutput('TableName', { Value: { Ref: Match.stringLikeRegexp('^Table') } });
    template.hasOutput('StateMachineArn', { Value: { Ref: Match.stringLikeRegexp('StateMachine') } });
  });
});

// ---------------------------------------------------------------------------------------------
// Bedrock permissions per model spec
// ---------------------------------------------------------------------------------------------

describe('Bedrock permissions', () => {
  it('grants inference profiles and the foundation models they route to, per agent role', () => {
    // Arrange
    const template = synth({
      modelSpec: 'bedrock:us.meta.llama3-1-8b-instruct-v1:0,us.meta.llama3-3-70b-instruct-v1:0',
    });
    // Assert
    expect(bedrockResourcesOf(template, 'Seek').sort()).toEqual([
      `arn:aws:bedrock:*::foundation-model/meta.llama3-1-8b-instruct-v1:0`,
      `arn:aws:bedrock:${REGION}:${ACCOUNT}:inference-profile/us.meta.llama3-1-8b-instruct-v1:0`,
    ]);
    expect(bedrockResourcesOf(template, 'Reason').sort()).toEqual([
      `arn:aws:bedrock:*::foundation-model/meta.llama3-3-70b-instruct-v1:0`,
      `arn:aws:bedrock:${REGION}:${ACCOUNT}:inference-profile/us.meta.llama3-3-70b-instruct-v1:0`,
    ]);
    for (const handler of ['Prepare', 'Synchronize', 'Finalize']) expect(bedrockResourcesOf(template, handler)).toEqual([]);
  });

  it('grants a plain model id as the foundation model in the stack region', () => {
    // Arrange
    const template = synth({ modelSpec: 'bedrock:amazon.nova-lite-v1:0' });
    // Assert
    const expected = [`arn:aws:bedrock:${REGION}::foundation-model/amazon.nova-lite-v1:0`];
    expect(bedrockResourcesOf(template, 'Seek')).toEqual(expected);
    expect(bedrockResourcesOf(template, 'Reason')).toEqual(expected);
  });

  it('grants no Bedrock access for the extractive reader', () => {
    // Arrange
    const template = synth({ modelSpec: 'extractive' });
    // Assert
    expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).not.toContain('bedrock:');
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ MODEL_SPEC: 'extractive' }) },
    });
  });

  it('rejects an invalid model spec at synth with a clear message', () => {
    // Act
    const build = () => buildStack(createSynthesisApp(), { modelSpec: 'azure:gpt-4' });
    // Assert
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(/Invalid model spec "azure:gpt-4"/);
  });

  it('refuses an OpenAI-compatible model spec without a base URL at synth, naming the context to set', () => {
    // Act
    const build = () => buildStack(createSynthesisApp(), { modelSpec: 'openai:llama3' });
    // Assert
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(/openaiBaseUrl=https:\/\//);
  });
});

// ---------------------------------------------------------------------------------------------
// Bedrock batch inference of the seeking agents (run option seekMode 'batch')
// ---------------------------------------------------------------------------------------------

describe('Bedrock batch inference', () => {
  let template: Template;

  beforeAll(() => {
    template = synth({ modelSpec: 'bedrock:us.meta.llama3-1-8b-instruct-v1:0,us.meta.llama3-3-70b-instruct-v1:0' });
  });

  function batchRoleId(t: Template): string {
    const ids = Object.keys(t.findResources('AWS::IAM::Role')).filter((id) => id.startsWith('SeekBatchServiceRole'));
    expect(ids).toHaveLength(1);
    return ids[0];
  }

  const environmentOf = (t: Template, handler: string) =>
    (t.toJSON().Resources[functionLogicalId(t, handler)].Properties.Environment?.Variables ?? {}) as Record<string, Json>;

  it('creates a service role only Bedrock may assume, for model invocation jobs of this account and region', () => {
    // Arrange
    const role = template.toJSON().Resources[batchRoleId(template)].Properties as JsonObject;
    // Assert
    expect(resolveIntrinsics(role.AssumeRolePolicyDocument)).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: 'sts:AssumeRole',
          Principal: { Service: 'bedrock.amazonaws.com' },
          Condition: {
            StringEquals: { 'aws:SourceAccount': ACCOUNT },
            ArnEquals: { 'aws:SourceArn': `arn:aws:bedrock:${REGION}:${ACCOUNT}:model-invocation-job/*` },
          },
        },
      ],
    });
    expect(role.ManagedPolicyArns).toBeUndefined();
  });

  it("lets the role read the jobs' records, write their output, list only batch keys and invoke the seeking model", () => {
    // Arrange
    const bucketArn = `\${${projectBucketId(template)}.Arn}`;
    const statements = statementsOfRole(template, batchRoleId(template));
    const byAction = (action: string) => statements.filter((s) => [s.Action].flat().includes(action));
    // Assert: nothing else.
    expect(statements.flatMap((s) => [s.Action].flat()).sort()).toEqual(['bedrock:InvokeModel', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
    const ownBucket = { StringEquals: { 'aws:ResourceAccount': ACCOUNT } };
    expect(byAction('s3:GetObject')).toEqual([expect.objectContaining({ Resource: `${bucketArn}/runs/*/batch/*/input/*`, Condition: ownBucket })]);
    expect(byAction('s3:PutObject')).toEqual([expect.objectContaining({ Resource: `${bucketArn}/runs/*/batch/*/output/*`, Condition: ownBucket })]);
    expect(byAction('s3:ListBucket')).toEqual([
      expect.objectContaining({ Resource: bucketArn, Condition: { ...ownBucket, StringLike: { 's3:prefix': 'runs/*/batch/*' } } }),
    ]);
    expect(
      byAction('bedrock:InvokeModel')
        .flatMap((s) => [s.Resource].flat())
        .sort(),
    ).toEqual(bedrockResourcesOf(template, 'Seek').sort());
  });

  it('lets the Seek function create and read jobs of the seeking model and pass the role to Bedrock only', () => {
    // Arrange
    const statements = statementsOfRole(template, roleOfFunction(template, 'Seek'));
    const byAction = (action: string) => statements.filter((s) => [s.Action].flat().includes(action));
    const jobs = `arn:aws:bedrock:${REGION}:${ACCOUNT}:model-invocation-job/*`;
    // Assert
    expect(byAction('bedrock:CreateModelInvocationJob')).toEqual([
      expect.objectContaining({ Action: 'bedrock:CreateModelInvocationJob', Resource: [jobs, ...bedrockResourcesOf(template, 'Seek')] }),
    ]);
    expect(byAction('bedrock:GetModelInvocationJob')).toEqual([expect.objectContaining({ Action: 'bedrock:GetModelInvocationJob', Resource: jobs })]);
    expect(byAction('iam:PassRole')).toEqual([
      expect.objectContaining({
        Action: 'iam:PassRole',
        Resource: `\${${batchRoleId(template)}.Arn}`,
        Condition: { StringEquals: { 'iam:PassedToService': 'bedrock.amazonaws.com' } },
      }),
    ]);
    for (const handler of ['Prepare', 'Reason', 'Synchronize', 'Finalize']) {
      const actions = statementsOfRole(template, roleOfFunction(template, handler)).flatMap((s) => [s.Action].flat());
      expect(actions.filter((a) => a === 'iam:PassRole' || String(a).includes('ModelInvocationJob'))).toEqual([]);
    }
  });

  it('names the role in BATCH_ROLE_ARN of the Seek function only', () => {
    // Assert
    expect(environmentOf(template, 'Seek').BATCH_ROLE_ARN).toEqual({ 'Fn::GetAtt': [batchRoleId(template), 'Arn'] });
    for (const handler of ['Prepare', 'Reason', 'Synchronize', 'Finalize']) expect(environmentOf(template, handler)).not.toHaveProperty('BATCH_ROLE_ARN');
    const others = Object.entries(template.findResources('AWS::Lambda::Function')).filter(([id]) => !id.startsWith('SeekFunction'));
    for (const [, fn] of others) expect(fn.Properties.Environment?.Variables ?? {}).not.toHaveProperty('BATCH_ROLE_ARN');
  });

  it('keeps the events of failed, stopped or expired jobs of this project in a queue, and alarms while one is there', () => {
    // Arrange
    const queueId = idStartingWith(template, 'AWS::SQS::Queue', 'SeekBatchFailedJobsQueue');
    // Assert
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.bedrock'],
        'detail-type': ['Batch Inference Job State Change'],
        detail: { status: ['Failed', 'Stopped', 'Expired'], batchJobName: [{ prefix: 'extagents-' }] },
      },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [queueId, 'Arn'] } })],
    });
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    template.hasOutput('SeekBatchFailedJobsQueueUrl', { Value: { Ref: queueId } });
  });

  it('has no batch role, grants, variable or rule without a Bedrock model', () => {
    for (const modelSpec of ['extractive']) {
      // Arrange
      const other = synth({ modelSpec });
      // Assert
      expect(Object.keys(other.findResources('AWS::IAM::Role')).filter((id) => id.startsWith('SeekBatch'))).toEqual([]);
      expect(JSON.stringify(other.findResources('AWS::IAM::Policy'))).not.toMatch(/ModelInvocationJob|iam:PassRole/);
      expect(environmentOf(other, 'Seek')).not.toHaveProperty('BATCH_ROLE_ARN');
      expect(JSON.stringify(other.findResources('AWS::Events::Rule'))).not.toContain('aws.bedrock');
    }
  });
});
