/**
 * CDK assertion tests of the API (infra/api.ts) in the ExtAgents stack: every route of the route
 * table with IAM authorization and the Lambda proxy integration, stage and method throttling,
 * access logs, request validation with models generated from the zod schemas, problem+json
 * gateway responses, least-privilege grants, the ApiUrl output, and no open cdk-nag finding.
 */
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { z } from 'zod';
import { ExtAgentsApi } from '../../infra/api';
import { buildStack, createSynthesisApp } from '../../infra/extagents-stack';
import { ConfigurationError } from '../../shared/errors';
import { API_ROUTES } from '../../shared/api/routes';
import { ProblemSchema } from '../../shared/api/schemas';
import { exactlyOneJsonSchemaOverride } from '../../shared/validation';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
interface Resource {
  Type: string;
  Properties: JsonObject;
}

const ACCOUNT = '123456789012';
const REGION = 'us-west-2';

let stack: Stack;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  stack = buildStack(createSynthesisApp(), { env: { account: ACCOUNT, region: REGION } });
  template = Template.fromStack(stack);
  resources = (template.toJSON() as { Resources: Record<string, Resource> }).Resources;
});

const ofType = (type: string): Array<[string, Resource]> => Object.entries(resources).filter(([, r]) => r.Type === type);
const only = (type: string): [string, Resource] => {
  const found = ofType(type);
  expect(found).toHaveLength(1);
  return found[0];
};

/** `/v1/runs/{runId}` of an AWS::ApiGateway::Resource, by walking ParentId up to the root. */
function resourcePath(logicalId: string): string {
  const parts: string[] = [];
  let current: string | undefined = logicalId;
  while (current) {
    const resource: Resource = resources[current];
    parts.unshift(String(resource.Properties.PathPart));
    const parent = resource.Properties.ParentId as { Ref?: string };
    current = parent.Ref;
  }
  return `/${parts.join('/')}`;
}

