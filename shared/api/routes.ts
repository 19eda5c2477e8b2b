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
  HealthSchema,
  IdempotencyKeySchema,
  MessagePageSchema,
  MessagesQuerySchema,
  OpenApiDocumentSchema,
  RunPageSchema,
  RunsQuerySchema,
  RunStatusSchema,
  RunSummarySchema,
} from './schemas';

/** Operation ids (also the OpenAPI `operationId`s). */
export type OperationId = 'createRun' | 'listRuns' | 'getRun' | 'cancelRun' | 'listRunMessages' | 'createCorpus' | 'getCorpus' | 'getHealth' | 'getOpenApi';

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

/** One route of the API. */
export interface RouteSpec {
  operationId: OperationId;
  /**
   * `none`: answered without authentication (no SigV4 on AWS, no bearer token locally); only routes
   * that tell nothing about runs or corpora (health, the OpenAPI document). @default the API's auth
   */
  auth?: 'none';
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
        GetRun: {
          operationId: 'getRun',
          parameters: { runId: '$response.body#/runId' },
          description: 'The status (and, once done, the result) of the started run.',
        },
        ListRunMessages: { operationId: 'listRunMessages', parameters: { runId: '$response.body#/runId' }, description: "The started run's messages." },
        StreamRunEvents: {
          operationId: 'streamRunEvents',
          parameters: { runId: '$response.body#/runId' },
          description: "The started run's live events (local server only).",
        },
      },
    },
    problems: [400, 404, 409, 413, 415, 422],
  },
  {
    operationId: 'listRuns',
    method: 'GET',
    path: '/v1/runs',
    summary: 'The runs, newest first, paged',
    description:
      "The workflow's executions (Step Functions ListExecutions on AWS; the state directory's execution registry locally), " +
      "newest first, each with its status and times; follow `nextCursor`. `GET /v1/runs/{runId}` has a run's progress and result.",
    pathParams: {},
    query: RunsQuerySchema,
    headers: {},
    // No OpenAPI link to the listed runs: a link names one value (`#/runs/0/runId`), which an empty page has not.
    success: { status: 200, schema: RunPageSchema, description: 'One page of runs.' },
    problems: [400],
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
        StreamRunEvents: {
          operationId: 'streamRunEvents',
          parameters: { runId: '$response.body#/runId' },
          description: "The run's events (local server only; a finished run's replay, then the stream closes).",
        },
      },
    },
    problems: [400, 404],
  },
  {
    operationId: 'cancelRun',
    method: 'POST',
    path: '/v1/runs/{runId}/cancel',
    summary: 'Cancel a running run',
    description:
      "Stops the run's execution (Step Functions StopExecution on AWS; the local engine's abort locally): it ends ABORTED " +
      '(error `RunCancelled`). Its state (messages, KAR steps, chunk cache) is kept, so it can be resumed as a killed run. ' +
      'Idempotent: an ABORTED run answers 202 again; a run that ended otherwise (SUCCEEDED, FAILED, TIMED_OUT) is 409. No body.',
    pathParams: { runId: RunIdSchema },
    headers: {},
    success: {
      status: 202,
      schema: RunSummarySchema,
      description: 'The run is stopped (ABORTED), or had been.',
      links: { GetRun: { operationId: 'getRun', parameters: { runId: '$response.body#/runId' }, description: 'The cancelled run.' } },
    },
    problems: [400, 404, 409],
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
      links: {
        GetCorpus: {
          operationId: 'getCorpus',
          parameters: { corpusId: '$response.body#/corpusId' },
          description: 'The files of the created corpus (uploaded so far).',
        },
      },
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
  {
    operationId: 'getHealth',
    method: 'GET',
    path: '/v1/health',
    auth: 'none',
    summary: 'Whether the API answers (no authentication)',
    description: 'Answers `{"status": "ok", "version": …}` without reading any storage; needs no credentials and tells nothing about runs or corpora.',
    pathParams: {},
    headers: {},
    success: { status: 200, schema: HealthSchema, description: 'The API answers.' },
    problems: [],
  },
  {
    operationId: 'getOpenApi',
    method: 'GET',
    path: '/v1/openapi.json',
    auth: 'none',
    summary: 'This OpenAPI document (no authentication)',
    description: 'The OpenAPI 3.1 document of the API as JSON: the same document docs/openapi.yaml holds (shared/api/openapi.ts generates both).',
    pathParams: {},
    headers: {},
    success: { status: 200, schema: OpenApiDocumentSchema, description: 'The OpenAPI document.' },
    problems: [],
  },
];

/** The routes answered without authentication (`auth: "none"`). */
export const PUBLIC_ROUTES: readonly RouteSpec[] = API_ROUTES.filter((route) => route.auth === 'none');
