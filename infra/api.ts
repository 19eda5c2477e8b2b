/**
 * The ExtAgents HTTP API on API Gateway (REST API): one Lambda function (lambdas/api.ts, proxy
 * integration) behind every route of the route table (shared/api/routes.ts), which also drives
 * the router and the OpenAPI document, so the three cannot drift.
 *
 * Locked down:
 * - IAM (SigV4) authorization on every method (`AuthorizationType.IAM`): callers need
 *   `execute-api:Invoke` on the API (grant it with {@link ExtAgentsApi.grantInvoke}); but the routes
 *   the route table marks `auth: "none"` (`GET /v1/health`, `GET /v1/openapi.json`), which read no
 *   storage and tell nothing about runs or corpora (acknowledged for cdk-nag and checkov below).
 * - Stage throttling (steady rate and burst for every method) and a tighter limit on
 *   `POST /v1/runs`, which starts executions that call models.
 * - Access logs (JSON, standard fields) to their own log group; execution logs at ERROR; X-Ray.
 * - Request validation: a validator checking parameters and bodies, with models of the request
 *   bodies generated from the handlers' zod schemas (JSON Schema draft-04, as API Gateway takes).
 *   API Gateway's own errors (validation, authorization, throttling, unknown routes) answer
 *   `application/problem+json` too (gateway responses).
 * - Least privilege of the function: StartExecution and ListExecutions on the workflow,
 *   DescribeExecution and StopExecution on its executions (no other state machine's); read of the run table; read of `runs/*`, `corpora/*`, `cache/corpora/*` (ingestion
 *   summaries); put of
 *   `corpora/*` (the presigned upload URLs carry this permission) and read / put of `api/*`.
 *
 * Sources: https://docs.aws.amazon.com/apigateway/latest/developerguide/permissions.html (IAM),
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-method-request-validation.html,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-gatewayResponse-definition.html
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { z } from 'zod';
import { ConfigurationError } from '../shared/errors';
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPES } from '../shared/api/problem';
import { API_ROUTES } from '../shared/api/routes';
import { requestRegistry } from '../shared/api/schemas';
import { exactlyOneJsonSchemaOverride } from '../shared/validation';
import type { ModelQuota } from '../shared/types';
import { ExtAgentsFunction } from './extagents-function';
import { grantObjectRead, grantObjectWrite } from './grants';
import { acknowledge, acknowledgeRule } from './nag';

/** Requests per second and burst of a throttle. */
export interface ThrottleSettings {
  /** Steady-state requests per second. */
  readonly rateLimit: number;
  /** Burst (token bucket size), requests. */
  readonly burstLimit: number;
}

/** Stage-wide throttling by default: 20 requests/s, burst 40. */
export const DEFAULT_API_THROTTLING: ThrottleSettings = { rateLimit: 20, burstLimit: 40 };
/** `POST /v1/runs` by default: 2 requests/s, burst 5 (each starts an execution that calls models). */
export const DEFAULT_START_RUN_THROTTLING: ThrottleSettings = { rateLimit: 2, burstLimit: 5 };
/** Name of the deployed stage (part of the URL). */
export const API_STAGE_NAME = 'prod';

/** Properties of {@link ExtAgentsApi}. */
export interface ExtAgentsApiProps {
  /** The project bucket (corpora, runs, API records). */
  readonly bucket: s3.IBucket;
  /** The run table (progress, KAR steps, messages). */
  readonly table: dynamodb.ITable;
  /** The workflow the API starts. */
  readonly stateMachine: sfn.IStateMachine;
  /** Retention of the function's and the access logs' log groups. @default one month */
  readonly logRetention?: logs.RetentionDays;
  /** Stage throttling. @default DEFAULT_API_THROTTLING */
  readonly throttling?: ThrottleSettings;
  /** Throttling of `POST /v1/runs`. @default DEFAULT_START_RUN_THROTTLING */
  readonly startRunThrottling?: ThrottleSettings;
  /** `POWERTOOLS_SERVICE_NAME` of the function's logs. @default "extagents" */
  readonly serviceName?: string;
  /** The workflow's model spec (`MODEL_SPEC`): prices a run's estimate, so `maxCostUsd` over an ingested corpus is a 422 up front. @default none (Prepare checks the limit) */
  readonly modelSpec?: string;
  /** The deployment's quota of the seeking model (`SEEK_QUOTA_*`): a run it cannot carry over an ingested corpus is a 422 up front. @default none (Prepare checks the run's own) */
  readonly seekQuota?: ModelQuota;
}

