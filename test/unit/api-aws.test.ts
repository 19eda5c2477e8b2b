/**
 * The API's AWS side with mocked SDK clients (aws-sdk-client-mock; no credentials, no network):
 * the Step Functions launcher, the S3 presigner and conditional-write idempotency store, and the
 * Lambda entry point (lambdas/api.ts) driven with API Gateway proxy events.
 */
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidToken,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { InvalidInputError } from '../../shared/errors';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { S3IdempotencyStore } from '../../lambdas/adapters/s3-idempotency-store';
import { S3Presigner, createPresigningS3Client } from '../../lambdas/adapters/s3-presigner';
import { SfnRunLauncher } from '../../lambdas/adapters/sfn-run-launcher';
import type { ApiGatewayProxyEvent, ApiGatewayProxyResult } from '../../lambdas/api';
import type { IdempotencyRecord } from '../../shared/api/ports';
import { CreateRunResponseSchema, ProblemSchema, RunPageSchema } from '../../shared/api/schemas';

const STATE_MACHINE_ARN = 'arn:aws:states:us-west-2:123456789012:stateMachine:Workflow1';
const sfn = mockClient(SFNClient);
const s3 = mockClient(S3Client);
const dynamo = mockClient(DynamoDBDocumentClient);
mockClient(DynamoDBClient);

/** A GetObject body as the SDK returns it (the two readers the adapters use). */
const body = (text: string) => ({ transformToString: async () => text, transformToByteArray: async () => new Uint8Array(Buffer.from(text)) }) as never;

const s3Error = (name: string, status: number): S3ServiceException =>
  new S3ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status }, message: name });

beforeEach(() => {
  sfn.reset();
  s3.reset();
  dynamo.reset();
});

