/**
 * The HTTP edge of the API, independent of the transport: match a route of `API_ROUTES`, validate
 * path parameters, query, headers and the JSON body with the route's zod schemas (unknown fields
 * and parameters rejected, sizes bounded), call the core (shared/api/core.ts), and answer JSON or
 * `application/problem+json` (RFC 9457). API Gateway (lambdas/api.ts) and the local server
 * (local/services/serve.ts) translate their requests into an {@link ApiRequest} and write out the
 * {@link ApiResponse}.
 */
import type { z } from 'zod';
import { PayloadTooLargeError, RequestValidationError, UnsupportedMediaTypeError, type RequestIssue } from './errors';
import { ApiCore, type ApiDeps, type CallContext } from './core';
import { plainProblem, problemOf, problemResponse, type ApiResponse } from './problem';
import { buildOpenApiDocument } from './openapi';
import { API_ROUTES, type OperationId, type RouteSpec } from './routes';
import { API_VERSION, MAX_BODY_BYTES, type CreateCorpusRequest, type CreateRunRequest, type MessagesQuery, type RunsQuery } from './schemas';
import { issueDetail } from '../validation';

/** A request as the transports hand it over. */
export interface ApiRequest {
  /** HTTP method, any case. */
  method: string;
  /** Path below the API's base URL, without the query, e.g. `/v1/runs/abc` (percent-encoded as received). */
  path: string;
  /** Query parameters (the last value of a repeated one). */
  query: Record<string, string | undefined>;
  /** Names of query parameters given more than once (`limit=2&limit=3`): refused with a 400. */
  repeatedQuery?: readonly string[];
  /** Headers, any case. */
  headers: Record<string, string | undefined>;
  /** The body as text (UTF-8), when there is one. */
  body?: string;
  /** The authenticated caller (see `CallContext`). */
  principal: string;
  /** Base URL for links, without a trailing slash. */
  baseUrl: string;
}

/** Answers one request; never throws (every failure becomes a problem response). */
export type ApiHandler = (request: ApiRequest) => Promise<ApiResponse>;

/** Options of {@link createApiHandler}. */
export interface ApiHandlerOptions {
  /** Called with every error answered as 500 (to log it: the response does not carry it). */
  onInternalError?: (error: unknown, request: ApiRequest) => void;
}

interface CompiledRoute {
  spec: RouteSpec;
  pattern: RegExp;
  paramNames: string[];
}

const compiled: CompiledRoute[] = API_ROUTES.map((spec) => {
  const paramNames: string[] = [];
  const source = spec.path
    .split('/')
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      paramNames.push(param[1]);
      return '([^/]+)';
    })
    .join('/');
  return { spec, pattern: new RegExp(`^${source}$`), paramNames };
});

/** Validated inputs of one operation. */
interface Parsed {
  params: Record<string, string>;
  query: unknown;
  headers: Record<string, string | undefined>;
  body: unknown;
  /** The JSON body as sent, before its schema filled any default (undefined without a body). */
  sentBody: unknown;
}

type Operation = (core: ApiCore, parsed: Parsed, ctx: CallContext) => Promise<{ body: unknown; headers?: Record<string, string> }>;

/** The OpenAPI document, built once per process (it depends on nothing but the code). */
let openApiDocument: unknown;

const OPERATIONS: Record<OperationId, Operation> = {
  createRun: async (core, parsed, ctx) => {
    const body = parsed.body as CreateRunRequest;
    const { response, replayed } = await core.createRun(
      { ...body, options: givenOptions(body.options, parsed.sentBody) },
      parsed.headers['idempotency-key'],
      ctx,
    );
    return { body: response, headers: { location: response.links.self, ...(replayed && { 'idempotent-replayed': 'true' }) } };
  },
  listRuns: async (core, parsed, ctx) => ({ body: await core.listRuns(parsed.query as RunsQuery, ctx) }),
  getRun: async (core, parsed, ctx) => ({ body: await core.getRun(parsed.params.runId, ctx) }),
  cancelRun: async (core, parsed, ctx) => ({ body: await core.cancelRun(parsed.params.runId, ctx) }),
  listRunMessages: async (core, parsed, ctx) => ({ body: await core.listMessages(parsed.params.runId, parsed.query as MessagesQuery, ctx) }),
  createCorpus: async (core, parsed, ctx) => {
    const response = await core.createCorpus(parsed.body as CreateCorpusRequest, ctx);
    return { body: response, headers: { location: response.links.self } };
  },
  getCorpus: async (core, parsed, ctx) => ({ body: await core.getCorpus(parsed.params.corpusId, ctx) }),
  getHealth: () => Promise.resolve({ body: { status: 'ok', version: API_VERSION } }),
  // The document changes only with the code: a client may cache it for a while.
  getOpenApi: () => Promise.resolve({ body: (openApiDocument ??= buildOpenApiDocument()), headers: { 'cache-control': 'public, max-age=300' } }),
};