/** The API Gateway REST API of ExtAgents with its Lambda function. */
export class ExtAgentsApi extends Construct {
  /** The REST API. */
  public readonly restApi: apigw.RestApi;
  /** The function behind every route. */
  public readonly handler: ExtAgentsFunction;
  /** The stage's access log group. */
  public readonly accessLogGroup: logs.LogGroup;
  /** The stage URL, e.g. `https://abc123.execute-api.us-east-1.amazonaws.com/prod/`. */
  public readonly url: string;

  constructor(scope: Construct, id: string, props: ExtAgentsApiProps) {
    super(scope, id);
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const throttling = checkThrottle('throttling', props.throttling ?? DEFAULT_API_THROTTLING);
    const startRunThrottling = checkThrottle('startRunThrottling', props.startRunThrottling ?? DEFAULT_START_RUN_THROTTLING);

    this.handler = new ExtAgentsFunction(this, 'Handler', {
      handler: 'api',
      // API Gateway waits at most 29 s for an integration by default.
      sizing: { memorySize: 512, timeout: Duration.seconds(29) },
      environment: {
        TABLE_NAME: props.table.tableName,
        BUCKET_NAME: props.bucket.bucketName,
        STATE_MACHINE_ARN: props.stateMachine.stateMachineArn,
        POWERTOOLS_SERVICE_NAME: props.serviceName ?? 'extagents',
        NODE_OPTIONS: '--enable-source-maps',
        ...(props.modelSpec !== undefined && { MODEL_SPEC: props.modelSpec }),
        ...(props.seekQuota?.requestsPerMinute !== undefined && { SEEK_QUOTA_REQUESTS_PER_MINUTE: String(props.seekQuota.requestsPerMinute) }),
        ...(props.seekQuota?.tokensPerMinute !== undefined && { SEEK_QUOTA_TOKENS_PER_MINUTE: String(props.seekQuota.tokensPerMinute) }),
      },
      logRetention,
      concurrency: {
        boundBy: `Invoked only by this API: stage throttling (${throttling.rateLimit} requests/s, burst ${throttling.burstLimit}) and requests of at most 29 s bound it to about rate x 29 executions.`,
      },
    });
    props.stateMachine.grantStartExecution(this.handler);
    // GET /v1/runs: ListExecutions takes the state machine's ARN.
    props.stateMachine.grant(this.handler, 'states:ListExecutions');
    // POST /v1/runs/{runId}/cancel: StopExecution of this workflow's executions only.
    props.stateMachine.grantExecution(this.handler, 'states:DescribeExecution', 'states:StopExecution');
    props.table.grantReadData(this.handler);
    for (const pattern of ['runs/*', 'corpora/*', 'cache/corpora/*', 'api/*']) grantObjectRead(props.bucket, this.handler, pattern);
    for (const pattern of ['corpora/*', 'api/*']) grantObjectWrite(props.bucket, this.handler, pattern);

    this.accessLogGroup = new logs.LogGroup(this, 'AccessLogs', { retention: logRetention, removalPolicy: RemovalPolicy.DESTROY });
    this.restApi = new apigw.RestApi(this, 'RestApi', {
      description: 'ExtAgents API (docs/API.md, docs/openapi.yaml): runs and corpora, IAM (SigV4) authorization',
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      // Execution logs need the account's API Gateway CloudWatch role; CDK creates and keeps it.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      defaultMethodOptions: { authorizationType: apigw.AuthorizationType.IAM },
      deployOptions: {
        stageName: API_STAGE_NAME,
        throttlingRateLimit: throttling.rateLimit,
        throttlingBurstLimit: throttling.burstLimit,
        methodOptions: {
          // A method's own settings replace the stage's for it: repeat the logging settings.
          '/v1/runs/POST': {
            throttlingRateLimit: startRunThrottling.rateLimit,
            throttlingBurstLimit: startRunThrottling.burstLimit,
            loggingLevel: apigw.MethodLoggingLevel.ERROR,
            dataTraceEnabled: false,
            metricsEnabled: true,
          },
        },
        accessLogDestination: new apigw.LogGroupLogDestination(this.accessLogGroup),
        accessLogFormat: apigw.AccessLogFormat.jsonWithStandardFields({
          caller: true,
          httpMethod: true,
          ip: true,
          protocol: true,
          requestTime: true,
          resourcePath: true,
          responseLength: true,
          status: true,
          user: true,
        }),
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        // Request and response bodies (questions, evidence) stay out of the execution logs.
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: true,
      },
    });
    this.url = this.restApi.url;

    const validator = this.restApi.addRequestValidator('RequestValidator', {
      requestValidatorName: 'parameters-and-body',
      validateRequestBody: true,
      validateRequestParameters: true,
    });
    // One permission for the whole API (scopePermissionToMethod: false), which also covers the
    // console's test invocations, so allowTestInvoke has nothing to add.
    const integration = new apigw.LambdaIntegration(this.handler, { proxy: true, scopePermissionToMethod: false });
    for (const route of API_ROUTES) {
      const resource = this.restApi.root.resourceForPath(route.path);
      const requestParameters: Record<string, boolean> = {};
      for (const name of Object.keys(route.pathParams)) requestParameters[`method.request.path.${name}`] = true;
      for (const name of Object.keys(route.query?.shape ?? {})) requestParameters[`method.request.querystring.${name}`] = false;
      for (const name of Object.keys(route.headers)) requestParameters[`method.request.header.${name}`] = false;
      let requestModels: Record<string, apigw.IModel> | undefined;
      if (route.body) {
        const modelName = requestRegistry.get(route.body)?.id;
        if (!modelName) throw new ConfigurationError(`The body schema of ${route.operationId} is not registered`);
        requestModels = {
          'application/json': this.restApi.addModel(`${modelName}Model`, {
            modelName,
            contentType: 'application/json',
            description: `${modelName} (generated from shared/api/schemas.ts)`,
            schema: requestBodyModel(route.body),
          }),
        };
      }
      const method = resource.addMethod(route.method, integration, {
        operationName: route.operationId,
        authorizationType: route.auth === 'none' ? apigw.AuthorizationType.NONE : apigw.AuthorizationType.IAM,
        requestValidator: validator,
        requestParameters,
        ...(requestModels && { requestModels }),
      });
      if (route.auth === 'none') {
        acknowledge(method, {
          nag: ['AwsSolutions-APIG4', 'AwsSolutions-COG4'],
          checkov: ['CKV_AWS_59'],
          reason: `${route.method} ${route.path} answers without authentication by design (route table: auth "none"): it reads no storage and returns nothing about runs or corpora (${route.summary}); the stage throttling bounds it.`,
        });
      }
    }

    for (const [type, response] of GATEWAY_PROBLEMS) {
      this.restApi.addGatewayResponse(`Problem${type.responseType}`, {
        type,
        ...(response.status !== undefined && { statusCode: String(response.status) }),
        responseHeaders: { 'Content-Type': `'${PROBLEM_CONTENT_TYPE}'` },
        templates: { 'application/json': problemTemplate(response) },
      });
    }

    acknowledge(this.restApi.deploymentStage, {
      checkov: ['CKV_AWS_120'],
      reason:
        'No stage cache: run status, messages and results change while a run progresses, so a cached GET would answer stale progress; POSTs are not cacheable.',
    });
    acknowledgeRule(
      this.restApi,
      'AwsSolutions-APIG3',
      'No AWS WAF web ACL: every method requires IAM (SigV4) authorization and the stage is throttled; attach a web ACL per deployment if the account uses WAF.',
    );
    acknowledgeRule(
      this.restApi,
      'AwsSolutions-COG4',
      'Methods use IAM (SigV4) authorization, not a Cognito user pool authorizer (the API serves AWS principals, not end users).',
    );
    acknowledgeRule(
      this.restApi,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      'The account-level role API Gateway uses to write execution logs; AWS maintains its managed policy.',
    );
  }

