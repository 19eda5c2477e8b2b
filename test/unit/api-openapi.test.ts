/**
 * docs/openapi.yaml against the handlers' zod schemas and route table: the committed document is
 * the one generated from them (regenerate with `npx tsx local/generate/openapi.ts`), every route is in it,
 * and its request/response schemas are the zod schemas converted with z.toJSONSchema.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import { OPENAPI_PATH, renderOpenApiYaml } from '../../local/generate/openapi';
import { buildOpenApiDocument } from '../../shared/api/openapi';
import { API_ROUTES } from '../../shared/api/routes';
import { MessagesQuerySchema, MIN_CURSOR_CHARS, requestRegistry, responseRegistry } from '../../shared/api/schemas';
import { encodeCursor } from '../../shared/api/core';
import { exactlyOneJsonSchemaOverride } from '../../shared/validation';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const committed = parse(readFileSync(OPENAPI_PATH, 'utf8')) as JsonObject;

/** A zod schema converted as the document does, references resolved against the document's components. */
function expand(value: Json, schemas: JsonObject): Json {
  if (Array.isArray(value)) return value.map((v) => expand(v, schemas));
  if (value === null || typeof value !== 'object') return value;
  if (typeof value.$ref === 'string') {
    // Keywords beside a $ref (e.g. the description of the referring property) apply on top of it.
    const { $ref, ...siblings } = value;
    return { ...(expand(schemas[$ref.replace('#/components/schemas/', '')], schemas) as JsonObject), ...(expand(siblings, schemas) as JsonObject) };
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v, schemas)]));
}

function converted(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', override: exactlyOneJsonSchemaOverride }) as JsonObject;
  return rest;
}

