/**
 * The API's routes: one table read by the router (shared/api/router.ts), the OpenAPI document
 * (shared/api/openapi.ts) and the API Gateway construct (infra/api.ts), so the three cannot drift.
 */
import type { z } from 'zod';
import { CorpusIdSchema } from '../corpus';
import { RunIdSchema } from '../pipeline/state';
import {
  CorpusSchema,
  CreateCorpusRequestSchema,
  CreateCorpusResponseSchema,
  CreateRunRequestSchema,
  CreateRunResponseSchema,
  IdempotencyKeySchema,
  MessagePageSchema,
  MessagesQuerySchema,
  RunStatusSchema,
} from './schemas';

/** Operation ids (also the OpenAPI `operationId`s). */
export type OperationId = 'createRun' | 'getRun' | 'listRunMessages' | 'createCorpus' | 'getCorpus';

/** One route of the API. */
/**
 * An OpenAPI link of a success response: the operation its body leads to, and where that operation's
 * parameters come from (runtime expressions such as `$response.body#/runId`), so clients and
 * stateful API testers (schemathesis) can follow a created resource to its reads.
 * Source: https://spec.openapis.org/oas/v3.1.0#link-object
 */
export interface RouteLink {
  /** An operation of the route table, or the local server's event stream (shared/api/openapi.ts). */
  operationId: OperationId | 'streamRunEvents';
  parameters: Record<string, string>;
  description: string;
}

export interface RouteSpec {
  operationId: OperationId;
  method: 'GET' | 'POST';
  /** Path template with `{name}` parameters, e.g. `/v1/runs/{runId}`. */
  path: string;
  summary: string;
  description: string;
  /** Schemas of the path parameters, by name. */
  pathParams: Record<string, z.ZodType<string>>;
  /** Schema of the query string (numbers are converted from their text first); none = no parameter allowed. */
  query?: z.ZodObject;
  /** Optional request headers the route reads, by canonical name. */
  headers: Record<string, { schema: z.ZodType<string>; description: string }>;
  /** Schema of the JSON body (POST). */
  body?: z.ZodType;
  success: { status: 200 | 201 | 202; schema: z.ZodType; description: string; location?: boolean; links?: Record<string, RouteLink> };
  /** Problem statuses this route may answer besides 401/403/429/500. */
  problems: number[];
}

/** The routes, in the order the documentation lists them. */
export const API_ROUTES: readonly RouteSpec[] = [
  {
    operationId: 'createRun',
    method: 'POST',
    path: '/v1/runs',
    summary: 'Start a question-answering run',
    description:
      'Starts the ExtAgents workflow over a corpus of the project bucket (a corpus id, a prefix or keys; never another bucket, ' +
      'never `runs/`, `api/` or `cache/`). With an `Idempotency-Key`, the same key and request start one execution, not two ' +
      '(the run id and execution name derive from the key); the same key with a different request is 409.',
    pathParams: {},
    headers: {
      'Idempotency-Key': {
        schema: IdempotencyKeySchema,
        description: 'Makes retries safe: 1-255 printable ASCII characters, scoped to the caller.',
      },
    },
    body: CreateRunRequestSchema,
    success: {
      status: 202,
      schema: CreateRunResponseSchema,
      description: 'Started (or, for a repeated Idempotency-Key, already started).',
      location: true,
      links: {
        GetRun: { operationId: 'getRun', parameters: { runId: '$response.body#/runId' }, description: 'The status (and, once done, the result) of the started run.' },
        ListRunMessages: { operationId: 'listRunMessages', parameters: { runId: '$response.body#/runId' }, description: "The started run's messages." },
        StreamRunEvents: { operationId: 'streamRunEvents', parameters: { runId: '$response.body#/runId' }, description: "The started run's live events (local server only)." },
      },
    },
    problems: [400, 404, 409, 413, 415, 422],
  },
  {
    operationId: 'getRun',
    method: 'GET',
    path: '/v1/runs/{runId}',
    summary: 'Status, progress and result of a run',
    description:
      'The execution status; progress per phase (chunks sought / total per round, KAR steps so far); when SUCCEEDED the ' +
      'answer, citations, trace and usage (`result`); when failed the error.',
    pathParams: { runId: RunIdSchema },
    headers: {},
    success: {
      status: 200,
      schema: RunStatusSchema,
      description: 'The run.',
      links: {
        ListRunMessages: { operationId: 'listRunMessages', parameters: { runId: '$response.body#/runId' }, description: "The run's messages." },
        StreamRunEvents: { operationId: 'streamRunEvents', parameters: { runId: '$response.body#/runId' }, description: "The run's events (local server only; a finished run's replay, then the stream closes)." },
      },
    },
    problems: [400, 404],
  },
  {
    operationId: 'listRunMessages',
    method: 'GET',
    path: '/v1/runs/{runId}/messages',
    summary: 'The scored messages of a run, paged',
    description: 'The pool in pool order (relevance score descending, then chunk, then round), optionally of one round; follow `nextCursor`.',
    pathParams: { runId: RunIdSchema },
    query: MessagesQuerySchema,
    headers: {},
    success: { status: 200, schema: MessagePageSchema, description: 'One page of messages.' },
    problems: [400, 404],
  },
  {
    operationId: 'createCorpus',
    method: 'POST',
    path: '/v1/corpora',
    summary: 'Create a corpus and get upload URLs',
    description:
      'Returns a new corpus id and one presigned PUT URL per file (`corpora/<corpusId>/<path>`); upload each file with ' +
      'exactly the returned headers, then start runs with `{"corpus": {"id": "<corpusId>"}}`.',
    pathParams: {},
    headers: {},
    body: CreateCorpusRequestSchema,
    success: {
      status: 201,
      schema: CreateCorpusResponseSchema,
      description: 'Created.',
      location: true,
      links: { GetCorpus: { operationId: 'getCorpus', parameters: { corpusId: '$response.body#/corpusId' }, description: 'The files of the created corpus (uploaded so far).' } },
    },
    problems: [400, 413, 415],
  },
  {
    operationId: 'getCorpus',
    method: 'GET',
    path: '/v1/corpora/{corpusId}',
    summary: 'Files, sizes and token counts of a corpus',
    description: 'Files uploaded so far with their sizes; token counts once ingestion has recorded them (null before).',
    pathParams: { corpusId: CorpusIdSchema },
    headers: {},
    success: { status: 200, schema: CorpusSchema, description: 'The corpus.' },
    problems: [400, 404],
  },
];