/**
 * Whether a request is for a route answered without authentication (`auth: "none"` in the route
 * table): the local server lets it through without a bearer token. Only an exact method and path
 * match counts (a 404 or 405 still needs the token).
 */
export function isPublicRequest(method: string, path: string): boolean {
  const upper = method.toUpperCase();
  return compiled.some((route) => route.spec.auth === 'none' && route.spec.method === upper && route.pattern.test(path));
}

/** Build the request handler of the API over the given ports. */
export function createApiHandler(deps: ApiDeps, options: ApiHandlerOptions = {}): ApiHandler {
  const core = new ApiCore(deps);
  return async (request) => {
    try {
      const method = request.method.toUpperCase();
      const candidates = compiled.filter((route) => route.pattern.test(request.path));
      if (candidates.length === 0) return problemResponse(plainProblem(404, `No route ${method} ${request.path}`));
      const route = candidates.find((r) => r.spec.method === method);
      if (!route) {
        const allow = candidates.map((r) => r.spec.method).join(', ');
        return problemResponse(plainProblem(405, `${method} is not allowed on ${request.path} (allowed: ${allow})`), { allow });
      }
      const parsed = parseRequest(route, request);
      const result = await OPERATIONS[route.spec.operationId](core, parsed, { principal: request.principal, baseUrl: request.baseUrl });
      return {
        status: route.spec.success.status,
        headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...result.headers },
        body: JSON.stringify(result.body),
      };
    } catch (error) {
      const problem = problemOf(error);
      if ((problem.status ?? 500) >= 500) options.onInternalError?.(error, request);
      return problemResponse(problem);
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/** Validate everything a route reads; one RequestValidationError lists every problem found. */
function parseRequest(route: CompiledRoute, request: ApiRequest): Parsed {
  const { spec } = route;
  const issues: RequestIssue[] = [];
  const headers = lowerCaseKeys(request.headers);

  const params: Record<string, string> = {};
  const values = route.pattern.exec(request.path)?.slice(1) ?? [];
  route.paramNames.forEach((name, i) => {
    let value: string;
    try {
      value = decodeURIComponent(values[i]);
    } catch {
      issues.push({ location: 'path', name, detail: 'not a valid percent-encoded value' });
      return;
    }
    const result = spec.pathParams[name].safeParse(value);
    if (result.success) params[name] = result.data;
    else issues.push(...zodIssues(result.error, 'path', name));
  });

  let query: unknown;
  for (const name of request.repeatedQuery ?? []) issues.push({ location: 'query', name, detail: 'given more than once: give one value' });
  const given = Object.entries(request.query).filter((entry): entry is [string, string] => entry[1] !== undefined);
  if (!spec.query) {
    for (const [name] of given) issues.push({ location: 'query', name, detail: `unknown query parameter "${name}"` });
  } else {
    const result = spec.query.safeParse(numbersFromText(spec.query, Object.fromEntries(given)));
    if (result.success) query = result.data;
    else issues.push(...zodIssues(result.error, 'query'));
  }

  const parsedHeaders: Record<string, string | undefined> = {};
  for (const [name, header] of Object.entries(spec.headers)) {
    const value = headers[name.toLowerCase()];
    if (value === undefined) continue;
    const result = header.schema.safeParse(value);
    if (result.success) parsedHeaders[name.toLowerCase()] = result.data;
    else issues.push(...result.error.issues.map((issue) => ({ location: 'header' as const, name, detail: issue.message })));
  }

  let body: unknown;
  let sentBody: unknown;
  if (spec.body) {
    const json = parseJsonBody(request.body, headers['content-type'], headers['content-encoding']);
    if (json.ok) {
      sentBody = json.value;
      const result = spec.body.safeParse(json.value);
      if (result.success) body = result.data;
      else issues.push(...zodIssues(result.error, 'body'));
    } else {
      issues.push({ location: 'body', name: '', detail: json.detail });
    }
  }

  if (issues.length > 0) {
    const summary = issues
      .slice(0, 5)
      .map((i) => `${i.location === 'body' ? i.name || '(body)' : i.name}: ${i.detail}`)
      .join('; ');
    throw new RequestValidationError(`Invalid request: ${summary}${issues.length > 5 ? `; and ${issues.length - 5} more` : ''}`, issues);
  }
  return { params, query, headers: parsedHeaders, body, sentBody };
}

/**
 * The run options a `POST /v1/runs` body gave, validated: the schema's parse fills every default
 * (chunkTokens 8,000, …), and those must not stand in for the server model's own defaults
 * (`ApiDeps.runOptionDefaults`: a small-context model's chunk size), so only the keys the caller sent
 * are kept. Undefined when the body had no options.
 */
function givenOptions(parsed: CreateRunRequest['options'], sent: unknown): CreateRunRequest['options'] {
  if (parsed === undefined) return undefined;
  const raw = (sent as { options?: unknown } | undefined)?.options;
  const keys = raw !== null && typeof raw === 'object' ? Object.keys(raw) : [];
  return Object.fromEntries(Object.entries(parsed).filter(([key]) => keys.includes(key))) as CreateRunRequest['options'];
}

/**
 * Parse a JSON body.
 * @throws PayloadTooLargeError over MAX_BODY_BYTES; UnsupportedMediaTypeError unless the content
 *   type is `application/json` (or `application/<x>+json`), UTF-8 or no charset.
 */
function parseJsonBody(
  text: string | undefined,
  contentType: string | undefined,
  contentEncoding?: string,
): { ok: true; value: unknown } | { ok: false; detail: string } {
  const bytes = Buffer.byteLength(text ?? '', 'utf8');
  if (bytes > MAX_BODY_BYTES) throw new PayloadTooLargeError(`The body is ${bytes} bytes; at most ${MAX_BODY_BYTES} are accepted`);
  const media = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const charset = /;\s*charset=("?)([^";]+)\1/i.exec(contentType ?? '')?.[2]?.toLowerCase();
  if (contentEncoding !== undefined && !/^\s*(identity)?\s*$/i.test(contentEncoding)) {
    throw new UnsupportedMediaTypeError(`Send the JSON body without a Content-Encoding (got ${JSON.stringify(contentEncoding)}, which is not decoded here)`);
  }
  if (!/^application\/(?:[\w.+-]+\+)?json$/.test(media) || (charset !== undefined && charset !== 'utf-8')) {
    throw new UnsupportedMediaTypeError(
      `Send the body as JSON with "Content-Type: application/json" (got ${contentType === undefined ? 'no Content-Type' : JSON.stringify(contentType)})`,
    );
  }
  if (text === undefined || text.trim() === '') return { ok: false, detail: 'a JSON body is required' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, detail: `the body is not valid JSON (${(error as Error).message})` };
  }
}