  /** Allow a principal to call every route of the API's stage (`execute-api:Invoke`). */
  grantInvoke(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['execute-api:Invoke'],
      resourceArns: [this.restApi.arnForExecuteApi('*', '/*', API_STAGE_NAME)],
    });
  }
}

function checkThrottle(name: string, settings: ThrottleSettings): ThrottleSettings {
  if (!(settings.rateLimit > 0) || !Number.isInteger(settings.burstLimit) || settings.burstLimit < 1) {
    throw new ConfigurationError(`${name}: rateLimit must be > 0 and burstLimit a positive integer (got ${JSON.stringify(settings)})`);
  }
  return settings;
}

// ---------------------------------------------------------------------------------------------
// Request models
// ---------------------------------------------------------------------------------------------

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A request body's zod schema as an API Gateway model: JSON Schema draft-04 (`io: "input"`, so
 * fields with defaults are optional), in CDK's `JsonSchema` shape (`$schema` -> `schema`,
 * `$ref` -> `ref`, `$id` -> `id`; CDK renders them back). Refinements zod cannot express in
 * JSON Schema (e.g. "exactly one of id, prefix, keys") are left to the handler.
 */
export function requestBodyModel(schema: z.ZodType): apigw.JsonSchema {
  const converted = z.toJSONSchema(schema, { target: 'draft-04', io: 'input', unrepresentable: 'throw', override: exactlyOneJsonSchemaOverride }) as JsonValue;
  return toCdkJsonSchema(converted) as apigw.JsonSchema;
}

