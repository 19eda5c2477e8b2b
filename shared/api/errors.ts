/**
 * The errors of the HTTP API (shared/api): each maps to one HTTP status in shared/api/problem.ts.
 * The workflow never throws them; its errors are in shared/errors.ts.
 */
import { ExtAgentsError, InvalidInputError, NotFoundError } from '../errors';

/** Where one problem of a rejected API request lies. */
export interface RequestIssue {
  /** `body` (then `name` is a JSON Pointer, RFC 6901, e.g. `/corpus/keys/0`), `query`, `path` or `header`. */
  location: 'body' | 'query' | 'path' | 'header';
  /** JSON Pointer into the body, or the parameter / header name. */
  name: string;
  /** What is wrong, in plain words. */
  detail: string;
}

/** An API request that fails validation (HTTP 400); lists every issue found. */
export class RequestValidationError extends InvalidInputError {
  readonly issues: RequestIssue[];

  constructor(message: string, issues: RequestIssue[], options?: { cause?: unknown }) {
    super(message, options);
    this.issues = issues;
  }
}

/**
 * A run request whose options the deployment's model cannot run (HTTP 422: well-formed and within
 * the schema, but e.g. `options.chunkTokens` larger than the model's context holds). `issues` point
 * at each option (`/options/chunkTokens`).
 */
export class UnfitRunOptionsError extends InvalidInputError {
  readonly issues: RequestIssue[];

  constructor(message: string, issues: RequestIssue[]) {
    super(message);
    this.issues = issues;
  }
}

/** An API request whose body exceeds the size limit (HTTP 413). */
export class PayloadTooLargeError extends InvalidInputError {}

/** An API request whose body is not `application/json` (HTTP 415). */
export class UnsupportedMediaTypeError extends InvalidInputError {}

/** An `Idempotency-Key` reused with a different request (HTTP 409). */
export class IdempotencyConflictError extends ExtAgentsError {}

/** A request without valid credentials (HTTP 401; the local API server's bearer token). */
export class UnauthorizedError extends ExtAgentsError {}

/**
 * A run request whose corpus has nothing to read: no object under the corpus id or prefix, or a
 * listed key that does not exist (HTTP 404: the request is well-formed, what it names is missing).
 * `issues` point at the corpus field (`/corpus/id`, `/corpus/prefix`, `/corpus/keys/<i>`).
 */
export class MissingCorpusError extends NotFoundError {
  readonly issues: RequestIssue[];

  constructor(message: string, issues: RequestIssue[]) {
    super(message);
    this.issues = issues;
  }
}