/** Query values are text: turn those of number-typed fields that look like integers into numbers. */
function numbersFromText(schema: z.ZodObject, query: Record<string, string>): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(query)) {
    const field = schema.shape[name] as z.ZodType | undefined;
    out[name] = field && baseType(field) === 'number' && /^-?\d{1,15}$/.test(value) ? Number(value) : value;
  }
  return out;
}

/** The type of a schema below optional/default/nullable wrappers. */
function baseType(schema: z.ZodType): string {
  let def = schema.def as { type: string; innerType?: z.ZodType };
  while ((def.type === 'optional' || def.type === 'default' || def.type === 'nullable') && def.innerType) {
    def = def.innerType.def as { type: string; innerType?: z.ZodType };
  }
  return def.type;
}

/** zod issues as request issues: JSON Pointers into the body, parameter names elsewhere. */
function zodIssues(error: z.ZodError, location: RequestIssue['location'], name?: string): RequestIssue[] {
  const out: RequestIssue[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        out.push({
          location,
          name: location === 'body' ? pointer([...path, key]) : key,
          detail: location === 'body' ? `unknown field "${key}"` : `unknown query parameter "${key}"`,
        });
      }
      continue;
    }
    const detail = issueDetail(issue);
    out.push({ location, name: location === 'body' ? pointer(path) : (name ?? path[0] ?? ''), detail });
  }
  return out;
}

/** A JSON Pointer (RFC 6901) of a path. */
function pointer(path: string[]): string {
  return path.map((p) => `/${p.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function lowerCaseKeys(headers: Record<string, string | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}
