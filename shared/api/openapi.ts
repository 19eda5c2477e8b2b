/**
 * The OpenAPI 3.1 document of the API, built from the route table (shared/api/routes.ts) and the
 * zod schemas the handlers validate with (shared/api/schemas.ts, converted by zod 4's
 * `z.toJSONSchema`, JSON Schema 2020-12 as OpenAPI 3.1 uses). docs/openapi.yaml is this document
 * written out by `npx tsx local/generate/openapi.ts`; test/unit/api-openapi.test.ts fails when the committed
 * file differs, so the document cannot drift from the handlers.
 * Source: https://spec.openapis.org/oas/v3.1.0
 */
import { z } from 'zod';
import { PROBLEM_CONTENT_TYPE } from './problem';
import { API_ROUTES, type RouteSpec } from './routes';
import { exactlyOneJsonSchemaOverride } from '../validation';
import { API_VERSION, requestRegistry, responseRegistry } from './schemas';
import { RUN_EVENT_REQUIRED, RUN_EVENT_TYPES, RUN_PHASES } from '../progress';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Where component schemas live in the document. */
const componentRef = (id: string): string => `#/components/schemas/${id}`;

/** Problem statuses every route may answer (authentication, authorization, throttling, failure). */
const COMMON_PROBLEMS: Record<number, string> = {
  401: 'Not authenticated (local server: missing or wrong bearer token).',
  403: 'Not authorized (AWS: missing or invalid SigV4 signature, or no execute-api:Invoke permission).',
  429: 'Throttled (AWS: stage or method throttling).',
  500: 'The request could not be completed.',
};

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: `errors` lists each problem (JSON Pointer into the body, parameter or header).',
  404: 'No such run or corpus.',
  409: 'POST /v1/runs: the Idempotency-Key was first used with a different request. POST /v1/runs/{runId}/cancel: the run has already ended (SUCCEEDED, FAILED, TIMED_OUT), or locally another process runs it.',
  413: 'The body exceeds 1 MiB.',
  415: 'The body is not sent as application/json.',
  422: "The run would cost more than `options.maxCostUsd` allows (estimated before any model call from the ingested corpus), or its model has no price: `estimate` says what was refused; or the stated quota of the model (`options.quotaRequestsPerMinute` / `quotaTokensPerMinute`, or the deployment's) cannot carry its seeks over the ingested corpus: `concurrency` holds the refused plan with its numbers; or (local server with a small-context model) `options.chunkTokens` is larger than the model's context holds: `errors` points at it.",
};

/** A schema converted for the document (no `$schema` / `$id`: the document sets the dialect). */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const converted = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'throw', override: exactlyOneJsonSchemaOverride }) as JsonObject;
  delete converted.$schema;
  delete converted.$id;
  return converted;
}

/** The component schemas of both registries, references between them as `#/components/schemas/<id>`. */
function componentSchemas(): JsonObject {
  const out: JsonObject = {};
  for (const [registry, io] of [
    [requestRegistry, 'input'],
    [responseRegistry, 'output'],
  ] as const) {
    const { schemas } = z.toJSONSchema(registry, {
      io,
      target: 'draft-2020-12',
      uri: componentRef,
      unrepresentable: 'throw',
      override: exactlyOneJsonSchemaOverride,
    }) as {
      schemas: Record<string, JsonObject>;
    };
    for (const [id, schema] of Object.entries(schemas)) {
      const { $schema: _dialect, $id: _id, ...rest } = schema;
      out[id] = rest;
    }
  }
  return out;
}

function idOf(schema: z.ZodType, registry: typeof requestRegistry): string {
  const meta = registry.get(schema);
  if (!meta) throw new Error(`Schema of the route table is not registered (${schema.description ?? 'no description'})`);
  return meta.id;
}

function isOptional(schema: z.ZodType): boolean {
  return schema.safeParse(undefined).success;
}

function problemResponse(description: string): JsonObject {
  return { description, content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: componentRef('Problem') } } } };
}