function toCdkJsonSchema(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(toCdkJsonSchema);
  if (value === null || typeof value !== 'object') return value;
  const renamed: Record<string, string> = { $schema: 'schema', $ref: 'ref', $id: 'id', $defs: 'definitions' };
  const out: { [key: string]: JsonValue } = {};
  for (const [key, child] of Object.entries(value)) {
    const name = renamed[key] ?? key;
    if (name === 'properties' || name === 'definitions' || name === 'patternProperties') {
      out[name] = Object.fromEntries(Object.entries(child as Record<string, JsonValue>).map(([k, v]) => [k, toCdkJsonSchema(v)]));
    } else {
      out[name] = typeof child === 'object' ? toCdkJsonSchema(child) : child;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Gateway responses as problem+json
// ---------------------------------------------------------------------------------------------

interface GatewayProblem {
  status?: number;
  type: string;
  title: string;
}

/**
 * API Gateway's own errors as RFC 9457 problems. A gateway response template supports only
 * `$context` substitution (no VTL), so `detail` is `$context.error.messageString` (a quoted JSON
 * string); the request id locates the details in the execution log. DEFAULT_4XX / DEFAULT_5XX
 * cover several statuses, so their body leaves `status` out (it is optional in RFC 9457).
 */
const GATEWAY_PROBLEMS: ReadonlyArray<[apigw.ResponseType, GatewayProblem]> = [
  [apigw.ResponseType.BAD_REQUEST_BODY, { status: 400, type: PROBLEM_TYPES.validation, title: 'Invalid request' }],
  [apigw.ResponseType.BAD_REQUEST_PARAMETERS, { status: 400, type: PROBLEM_TYPES.validation, title: 'Invalid request' }],
  [apigw.ResponseType.UNAUTHORIZED, { status: 401, type: 'about:blank', title: 'Unauthorized' }],
  [apigw.ResponseType.ACCESS_DENIED, { status: 403, type: 'about:blank', title: 'Forbidden' }],
  [apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, { status: 403, type: 'about:blank', title: 'Forbidden' }],
  [apigw.ResponseType.INVALID_SIGNATURE, { status: 403, type: 'about:blank', title: 'Forbidden' }],
  [apigw.ResponseType.EXPIRED_TOKEN, { status: 403, type: 'about:blank', title: 'Forbidden' }],
  [apigw.ResponseType.REQUEST_TOO_LARGE, { status: 413, type: 'about:blank', title: 'Content Too Large' }],
  [apigw.ResponseType.UNSUPPORTED_MEDIA_TYPE, { status: 415, type: 'about:blank', title: 'Unsupported Media Type' }],
  [apigw.ResponseType.THROTTLED, { status: 429, type: 'about:blank', title: 'Too Many Requests' }],
  [apigw.ResponseType.QUOTA_EXCEEDED, { status: 429, type: 'about:blank', title: 'Too Many Requests' }],
  [apigw.ResponseType.INTEGRATION_TIMEOUT, { status: 504, type: 'about:blank', title: 'Gateway Timeout' }],
  [apigw.ResponseType.DEFAULT_4XX, { type: 'about:blank', title: 'Request rejected by API Gateway' }],
  [apigw.ResponseType.DEFAULT_5XX, { type: 'about:blank', title: 'API Gateway error' }],
];

function problemTemplate(problem: GatewayProblem): string {
  return (
    `{"type":"${problem.type}","title":"${problem.title}",` +
    `${problem.status === undefined ? '' : `"status":${problem.status},`}` +
    '"detail":$context.error.messageString,"requestId":"$context.requestId"}'
  );
}
