/**
 * Errors as `application/problem+json` (RFC 9457, "Problem Details for HTTP APIs",
 * https://www.rfc-editor.org/rfc/rfc9457): `type` (a URI naming the problem type), `title` (the
 * same for every occurrence of a type), `status` (the HTTP status), `detail` (this occurrence, in
 * plain words), optionally `instance` and, for validation problems, the extension member `errors`
 * (each with a `pointer` into the body, a `parameter` or a `header`, as in RFC 9457 section 3).
 *
 * Problem types: `about:blank` when the HTTP status says it all (then `title` is the status phrase,
 * RFC 9457 section 4.2.1); otherwise a `tag:` URI (RFC 4151: a stable, non-resolvable identifier,
 * listed in docs/API.md).
 */
import { CostLimitExceededError, ExtAgentsError, InvalidInputError, NotFoundError, QuotaExceededError, RunNotCancellableError } from '../errors';
import {
  IdempotencyConflictError,
  MissingCorpusError,
  PayloadTooLargeError,
  RequestValidationError,
  UnauthorizedError,
  UnfitRunOptionsError,
  UnsupportedMediaTypeError,
  type RequestIssue,
} from './errors';
import type { Problem } from './schemas';

/** Media type of problem details (RFC 9457 section 3). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The API's own problem types. */
export const PROBLEM_TYPES = {
  /** The request fails the schema (body, query, path or header); `errors` lists each problem. */
  validation: 'tag:extagents,2026:validation-error',
  /** The request is well-formed but cannot be carried out (e.g. a key the store refuses). */
  invalidRequest: 'tag:extagents,2026:invalid-request',
  /** The run's corpus has nothing to read (no object under its id or prefix, a missing key); `errors` points at it. */
  corpusNotFound: 'tag:extagents,2026:corpus-not-found',
  /** The `Idempotency-Key` was first used with a different request. */
  idempotencyConflict: 'tag:extagents,2026:idempotency-conflict',
  /** The run's cost estimate is over its `options.maxCostUsd` (or its model has no price); `estimate` says what was refused. */
  costLimitExceeded: 'tag:extagents,2026:cost-limit-exceeded',
  /** The model's stated quota cannot carry the run's seeks (shared/quota.ts); `concurrency` holds the refused plan with its numbers. */
  quotaExceeded: 'tag:extagents,2026:quota-exceeded',
  /** The run's options are valid but the server's model cannot run them (a chunk size its context cannot hold); `errors` points at each option. */
  optionsUnfit: 'tag:extagents,2026:options-unfit-for-model',
  /** `POST /v1/runs/{runId}/cancel` of a run that has already ended (or, locally, that another process runs). */
  runNotCancellable: 'tag:extagents,2026:run-not-cancellable',
} as const;

/** An HTTP response as the API core returns it (the adapters write it out). */
export interface ApiResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The body, already serialized (JSON). */
  body: string;
}

/** Reason phrases of the statuses the API uses (RFC 9110 section 15). */
const STATUS_PHRASES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** A problem of type `about:blank`: the title is the status phrase. */
export function plainProblem(status: number, detail: string): Problem {
  return { type: 'about:blank', title: STATUS_PHRASES[status] ?? 'Error', status, detail };
}

/** The `errors` member of a problem: each issue with its JSON Pointer, parameter or header. */
function problemErrorsOf(issues: readonly RequestIssue[]): NonNullable<Problem['errors']> {
  return issues.map((issue) => ({
    detail: issue.detail,
    ...(issue.location === 'body' && { pointer: issue.name }),
    ...((issue.location === 'query' || issue.location === 'path') && { parameter: issue.name }),
    ...(issue.location === 'header' && { header: issue.name }),
  }));
}

/**
 * The problem an error stands for:
 *
 * | error | status | type |
 * |---|---|---|
 * | RequestValidationError | 400 | validation-error (with `errors`) |
 * | PayloadTooLargeError | 413 | about:blank |
 * | UnsupportedMediaTypeError | 415 | about:blank |
 * | CostLimitExceededError | 422 | cost-limit-exceeded (with `estimate`) |
 * | QuotaExceededError | 422 | quota-exceeded (with `concurrency`, the refused plan) |
 * | UnfitRunOptionsError | 422 | options-unfit-for-model (with `errors`) |
 * | other InvalidInputError | 400 | invalid-request |
 * | MissingCorpusError | 404 | corpus-not-found (with `errors`) |
 * | other NotFoundError | 404 | about:blank |
 * | IdempotencyConflictError | 409 | idempotency-conflict |
 * | RunNotCancellableError | 409 | run-not-cancellable |
 * | UnauthorizedError | 401 | about:blank |
 * | anything else | 500 | about:blank, generic detail (the cause is logged, never sent) |
 */
export function problemOf(error: unknown): Problem {
  if (error instanceof RequestValidationError) {
    return {
      type: PROBLEM_TYPES.validation,
      title: 'Invalid request',
      status: 400,
      detail: error.message,
      errors: problemErrorsOf(error.issues),
    };
  }
  if (error instanceof MissingCorpusError) {
    return {
      type: PROBLEM_TYPES.corpusNotFound,
      title: 'The corpus has no object to read',
      status: 404,
      detail: error.message,
      errors: problemErrorsOf(error.issues),
    };
  }
  if (error instanceof CostLimitExceededError) {
    return {
      type: PROBLEM_TYPES.costLimitExceeded,
      title: 'The run would cost more than maxCostUsd allows',
      status: 422,
      detail: error.message,
      ...(error.estimate && { estimate: error.estimate }),
    };
  }
  if (error instanceof QuotaExceededError) {
    return {
      type: PROBLEM_TYPES.quotaExceeded,
      title: "The model's quota cannot carry the run",
      status: 422,
      detail: error.message,
      ...(error.plan && { concurrency: error.plan }),
    };
  }
  if (error instanceof UnfitRunOptionsError) {
    return {
      type: PROBLEM_TYPES.optionsUnfit,
      title: "The server's model cannot run these options",
      status: 422,
      detail: error.message,
      errors: problemErrorsOf(error.issues),
    };
  }
  if (error instanceof PayloadTooLargeError) return plainProblem(413, error.message);
  if (error instanceof UnsupportedMediaTypeError) return plainProblem(415, error.message);
  if (error instanceof InvalidInputError) {
    return { type: PROBLEM_TYPES.invalidRequest, title: 'Request cannot be carried out', status: 400, detail: error.message };
  }
  if (error instanceof NotFoundError) return plainProblem(404, error.message);
  if (error instanceof IdempotencyConflictError) {
    return { type: PROBLEM_TYPES.idempotencyConflict, title: 'Idempotency key reused with a different request', status: 409, detail: error.message };
  }
  if (error instanceof RunNotCancellableError) {
    return { type: PROBLEM_TYPES.runNotCancellable, title: 'The run cannot be cancelled', status: 409, detail: error.message };
  }
  if (error instanceof UnauthorizedError) return plainProblem(401, error.message);
  const name = error instanceof ExtAgentsError ? ` (${error.name})` : '';
  return plainProblem(500, `The request could not be completed${name}; it is safe to retry with the same Idempotency-Key.`);
}

/** Serialize a problem as an `application/problem+json` response. */
export function problemResponse(problem: Problem, headers: Record<string, string> = {}): ApiResponse {
  return {
    status: problem.status ?? 500,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(problem),
  };
}