function operationOf(route: RouteSpec): JsonObject {
  const parameters: Json[] = [];
  for (const [name, schema] of Object.entries(route.pathParams)) {
    parameters.push({ name, in: 'path', required: true, schema: jsonSchemaOf(schema, 'input') });
  }
  if (route.query) {
    for (const [name, field] of Object.entries(route.query.shape as Record<string, z.ZodType>)) {
      const { description, ...schema } = jsonSchemaOf(field, 'input');
      parameters.push({ name, in: 'query', required: !isOptional(field), ...(description !== undefined && { description }), schema });
    }
  }
  for (const [name, header] of Object.entries(route.headers)) {
    parameters.push({ name, in: 'header', required: false, description: header.description, schema: jsonSchemaOf(header.schema, 'input') });
  }

  const responses: JsonObject = {
    [String(route.success.status)]: {
      description: route.success.description,
      ...(route.success.location && {
        headers: {
          Location: { description: 'URL of the created resource', schema: { type: 'string' } },
          ...(route.operationId === 'createRun' && {
            'Idempotent-Replayed': {
              description: '`true` when an earlier request with the same Idempotency-Key started the run',
              schema: { type: 'string', enum: ['true'] },
            },
          }),
        },
      }),
      content: { 'application/json': { schema: { $ref: componentRef(idOf(route.success.schema, responseRegistry)) } } },
      ...(route.success.links && { links: route.success.links as unknown as JsonObject }),
    },
  };
  for (const status of route.problems) responses[String(status)] = problemResponse(PROBLEM_DESCRIPTIONS[status] ?? 'Error.');
  for (const [status, description] of Object.entries(COMMON_PROBLEMS)) {
    // A route without authentication is never 401 (nor 403 for a missing signature).
    if (route.auth === 'none' && (status === '401' || status === '403')) continue;
    responses[status] = problemResponse(description);
  }

  return {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    // No security requirement: answered without SigV4 or a bearer token.
    ...(route.auth === 'none' && { security: [] }),
    ...(parameters.length > 0 && { parameters }),
    ...(route.body && {
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: componentRef(idOf(route.body, requestRegistry)) } } },
      },
    }),
    responses,
  };
}

/** Longest `Last-Event-ID` the event stream takes (characters); a longer one is 400. */
export const MAX_LAST_EVENT_ID_CHARS = 64;

/** Path of the local server's event stream (not in the route table: API Gateway has no such route). */
export const RUN_EVENTS_PATH = '/v1/runs/{runId}/events';

/** `data:` of one event: a JSON text whose object has at least these members (docs/API.md, "Live events"). */
function eventData(required: string[], properties: JsonObject = {}): JsonObject {
  return { type: 'string', contentMediaType: 'application/json', contentSchema: { type: 'object', required, properties } };
}

/**
 * The schema of ONE server-sent event of `GET /v1/runs/{runId}/events`, as an object of its fields
 * (`event`, `id`, `data`, `retry`). OpenAPI 3.1 says nothing of how a `text/event-stream` body maps
 * to a schema; OpenAPI 3.2 puts the per-event schema under `itemSchema`, and for 3.0/3.1 documents the
 * tools (schemathesis 4 among them) read `schema` of `text/event-stream` as that per-event schema:
 * they parse the stream into events and validate each one. A bare `{type: string}` there (what this
 * document said before) fails every event a real run sends, since an event is an object; this form
 * validates each event, and its `data` (`contentMediaType` / `contentSchema`) as the JSON object the
 * event type names. The document stays 3.1 (API Gateway and the other generated artifacts read 3.1).
 */
const RUN_EVENT_SCHEMA: JsonObject = {
  type: 'object',
  description: 'One server-sent event (the stream is a sequence of them; `retry:` and `: keep-alive` comment lines carry no event).',
  required: ['event', 'data'],
  properties: {
    id: {
      type: 'string',
      pattern: '^[0-9a-f]{12}\\.[0-9a-f]{12}\\.[1-9][0-9]*$',
      description: '`<epoch>.<run>.<n>`: the server process, a 12-hex-digit tag of the run, the event number from 1.',
    },
    event: {
      type: 'string',
      enum: [...RUN_EVENT_TYPES],
      description: "The progress event's `type` (shared/progress.ts; the vocabulary of the CLI's progress and the library's onProgress).",
    },
    data: { type: 'string', description: 'One JSON object; its members depend on `event` (docs/API.md, "Live events").' },
    retry: { type: 'integer', minimum: 0 },
  },
  oneOf: RUN_EVENT_TYPES.map((type) => ({
    properties: {
      event: { const: type },
      data: eventData([...RUN_EVENT_REQUIRED[type]], {
        ...(type === 'status' && { phase: { type: 'string', enum: [...RUN_PHASES] } }),
        ...(type === 'end' && { status: { type: 'string' } }),
      }),
    },
  })),
  examples: [{ id: '3f9a0c1d2e4b.8c1e5a7b9d20.7', event: 'seek', data: '{"round":1,"done":12,"failed":0,"total":40,"messages":3,"etaMs":41000}' }],
};

