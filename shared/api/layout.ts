/**
 * Object keys the API keeps in the project bucket, beside the workflow's `runs/<runId>/…`
 * (shared/pipeline/layout.ts) and the uploaded `corpora/<id>/…`. None of them is ever read as a
 * corpus (`RESERVED_PREFIXES` in shared/api/schemas.ts).
 */

/** The first request of an idempotency key (`IdempotencyRecord`, shared/api/ports.ts). */
export const idempotencyRecordKey = (keyHash: string): string => `api/idempotency/${keyHash}.json`;

/** What `POST /v1/corpora` announced: `CorpusRecord` (shared/api/core.ts). */
export const corpusRecordKey = (corpusId: string): string => `api/corpora/${corpusId}.json`;