describe('ExtAgentsApi in the ExtAgents stack', () => {
  it('serves every route of the route table, each with IAM authorization (none for health and the OpenAPI document) and the Lambda proxy integration', () => {
    const [handlerId] = Object.entries(resources).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith('ApiHandler')) ?? [''];
    const [validatorId] = only('AWS::ApiGateway::RequestValidator');
    const methods = ofType('AWS::ApiGateway::Method').map(([, m]) => m.Properties);

    const served = methods.map((m) => `${String(m.HttpMethod)} ${resourcePath((m.ResourceId as { Ref: string }).Ref)}`);
    expect(served.sort()).toEqual(API_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    for (const route of API_ROUTES) {
      const method = methods.find((m) => m.HttpMethod === route.method && resourcePath((m.ResourceId as { Ref: string }).Ref) === route.path);
      expect(method).toMatchObject({
        AuthorizationType: route.auth === 'none' ? 'NONE' : 'AWS_IAM',
        OperationName: route.operationId,
        RequestValidatorId: { Ref: validatorId },
        Integration: {
          Type: 'AWS_PROXY',
          IntegrationHttpMethod: 'POST',
          Uri: { 'Fn::Join': ['', expect.arrayContaining([{ 'Fn::GetAtt': [handlerId, 'Arn'] }, '/invocations'])] },
        },
      });
      const expectedParameters = {
        ...Object.fromEntries(Object.keys(route.pathParams).map((n) => [`method.request.path.${n}`, true])),
        ...Object.fromEntries(Object.keys(route.query?.shape ?? {}).map((n) => [`method.request.querystring.${n}`, false])),
        ...Object.fromEntries(Object.keys(route.headers).map((n) => [`method.request.header.${n}`, false])),
      };
      expect(method?.RequestParameters ?? {}).toEqual(expectedParameters);
    }
  });

  it('lets API Gateway invoke the function once for the whole API', () => {
    const [apiId] = only('AWS::ApiGateway::RestApi');
    const permissions = ofType('AWS::Lambda::Permission').filter(([id]) => id.startsWith('Api'));

    expect(permissions).toHaveLength(1);
    expect(permissions[0][1].Properties).toMatchObject({
      Action: 'lambda:InvokeFunction',
      Principal: 'apigateway.amazonaws.com',
      SourceArn: { 'Fn::Join': ['', expect.arrayContaining([{ Ref: apiId }, '/*/*/*'])] },
    });
  });

  it('throttles the whole stage, and POST /v1/runs tighter, keeping execution logs at ERROR without request data', () => {
    const [, stage] = only('AWS::ApiGateway::Stage');

    expect(stage.Properties).toMatchObject({ StageName: 'prod', TracingEnabled: true });
    expect(stage.Properties.MethodSettings).toEqual([
      {
        HttpMethod: '*',
        ResourcePath: '/*',
        ThrottlingRateLimit: 20,
        ThrottlingBurstLimit: 40,
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
        MetricsEnabled: true,
      },
      {
        HttpMethod: 'POST',
        ResourcePath: '/~1v1~1runs',
        ThrottlingRateLimit: 2,
        ThrottlingBurstLimit: 5,
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
        MetricsEnabled: true,
      },
    ]);
  });

  it('writes JSON access logs with the caller and status to a log group with retention', () => {
    const [, stage] = only('AWS::ApiGateway::Stage');
    const setting = stage.Properties.AccessLogSetting as { DestinationArn: { 'Fn::GetAtt': [string, string] }; Format: string };
    const logGroup = resources[setting.DestinationArn['Fn::GetAtt'][0]];

    expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
    expect(logGroup.Properties.RetentionInDays).toBe(30);
    const format = JSON.parse(setting.Format) as Record<string, string>;
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      caller: '$context.identity.caller',
      user: '$context.identity.user',
      status: '$context.status',
      resourcePath: '$context.resourcePath',
    });
  });

  it("validates parameters and bodies, with the body models generated from the handlers' zod schemas", () => {
    const [, validator] = only('AWS::ApiGateway::RequestValidator');
    expect(validator.Properties).toMatchObject({ ValidateRequestBody: true, ValidateRequestParameters: true });

    const models = Object.fromEntries(ofType('AWS::ApiGateway::Model').map(([id, m]) => [id, m.Properties]));
    for (const route of API_ROUTES.filter((r) => r.body)) {
      const method = ofType('AWS::ApiGateway::Method').find(([, m]) => m.Properties.OperationName === route.operationId)?.[1];
      const modelId = (method?.Properties.RequestModels as Record<string, { Ref: string }> | undefined)?.['application/json']?.Ref ?? '';
      expect(models[modelId]).toMatchObject({ ContentType: 'application/json' });
      expect(models[modelId].Schema).toEqual(
        z.toJSONSchema(route.body as z.ZodType, { target: 'draft-04', io: 'input', override: exactlyOneJsonSchemaOverride }),
      );
    }
    // The corpus as a JSON Schema union of one-property objects ("exactly one of id, prefix, keys").
    const createRun = ofType('AWS::ApiGateway::Model').find(([, m]) => m.Properties.Name === 'CreateRunRequest')?.[1];
    const corpus = (
      createRun?.Properties.Schema as { properties: { corpus: { anyOf: Array<{ required: string[]; additionalProperties: boolean }> } } } | undefined
    )?.properties.corpus;
    expect(corpus).toBeDefined();
    expect(corpus?.anyOf.map((branch) => [branch.required, branch.additionalProperties])).toEqual([
      [['id'], false],
      [['prefix'], false],
      [['keys'], false],
    ]);
  });

  it("answers API Gateway's own errors (validation, authorization, throttling, unknown routes) as problem+json", () => {
    const responses = ofType('AWS::ApiGateway::GatewayResponse').map(([, r]) => r.Properties);
    const types = responses.map((r) => r.ResponseType);

    expect(types).toEqual(
      expect.arrayContaining([
        'BAD_REQUEST_BODY',
        'BAD_REQUEST_PARAMETERS',
        'ACCESS_DENIED',
        'MISSING_AUTHENTICATION_TOKEN',
        'INVALID_SIGNATURE',
        'THROTTLED',
        'DEFAULT_4XX',
        'DEFAULT_5XX',
      ]),
    );
    for (const response of responses) {
      expect(response.ResponseParameters).toEqual({ 'gatewayresponse.header.Content-Type': "'application/problem+json'" });
      const rendered = String((response.ResponseTemplates as Record<string, string>)['application/json'])
        .replace('$context.error.messageString', JSON.stringify('Missing Authentication Token'))
        .replace('$context.requestId', 'req-1');
      const problem = ProblemSchema.parse(JSON.parse(rendered));
      if (response.StatusCode !== undefined) expect(problem.status).toBe(Number(response.StatusCode));
    }
    expect(responses.find((r) => r.ResponseType === 'THROTTLED')).toMatchObject({ StatusCode: '429' });
  });

  it("grants the function least privilege: start, list, describe and stop the workflow's executions only, read the table, put only corpora/ and api/ objects", () => {
    const [, policy] = Object.entries(resources).find(([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith('ApiHandlerRole')) ?? [
      '',
      { Properties: {} } as Resource,
    ];
    const statements = (policy.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: Json }> }).Statement;
    const actions = statements.flatMap((s) => [s.Action].flat());
    const [stateMachineId] = ofType('AWS::StepFunctions::StateMachine').find(([id]) => id.startsWith('WorkflowStateMachine')) ?? [''];

    expect(statements).toEqual(expect.arrayContaining([{ Effect: 'Allow', Action: 'states:StartExecution', Resource: { Ref: stateMachineId } }]));
    expect(statements).toEqual(expect.arrayContaining([{ Effect: 'Allow', Action: 'states:ListExecutions', Resource: { Ref: stateMachineId } }]));
    const describe = statements.find((s) => [s.Action].flat().includes('states:DescribeExecution'));
    expect(JSON.stringify(describe?.Resource)).toContain(':execution:');
    const stop = statements.filter((s) => [s.Action].flat().includes('states:StopExecution'));
    expect(stop).toHaveLength(1);
    expect(JSON.stringify(stop[0].Resource)).toContain(':execution:');
    expect(JSON.stringify(stop[0].Resource)).toContain('WorkflowStateMachine');
    expect(actions.filter((a) => a.startsWith('states:')).sort()).toEqual([
      'states:DescribeExecution',
      'states:ListExecutions',
      'states:StartExecution',
      'states:StopExecution',
    ]);
    expect(
      actions
        .filter((a) => a.startsWith('dynamodb:'))
        .every((a) => /^dynamodb:(BatchGetItem|GetRecords|GetShardIterator|Query|GetItem|Scan|ConditionCheckItem|DescribeTable)$/.test(a)),
    ).toBe(true);
    expect(actions.some((a) => a.startsWith('s3:Delete'))).toBe(false);
    const putResources = statements.filter((s) => [s.Action].flat().includes('s3:PutObject')).map((s) => JSON.stringify(s.Resource));
    expect(putResources).toHaveLength(2);
    expect(putResources.join(' ')).toMatch(/\/corpora\/\*.*\/api\/\*/);
    expect(actions.some((a) => a.startsWith('bedrock:'))).toBe(false);
  });

  it('outputs the API URL of the prod stage', () => {
    const [apiId] = only('AWS::ApiGateway::RestApi');
    template.hasOutput('ApiUrl', {
      Value: { 'Fn::Join': ['', Match.arrayWith(['https://', { Ref: apiId }, Match.stringLikeRegexp('execute-api')])] },
    });
  });

  it("skips checkov's authorization check only on the two unauthenticated methods, with the reason", () => {
    const skipped = ofType('AWS::ApiGateway::Method').filter(([, m]) =>
      JSON.stringify((m as unknown as { Metadata?: Json }).Metadata ?? {}).includes('CKV_AWS_59'),
    );

    expect(skipped.map(([, m]) => m.Properties.OperationName).sort()).toEqual(['getHealth', 'getOpenApi']);
    expect(skipped.every(([, m]) => m.Properties.AuthorizationType === 'NONE')).toBe(true);
  });

  it('leaves no AwsSolutions (cdk-nag) finding of the API open', () => {
    const api = stack.node.findChild('Api') as IConstruct;

    const report = new AwsSolutionsChecks().validateScope(api);

    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });
});