/**
 * `GET /v1/runs/{runId}/events`, served by `extagents serve` only (local/services/run-events.ts):
 * marked `x-extagents-local-only`; the deployed API is polled with `GET /v1/runs/{runId}`.
 */
function runEventsOperation(): JsonObject {
  const runId = API_ROUTES.find((r) => r.operationId === 'getRun')?.pathParams.runId;
  if (!runId) throw new Error('The route table has no getRun with a runId parameter');
  const responses: JsonObject = {
    '200': {
      description:
        'A text/event-stream (server-sent events). Each event has `id: <epoch>.<run>.<n>` (the server process, a 12-hex-digit tag of the run, the event number from 1), `event:` one of `status`, `seek`, `sync`, `kar`, `end`, ' +
        'and `data:` one JSON object (docs/API.md, "Live events"): the progress events of the CLI and the library\'s onProgress, `event:` their `type`. A finished run\'s stream always ends with `end`; the stream closes after it.',
      content: { 'text/event-stream': { schema: RUN_EVENT_SCHEMA } },
    },
    '400': problemResponse(PROBLEM_DESCRIPTIONS[400]),
    '404': problemResponse('No such run.'),
  };
  for (const [status, description] of Object.entries(COMMON_PROBLEMS)) responses[status] = problemResponse(description);
  return {
    operationId: 'streamRunEvents',
    summary: 'Live events of a run (server-sent events; local server only)',
    description:
      'Served by `extagents serve` only: the deployed API (API Gateway) has no streaming route; poll `GET /v1/runs/{runId}` there. ' +
      "Send the bearer token as the Authorization header (read the stream with fetch: the browser's EventSource cannot send headers). " +
      "With `Last-Event-ID` (an id of this server process and this run) only the later events come; any other id (another process or run, an event number this run never sent, a malformed id) replays the run's events from the start.",
    'x-extagents-local-only': true,
    parameters: [
      { name: 'runId', in: 'path', required: true, schema: jsonSchemaOf(runId, 'input') },
      {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        description: `The id of the last event received, to resume after it (at most ${MAX_LAST_EVENT_ID_CHARS} characters; a longer one is 400).`,
        schema: { type: 'string', maxLength: MAX_LAST_EVENT_ID_CHARS },
      },
    ],
    responses,
  };
}

/** The OpenAPI 3.1 document of the API (plain JSON values). */
export function buildOpenApiDocument(): JsonObject {
  const paths: JsonObject = {};
  for (const route of API_ROUTES) {
    const item = (paths[route.path] ?? {}) as JsonObject;
    item[route.method.toLowerCase()] = operationOf(route);
    paths[route.path] = item;
  }
  paths[RUN_EVENTS_PATH] = { get: runEventsOperation() };
  return {
    openapi: '3.1.0',
    info: {
      title: 'ExtAgents API',
      version: API_VERSION,
      description:
        'Question answering over corpora far larger than a context window (ExtAgents on AWS Step Functions). ' +
        'Deployed: API Gateway REST API with IAM (SigV4) authorization on every route but `GET /v1/health` and ' +
        '`GET /v1/openapi.json`. Locally: `extagents serve` with a bearer token (the same two routes need none). Errors are application/problem+json (RFC 9457). See docs/API.md.',
    },
    servers: [
      {
        url: 'https://{restApiId}.execute-api.{region}.amazonaws.com/prod',
        description: 'Deployed stack (output ApiUrl)',
        variables: { restApiId: { default: 'abc123' }, region: { default: 'us-east-1' } },
      },
      { url: 'http://127.0.0.1:8787', description: '`extagents serve` (local)' },
    ],
    security: [{ sigv4: [] }, { bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        sigv4: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'AWS Signature Version 4 for service `execute-api` (IAM authorization of API Gateway).',
          'x-amazon-apigateway-authtype': 'awsSigv4',
        },
        bearer: { type: 'http', scheme: 'bearer', description: '`extagents serve` only: the token it prints at start (or --token / EXTAGENTS_TOKEN).' },
      },
      schemas: componentSchemas(),
    },
  };
}