describe('docs/openapi.yaml', () => {
  it('is the document generated from the route table and zod schemas (run `npx tsx local/generate/openapi.ts` after changing them)', () => {
    expect(committed).toEqual(buildOpenApiDocument());
    expect(readFileSync(OPENAPI_PATH, 'utf8')).toBe(renderOpenApiYaml());
  });

  it('is OpenAPI 3.1 and documents exactly the routes the router serves, with their operation ids', () => {
    expect(committed.openapi).toBe('3.1.0');
    const paths = committed.paths as Record<string, Record<string, JsonObject>>;
    const documented = Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => `${method.toUpperCase()} ${path} ${String(op.operationId)}`),
    );

    // plus the local server's event stream, marked local-only (API Gateway has no such route)
    expect(documented.sort()).toEqual(
      [...API_ROUTES.map((r) => `${r.method} ${r.path} ${r.operationId}`), 'GET /v1/runs/{runId}/events streamRunEvents'].sort(),
    );
    expect(paths['/v1/runs/{runId}/events'].get['x-extagents-local-only']).toBe(true);
    for (const route of API_ROUTES) expect((paths[route.path][route.method.toLowerCase()] as JsonObject)['x-extagents-local-only']).toBeUndefined();
  });

  it.each(API_ROUTES.map((r) => [r.operationId, r] as const))("%s: request and response schemas equal the handler's zod schemas", (_id, route) => {
    const schemas = (committed.components as JsonObject).schemas as JsonObject;
    const operation = (committed.paths as Record<string, Record<string, JsonObject>>)[route.path][route.method.toLowerCase()];
    const responses = operation.responses as Record<string, JsonObject>;

    const success = responses[String(route.success.status)].content as Record<string, JsonObject>;
    expect(expand(success['application/json'].schema, schemas)).toEqual(converted(route.success.schema, 'output'));
    expect(responseRegistry.get(route.success.schema)).toBeDefined();

    if (route.body) {
      const body = (operation.requestBody as JsonObject).content as Record<string, JsonObject>;
      expect(expand(body['application/json'].schema, schemas)).toEqual(converted(route.body, 'input'));
      expect(requestRegistry.get(route.body)).toBeDefined();
    } else {
      expect(operation.requestBody).toBeUndefined();
    }

    const parameters = (operation.parameters ?? []) as JsonObject[];
    expect(parameters.filter((p) => p.in === 'path').map((p) => p.name)).toEqual(Object.keys(route.pathParams));
    expect(parameters.filter((p) => p.in === 'query').map((p) => p.name)).toEqual(Object.keys(route.query?.shape ?? {}));
    expect(parameters.filter((p) => p.in === 'header').map((p) => p.name)).toEqual(Object.keys(route.headers));

    const common = route.auth === 'none' ? [429, 500] : [401, 403, 429, 500];
    for (const status of [...route.problems, ...common]) {
      const content = responses[String(status)].content as Record<string, JsonObject>;
      expect(content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
    }
    // A route without authentication declares no security requirement (and no 401); the others take the document's.
    expect(operation.security).toEqual(route.auth === 'none' ? [] : undefined);
    if (route.auth === 'none') expect(responses['401']).toBeUndefined();
  });

  it('lists the run list, the cancel, the health and the document itself, the last two without authentication', () => {
    const paths = committed.paths as Record<string, Record<string, JsonObject>>;

    expect(paths['/v1/runs'].get.operationId).toBe('listRuns');
    expect(paths['/v1/runs/{runId}/cancel'].post.operationId).toBe('cancelRun');
    expect(paths['/v1/health'].get.security).toEqual([]);
    expect(paths['/v1/openapi.json'].get.security).toEqual([]);
    expect(API_ROUTES.filter((r) => r.auth === 'none').map((r) => r.operationId)).toEqual(['getHealth', 'getOpenApi']);
  });

  it('declares the event stream per event (an object of SSE fields whose `data` is JSON), not as a bare string', () => {
    const events = (committed.paths as Record<string, Record<string, JsonObject>>)['/v1/runs/{runId}/events'].get;
    const content = ((events.responses as Record<string, JsonObject>)['200'].content as Record<string, JsonObject>)['text/event-stream'];
    const schema = content.schema as JsonObject;
    expect(schema.type).toBe('object');
    expect(schema.required).toEqual(['event', 'data']);
    const properties = schema.properties as Record<string, JsonObject>;
    expect(properties.event.enum).toEqual(['status', 'seek', 'sync', 'kar', 'end']);
    // one branch per event type, each saying what its data holds
    const branches = schema.oneOf as Array<{ properties: { event: { const: string }; data: JsonObject } }>;
    expect(branches.map((b) => b.properties.event.const)).toEqual(properties.event.enum);
    for (const branch of branches)
      expect(branch.properties.data).toMatchObject({ type: 'string', contentMediaType: 'application/json', contentSchema: { type: 'object' } });
    expect(new RegExp(properties.id.pattern as string).test('3f9a0c1d2e4b.8c1e5a7b9d20.12')).toBe(true);
  });

  it('links every created or read run to its reads (status, messages, events) and the created corpus to its read, each link to an operation of the document', () => {
    const operations = new Map<string, JsonObject>();
    for (const item of Object.values(committed.paths as Record<string, Record<string, JsonObject>>))
      for (const op of Object.values(item)) operations.set(String(op.operationId), op);
    const linksOf = (id: string): Record<string, JsonObject> => {
      const responses = operations.get(id)?.responses as Record<string, JsonObject>;
      const success = Object.entries(responses).find(([status]) => status.startsWith('2'))?.[1];
      return (success?.links ?? {}) as Record<string, JsonObject>;
    };
    const targets = (id: string): string[] =>
      Object.values(linksOf(id))
        .map((l) => String(l.operationId))
        .sort();
    expect(targets('createRun')).toEqual(['getRun', 'listRunMessages', 'streamRunEvents']);
    expect(targets('getRun')).toEqual(['listRunMessages', 'streamRunEvents']);
    expect(targets('createCorpus')).toEqual(['getCorpus']);
    for (const id of operations.keys()) {
      for (const link of Object.values(linksOf(id))) {
        const target = operations.get(String(link.operationId));
        expect(target).toBeDefined();
        const pathParams = ((target?.parameters ?? []) as JsonObject[]).filter((p) => p.in === 'path').map((p) => p.name);
        expect(Object.keys(link.parameters as JsonObject)).toEqual(pathParams);
      }
    }
  });

  it('declares `cursor` so that a value no cursor can be (`0`) is outside it, and the shortest issued cursor inside it; the server agrees', () => {
    const messages = (committed.paths as Record<string, Record<string, JsonObject>>)['/v1/runs/{runId}/messages'].get;
    const cursor = ((messages.parameters as JsonObject[]).find((p) => p.name === 'cursor')?.schema ?? {}) as {
      minLength: number;
      maxLength: number;
      pattern: string;
    };
    const documented = (value: string): boolean =>
      value.length >= cursor.minLength && value.length <= cursor.maxLength && new RegExp(cursor.pattern).test(value);
    const shortest = encodeCursor('run-0123456789abcdef0123456789abcdef', '0');
    expect(shortest).toHaveLength(MIN_CURSOR_CHARS);
    expect(cursor.minLength).toBe(MIN_CURSOR_CHARS);
    expect(documented(shortest)).toBe(true);
    expect(MessagesQuerySchema.safeParse({ limit: 1, cursor: shortest }).success).toBe(true);
    for (const value of ['0', 'abc', shortest.slice(1)]) {
      expect(documented(value)).toBe(false);
      expect(MessagesQuerySchema.safeParse({ limit: 1, cursor: value }).success).toBe(false);
    }
  });
});