describe('ExtAgentsApi settings', () => {
  function standalone(props: Partial<ConstructorParameters<typeof ExtAgentsApi>[2]> = {}): Template {
    const s = new Stack(createSynthesisApp(), 'Standalone', { env: { account: ACCOUNT, region: REGION } });
    new ExtAgentsApi(s, 'Api', {
      bucket: new s3.Bucket(s, 'Bucket'),
      table: new dynamodb.Table(s, 'Table', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } }),
      stateMachine: new sfn.StateMachine(s, 'Workflow', { definitionBody: sfn.DefinitionBody.fromChainable(new sfn.Pass(s, 'Pass')) }),
      ...props,
    });
    return Template.fromStack(s);
  }

  it('applies custom stage and start-run throttling', () => {
    const t = standalone({ throttling: { rateLimit: 5, burstLimit: 10 }, startRunThrottling: { rateLimit: 0.5, burstLimit: 1 } });

    t.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [
        Match.objectLike({ HttpMethod: '*', ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 }),
        Match.objectLike({ HttpMethod: 'POST', ResourcePath: '/~1v1~1runs', ThrottlingRateLimit: 0.5, ThrottlingBurstLimit: 1 }),
      ],
    });
  });

  it('refuses a throttle without a positive rate or burst', () => {
    expect(() => standalone({ throttling: { rateLimit: 0, burstLimit: 10 } })).toThrow(ConfigurationError);
    expect(() => standalone({ startRunThrottling: { rateLimit: 1, burstLimit: 0 } })).toThrow(ConfigurationError);
  });
});
