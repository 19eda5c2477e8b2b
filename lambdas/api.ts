/**
 * Lambda entry point of the API: ONE function behind every route of the API Gateway REST API
 * (Lambda proxy integration, payload format 1.0). It translates the event into an `ApiRequest`,
 * lets the shared router validate it and call the core (shared/api), and returns the response
 * (JSON, or `application/problem+json` for every error). Authentication happened before: API
 * Gateway's IAM authorization (SigV4) on every method; the caller's ARN scopes idempotency keys.
 * Source: https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html
 */
import { createApiHandler, type ApiHandler, type ApiRequest } from '../shared/api/router';
import { apiDeps } from './adapters/api-aws';
import { logger, withLambdaContext } from './adapters/logging';

/** The fields of a REST API proxy event (payload 1.0) this handler reads. */
export interface ApiGatewayProxyEvent {
  /** The resource template, e.g. `/v1/runs/{runId}`. */
  resource: string;
  /** The request path, e.g. `/v1/runs/abc` (with a custom domain it may carry the base path). */
  path: string;
  httpMethod: string;
  headers: Record<string, string | undefined> | null;
  queryStringParameters: Record<string, string | undefined> | null;
  /** Every value of each query parameter (REST API proxy events carry both forms). */
  multiValueQueryStringParameters?: Record<string, string[] | undefined> | null;
  /** Decoded path parameters. */
  pathParameters: Record<string, string | undefined> | null;
  body: string | null;
  isBase64Encoded: boolean;
  requestContext: {
    stage: string;
    /** The full path as requested, e.g. `/prod/v1/runs/abc`. */
    path: string;
    domainName?: string;
    requestId?: string;
    identity: { userArn?: string | null; caller?: string | null; accountId?: string | null };
  };
}

/** A proxy integration result. */
export interface ApiGatewayProxyResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
}

/**
 * The router's request for a proxy event: the path rebuilt from the resource template and the
 * path parameters (independent of stages and custom-domain base paths), the base URL for links
 * from the domain and the part of `requestContext.path` before the route, the principal from the
 * IAM identity.
 */
export function toApiRequest(event: ApiGatewayProxyEvent): ApiRequest {
  const params = event.pathParameters ?? {};
  const path = event.resource.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const fullPath = event.requestContext.path ?? '';
  const basePath = fullPath.endsWith(event.path) ? fullPath.slice(0, fullPath.length - event.path.length) : `/${event.requestContext.stage}`;
  const headers = event.headers ?? {};
  const host = event.requestContext.domainName ?? headers.Host ?? headers.host ?? 'localhost';
  const identity = event.requestContext.identity;
  return {
    method: event.httpMethod,
    path,
    query: event.queryStringParameters ?? {},
    repeatedQuery: Object.entries(event.multiValueQueryStringParameters ?? {})
      .filter(([, values]) => (values?.length ?? 0) > 1)
      .map(([name]) => name),
    headers,
    ...(event.body !== null && { body: event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body }),
    principal: identity.userArn ?? identity.caller ?? identity.accountId ?? 'anonymous',
    baseUrl: `https://${host}${basePath}`,
  };
}

/** A proxy handler around a router. */
export function createApiGatewayHandler(handleApi: ApiHandler): (event: ApiGatewayProxyEvent) => Promise<ApiGatewayProxyResult> {
  return async (event) => {
    const response = await handleApi(toApiRequest(event));
    return { statusCode: response.status, headers: response.headers, body: response.body, isBase64Encoded: false };
  };
}

const handleApi = createApiHandler(apiDeps, {
  onInternalError: (error, request) => logger.error('API request failed', { method: request.method, path: request.path, error: error as Error }),
});

export const handler = withLambdaContext(createApiGatewayHandler(handleApi) as (event: unknown) => Promise<ApiGatewayProxyResult>);