describe('SfnRunLauncher', () => {
  const launcher = new SfnRunLauncher(new SFNClient({}), STATE_MACHINE_ARN);
  const input = { runId: 'run-1', question: 'Q', corpus: { prefix: 'corpora/c1/' } };

  it('starts an execution named after the run with the Prepare event as input', async () => {
    sfn.on(StartExecutionCommand).resolves({ executionArn: 'arn', startDate: new Date() });

    await expect(launcher.start('run-1', input)).resolves.toEqual({ started: true });

    expect(sfn.commandCalls(StartExecutionCommand)[0].args[0].input).toEqual({
      stateMachineArn: STATE_MACHINE_ARN,
      name: 'run-1',
      input: JSON.stringify(input),
    });
  });

  it('reports an existing execution of the same name as already started, not as an error', async () => {
    sfn.on(StartExecutionCommand).rejects(new ExecutionAlreadyExists({ message: 'Execution Already Exists', $metadata: {} }));

    await expect(launcher.start('run-1', input)).resolves.toEqual({ started: false });
  });

  it('describes an execution by the ARN derived from the state machine, with the Lambda error message as cause', async () => {
    sfn.on(DescribeExecutionCommand).resolves({
      executionArn: 'x',
      stateMachineArn: STATE_MACHINE_ARN,
      status: 'FAILED',
      startDate: new Date('2026-01-02T03:04:05Z'),
      stopDate: new Date('2026-01-02T03:05:05Z'),
      error: 'EmptyCorpusError',
      cause: JSON.stringify({ errorType: 'EmptyCorpusError', errorMessage: 'The corpus has no usable text', trace: [] }),
    });

    const described = await launcher.describe('run-1');

    expect(sfn.commandCalls(DescribeExecutionCommand)[0].args[0].input.executionArn).toBe('arn:aws:states:us-west-2:123456789012:execution:Workflow1:run-1');
    expect(described).toEqual({
      name: 'run-1',
      status: 'FAILED',
      startedAt: '2026-01-02T03:04:05.000Z',
      stoppedAt: '2026-01-02T03:05:05.000Z',
      error: 'EmptyCorpusError',
      cause: 'The corpus has no usable text',
    });
  });

  it('describes an unknown execution as undefined', async () => {
    sfn.on(DescribeExecutionCommand).rejects(new ExecutionDoesNotExist({ message: 'no', $metadata: {} }));

    await expect(launcher.describe('nope')).resolves.toBeUndefined();
  });

  it('lists the executions of its state machine a page at a time, passing the position on as nextToken', async () => {
    sfn.on(ListExecutionsCommand).resolves({
      executions: [
        { executionArn: 'a2', stateMachineArn: STATE_MACHINE_ARN, name: 'run-2', status: 'RUNNING', startDate: new Date('2026-01-02T03:05:00Z') },
        {
          executionArn: 'a1',
          stateMachineArn: STATE_MACHINE_ARN,
          name: 'run-1',
          status: 'ABORTED',
          startDate: new Date('2026-01-02T03:04:00Z'),
          stopDate: new Date('2026-01-02T03:04:30Z'),
        },
      ],
      nextToken: 'token-2',
    });

    const page = await launcher.list({ limit: 2, after: 'token-1' });

    expect(sfn.commandCalls(ListExecutionsCommand)[0].args[0].input).toEqual({ stateMachineArn: STATE_MACHINE_ARN, maxResults: 2, nextToken: 'token-1' });
    expect(page).toEqual({
      executions: [
        { name: 'run-2', status: 'RUNNING', startedAt: '2026-01-02T03:05:00.000Z' },
        { name: 'run-1', status: 'ABORTED', startedAt: '2026-01-02T03:04:00.000Z', stoppedAt: '2026-01-02T03:04:30.000Z' },
      ],
      next: 'token-2',
    });
  });

  it('reports the last page without a position, and an invalid token as an input error', async () => {
    sfn
      .on(ListExecutionsCommand)
      .resolvesOnce({ executions: [] })
      .rejectsOnce(new InvalidToken({ message: 'Invalid Token', $metadata: {} }));

    await expect(launcher.list({ limit: 5 })).resolves.toEqual({ executions: [] });
    expect(sfn.commandCalls(ListExecutionsCommand)[0].args[0].input).toEqual({ stateMachineArn: STATE_MACHINE_ARN, maxResults: 5 });
    await expect(launcher.list({ limit: 5, after: 'forged' })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('stops an execution by its ARN with the reason as error and cause, then describes it', async () => {
    sfn.on(StopExecutionCommand).resolves({ stopDate: new Date('2026-01-02T03:06:00Z') });
    sfn.on(DescribeExecutionCommand).resolves({
      executionArn: 'x',
      stateMachineArn: STATE_MACHINE_ARN,
      status: 'ABORTED',
      startDate: new Date('2026-01-02T03:04:05Z'),
      stopDate: new Date('2026-01-02T03:06:00Z'),
      error: 'RunCancelled',
      cause: 'Cancelled through the API',
    });

    const described = await launcher.abort('run-1', { error: 'RunCancelled', cause: 'Cancelled through the API' });

    expect(sfn.commandCalls(StopExecutionCommand)[0].args[0].input).toEqual({
      executionArn: 'arn:aws:states:us-west-2:123456789012:execution:Workflow1:run-1',
      error: 'RunCancelled',
      cause: 'Cancelled through the API',
    });
    expect(described).toMatchObject({ name: 'run-1', status: 'ABORTED', error: 'RunCancelled', stoppedAt: '2026-01-02T03:06:00.000Z' });
  });

  it('stops an unknown execution as undefined', async () => {
    sfn.on(StopExecutionCommand).rejects(new ExecutionDoesNotExist({ message: 'no', $metadata: {} }));

    await expect(launcher.abort('nope', { error: 'RunCancelled', cause: 'c' })).resolves.toBeUndefined();
  });

  it('refuses a malformed state machine ARN', () => {
    expect(() => new SfnRunLauncher(new SFNClient({}), 'arn:aws:lambda:us-west-2:123456789012:function:f')).toThrow('Not a state machine ARN');
  });
});

describe('S3Presigner', () => {
  const client = createPresigningS3Client({ region: 'us-west-2', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' } });
  const presigner = new S3Presigner(client, 'project-bucket', () => new Date('2026-01-02T03:04:05Z'));

  it('signs a PUT of the key that binds its length and content type, expiring as asked, without a checksum of an empty body', async () => {
    const upload = await presigner.presignPut('corpora/c1/notes/a b.txt', { expiresInSeconds: 600, contentLength: 11, contentType: 'text/plain' });

    const url = new URL(upload.url);
    expect(url.hostname).toBe('project-bucket.s3.us-west-2.amazonaws.com');
    expect(decodeURIComponent(url.pathname)).toBe('/corpora/c1/notes/a b.txt');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('600');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host');
    expect(url.searchParams.get('X-Amz-Date')).toBe('20260102T030405Z');
    expect([...url.searchParams.keys()].filter((k) => /checksum/i.test(k))).toEqual([]);
    expect(upload).toMatchObject({ method: 'PUT', headers: { 'content-length': '11', 'content-type': 'text/plain' }, expiresAt: '2026-01-02T03:14:05.000Z' });
  });

  it('signs only the host when neither length nor type is given', async () => {
    const upload = await presigner.presignPut('corpora/c1/a.txt', { expiresInSeconds: 60 });

    expect(new URL(upload.url).searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    expect(upload.headers).toEqual({});
  });
});

describe('S3IdempotencyStore', () => {
  const record: IdempotencyRecord = { keyHash: 'ab'.repeat(32), requestHash: 'cd'.repeat(32), runId: 'run-x', createdAt: '2026-01-02T03:04:05.000Z' };
  const store = new S3IdempotencyStore(new S3Client({}), 'project-bucket', async () => undefined);

  it('claims a key with a conditional write (If-None-Match: *)', async () => {
    s3.on(PutObjectCommand).resolves({});

    await expect(store.claim(record)).resolves.toBeUndefined();

    expect(s3.commandCalls(PutObjectCommand)[0].args[0].input).toMatchObject({
      Bucket: 'project-bucket',
      Key: `api/idempotency/${record.keyHash}.json`,
      IfNoneMatch: '*',
      Body: JSON.stringify(record),
    });
  });

  it('returns the record already there when the conditional write fails with 412', async () => {
    const existing = { ...record, requestHash: 'ef'.repeat(32) };
    s3.on(PutObjectCommand).rejects(s3Error('PreconditionFailed', 412));
    s3.on(GetObjectCommand).resolves({ Body: body(JSON.stringify(existing)) });

    await expect(store.claim(record)).resolves.toEqual(existing);
  });

  it('retries a 409 ConditionalRequestConflict of a concurrent write, then reads the winner', async () => {
    s3.on(PutObjectCommand).rejectsOnce(s3Error('ConditionalRequestConflict', 409)).rejectsOnce(s3Error('PreconditionFailed', 412));
    s3.on(GetObjectCommand).resolves({ Body: body(JSON.stringify(record)) });

    await expect(store.claim(record)).resolves.toEqual(record);
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(2);
  });

  it('reads a missing key as undefined', async () => {
    s3.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'no', $metadata: {} }));

    await expect(store.get(record.keyHash)).resolves.toBeUndefined();
  });
});

describe('the API Lambda (lambdas/api.ts)', () => {
  let handler: (event: unknown, context: unknown) => Promise<ApiGatewayProxyResult>;
  let toApiRequest: typeof import('../../lambdas/api').toApiRequest;
  const context = { functionName: 'api', functionVersion: '$LATEST', invokedFunctionArn: 'arn', memoryLimitInMB: '512', awsRequestId: 'req-1' };

  beforeAll(async () => {
    process.env.TABLE_NAME = 'runs-table';
    process.env.BUCKET_NAME = 'project-bucket';
    process.env.STATE_MACHINE_ARN = STATE_MACHINE_ARN;
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
    const module = await import('../../lambdas/api');
    handler = module.handler as typeof handler;
    toApiRequest = module.toApiRequest;
  });

  const event = (overrides: Partial<ApiGatewayProxyEvent>): ApiGatewayProxyEvent => ({
    resource: '/v1/runs',
    path: '/v1/runs',
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/json' },
    queryStringParameters: null,
    pathParameters: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      stage: 'prod',
      path: '/prod/v1/runs',
      domainName: 'abc123.execute-api.us-west-2.amazonaws.com',
      identity: { userArn: 'arn:aws:iam::123456789012:user/alice' },
    },
    ...overrides,
  });

  it('rebuilds the route path from the resource template and the base URL from the stage or custom-domain base path', () => {
    const viaStage = toApiRequest(
      event({
        resource: '/v1/runs/{runId}',
        path: '/v1/runs/r 1',
        httpMethod: 'GET',
        pathParameters: { runId: 'r 1' },
        requestContext: { stage: 'prod', path: '/prod/v1/runs/r 1', domainName: 'abc123.execute-api.us-west-2.amazonaws.com', identity: {} },
      }),
    );
    const viaDomain = toApiRequest(
      event({
        path: '/extagents/v1/runs',
        body: Buffer.from('{"a":1}').toString('base64'),
        isBase64Encoded: true,
        requestContext: { stage: 'prod', path: '/extagents/v1/runs', domainName: 'api.example.com', identity: { caller: 'AIDAEXAMPLE' } },
      }),
    );

    expect(viaStage).toMatchObject({
      method: 'GET',
      path: '/v1/runs/r%201',
      baseUrl: 'https://abc123.execute-api.us-west-2.amazonaws.com/prod',
      principal: 'anonymous',
    });
    expect(viaDomain).toMatchObject({ path: '/v1/runs', baseUrl: 'https://api.example.com', body: '{"a":1}', principal: 'AIDAEXAMPLE' });
  });

  it('starts a run with an idempotent execution name, and a retry of the same request starts nothing new', async () => {
    const stored = new Map<string, string>();
    s3.on(HeadObjectCommand).resolves({});
    s3.on(GetObjectCommand).callsFake(async (input: { Key: string }) => {
      const text = stored.get(input.Key);
      if (text === undefined) throw new NoSuchKey({ message: 'no', $metadata: {} });
      return { Body: body(text) };
    });
    s3.on(PutObjectCommand).callsFake(async (input: { Key: string; Body: string }) => {
      stored.set(input.Key, input.Body);
      return {};
    });
    sfn
      .on(StartExecutionCommand)
      .resolvesOnce({ executionArn: 'arn', startDate: new Date() })
      .rejects(new ExecutionAlreadyExists({ message: 'exists', $metadata: {} }));
    sfn
      .on(DescribeExecutionCommand)
      .resolves({ executionArn: 'x', stateMachineArn: STATE_MACHINE_ARN, status: 'SUCCEEDED', startDate: new Date(), stopDate: new Date() });
    const request = event({
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'nightly-2026-01-02' },
      body: JSON.stringify({ question: 'Who?', corpus: { keys: ['corpora/c1/a.txt'] } }),
    });

    const first = await handler(request, context);
    const retry = await handler(request, context);

    expect(first.statusCode).toBe(202);
    const { runId } = CreateRunResponseSchema.parse(JSON.parse(first.body));
    expect(first.headers.location).toBe(`https://abc123.execute-api.us-west-2.amazonaws.com/prod/v1/runs/${runId}`);
    expect(retry.statusCode).toBe(202);
    expect(CreateRunResponseSchema.parse(JSON.parse(retry.body))).toMatchObject({ runId, status: 'SUCCEEDED' });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    const starts = sfn.commandCalls(StartExecutionCommand).map((c) => c.args[0].input);
    expect(starts.map((s) => s.name)).toEqual([runId, runId]);
    expect(JSON.parse(starts[0].input ?? '')).toMatchObject({ runId, question: 'Who?', corpus: { keys: ['corpora/c1/a.txt'] } });
    expect(s3.commandCalls(PutObjectCommand).filter((c) => c.args[0].input.IfNoneMatch === '*')).toHaveLength(1);
  });

  it('answers a malformed body with a 400 problem+json naming the field', async () => {
    const response = await handler(event({ body: JSON.stringify({ question: 42, corpus: { id: 'c1' } }) }), context);

    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(ProblemSchema.parse(JSON.parse(response.body)).errors).toEqual([
      { pointer: '/question', detail: 'Invalid input: expected string, received number' },
    ]);
    expect(sfn.commandCalls(StartExecutionCommand)).toHaveLength(0);
  });

  it('answers 404 for a run that has no execution and no result', async () => {
    sfn.on(DescribeExecutionCommand).rejects(new ExecutionDoesNotExist({ message: 'no', $metadata: {} }));
    s3.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'no', $metadata: {} }));
    s3.on(ListObjectsV2Command).resolves({ Contents: [] });
    dynamo.rejects(new ConditionalCheckFailedException({ message: 'unexpected', $metadata: {} }));

    const response = await handler(
      event({
        resource: '/v1/runs/{runId}',
        path: '/v1/runs/nope',
        httpMethod: 'GET',
        pathParameters: { runId: 'nope' },
        headers: {},
        requestContext: { stage: 'prod', path: '/prod/v1/runs/nope', identity: {} },
      }),
      context,
    );

    expect(response.statusCode).toBe(404);
    expect(ProblemSchema.parse(JSON.parse(response.body)).detail).toBe('No run with id "nope"');
  });

  it('lists runs from ListExecutions and cancels a running one with StopExecution, as API Gateway routes them', async () => {
    sfn.on(ListExecutionsCommand).resolves({
      executions: [{ executionArn: 'a', stateMachineArn: STATE_MACHINE_ARN, name: 'run-9', status: 'RUNNING', startDate: new Date('2026-01-02T03:04:05Z') }],
    });
    sfn
      .on(DescribeExecutionCommand)
      .resolvesOnce({ executionArn: 'a', stateMachineArn: STATE_MACHINE_ARN, status: 'RUNNING', startDate: new Date('2026-01-02T03:04:05Z') })
      .resolves({
        executionArn: 'a',
        stateMachineArn: STATE_MACHINE_ARN,
        status: 'ABORTED',
        startDate: new Date('2026-01-02T03:04:05Z'),
        stopDate: new Date('2026-01-02T03:04:09Z'),
        error: 'RunCancelled',
        cause: 'c',
      });
    sfn.on(StopExecutionCommand).resolves({ stopDate: new Date('2026-01-02T03:04:09Z') });
    const identity = { userArn: 'arn:aws:iam::123456789012:user/alice' };

    const list = await handler(
      event({
        resource: '/v1/runs',
        path: '/v1/runs',
        httpMethod: 'GET',
        headers: {},
        queryStringParameters: { limit: '1' },
        requestContext: { stage: 'prod', path: '/prod/v1/runs', domainName: 'abc123.execute-api.us-west-2.amazonaws.com', identity },
      }),
      context,
    );
    const cancel = await handler(
      event({
        resource: '/v1/runs/{runId}/cancel',
        path: '/v1/runs/run-9/cancel',
        httpMethod: 'POST',
        headers: {},
        pathParameters: { runId: 'run-9' },
        requestContext: { stage: 'prod', path: '/prod/v1/runs/run-9/cancel', domainName: 'abc123.execute-api.us-west-2.amazonaws.com', identity },
      }),
      context,
    );

    expect(list.statusCode).toBe(200);
    expect(RunPageSchema.parse(JSON.parse(list.body)).runs).toEqual([
      {
        runId: 'run-9',
        status: 'RUNNING',
        startedAt: '2026-01-02T03:04:05.000Z',
        links: {
          self: 'https://abc123.execute-api.us-west-2.amazonaws.com/prod/v1/runs/run-9',
          messages: 'https://abc123.execute-api.us-west-2.amazonaws.com/prod/v1/runs/run-9/messages',
        },
      },
    ]);
    expect(sfn.commandCalls(ListExecutionsCommand)[0].args[0].input).toEqual({ stateMachineArn: STATE_MACHINE_ARN, maxResults: 1 });
    expect(cancel.statusCode).toBe(202);
    expect(JSON.parse(cancel.body)).toMatchObject({ runId: 'run-9', status: 'ABORTED', stoppedAt: '2026-01-02T03:04:09.000Z' });
    expect(sfn.commandCalls(StopExecutionCommand)).toHaveLength(1);
  });

  it('answers the health route without an IAM identity', async () => {
    const response = await handler(
      event({
        resource: '/v1/health',
        path: '/v1/health',
        httpMethod: 'GET',
        headers: {},
        requestContext: { stage: 'prod', path: '/prod/v1/health', identity: {} },
      }),
      context,
    );

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'ok', version: '1.0.0' });
  });
});
