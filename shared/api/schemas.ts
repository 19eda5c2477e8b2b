/**
 * The API's request and response schemas (zod 4). One source for three uses:
 * - validation at the edge (shared/api/router.ts: requests are parsed with these schemas; unknown
 *   fields are rejected by `.strict()`; every string, array and number is bounded);
 * - the OpenAPI document (shared/api/openapi.ts converts them with `z.toJSONSchema`; docs/openapi.yaml
 *   is generated from it and a test keeps the committed file up to date);
 * - the API Gateway request models (infra/api.ts converts the request bodies to JSON Schema draft-04).
 *
 * Units: sizes in bytes, times as ISO-8601 strings, tokens of the project tokenizer (o200k_base).
 */
import { z } from 'zod';
import { RunOptionsSchema } from '../config';
import { MAX_DOCUMENT_BYTES } from '../text';
import { RunIdSchema, type PrepareEvent } from '../pipeline/state';
import type { ChunkFailure, Citation, KarStep, Message, RetryReport, RunResult, SkippedDocument } from '../types';
import { EXECUTION_STATUSES } from './ports';

/** Schema metadata of the registries below: the component name in the OpenAPI document. */
export interface SchemaMeta {
  id: string;
  description?: string;
}

/** Request schemas (converted with `io: "input"`: fields with defaults are optional). */
export const requestRegistry = z.registry<SchemaMeta>();
/** Response schemas (converted with `io: "output"`). */
export const responseRegistry = z.registry<SchemaMeta>();

// ---------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------

/** Largest request body the API reads: 1 MiB (API Gateway's own limit is 10 MB). */
export const MAX_BODY_BYTES = 1_048_576;
/** Largest execution input Step Functions accepts: 256 KiB (262,144 bytes of UTF-8). */
export const MAX_EXECUTION_INPUT_BYTES = 262_144;
/** Longest question, characters (as the Prepare task's own bound). */
export const MAX_QUESTION_CHARS = 8000;
/** Most corpus keys one run may list (larger corpora: a prefix or a corpus id). */
export const MAX_RUN_KEYS = 1000;
/** Longest object key or prefix, characters (S3 allows 1,024 bytes). */
export const MAX_KEY_CHARS = 1024;
/** Most files of one `POST /v1/corpora`. */
export const MAX_CORPUS_FILES = 1000;
/** Longest file path inside a corpus, characters. */
export const MAX_FILE_PATH_CHARS = 512;
/**
 * Largest file one upload URL accepts: MAX_DOCUMENT_BYTES (500 MiB), the largest document the corpus
 * readers can decode (one JavaScript string), on AWS and locally alike. S3 itself would take 5 GiB in
 * one PUT, but such a file could never be read.
 */
export const MAX_FILE_BYTES = MAX_DOCUMENT_BYTES;
/** Validity of upload URLs, seconds: default 900 (15 minutes), 60 to 3,600. */
export const DEFAULT_UPLOAD_EXPIRY_SECONDS = 900;
/** Messages per page: default 20, at most 100. */
export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;
/** Longest `Idempotency-Key`, characters. */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/**
 * Key prefixes of the bucket that hold the service's own data; a corpus never points into them.
 * `runs/`: the workflow's files; `api/`: the API's records; `cache/`: ingestion's chunk cache and
 * corpus summaries (shared/pipeline/ingest.ts).
 */
export const RESERVED_PREFIXES = ['runs/', 'api/', 'cache/'] as const;

/** Where a corpus id's files live in the bucket. */
export const corpusPrefix = (corpusId: string): string => `corpora/${corpusId}/`;

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

/** Corpus ids as ingestion accepts them (shared/pipeline/ingest.ts `CorpusIdSchema`). */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A corpus id: its files are the objects under `corpora/<id>/`. */
export const CorpusIdSchema = z
  .string()
  .regex(ID_PATTERN, 'a corpus id is 1-128 characters of A-Z a-z 0-9 . _ - (starting with a letter or digit)')
  .describe('Corpus id: its files are the objects under `corpora/<id>/` of the project bucket.');

/** What a key-like value is: an object key, a corpus prefix, or a file path inside a corpus. */
type KeyKind = 'key' | 'prefix' | 'path';

/** One rule of {@link keyProblem}: a value matching `bad` is refused with `problem`. */
interface KeyRule {
  bad: RegExp;
  problem: string;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Characters no key may hold (control characters, backslash): the one rule JSON Schema states positively. */
// oxlint-disable-next-line no-control-regex -- control characters are exactly what this rule forbids.
const KEY_FORBIDDEN_CHARACTERS = /[\u0000-\u001f\u007f\\]/;

/**
 * The rules of a key, prefix or path, in the order they are checked. The one implementation of them:
 * {@link keyProblem} applies them, and {@link keyLike} states them in the JSON Schema of the API
 * (docs/openapi.yaml, the API Gateway request models) as `pattern` / `not: {pattern}`, so a value the
 * document allows is one the API accepts.
 */
function keyRules(kind: KeyKind): KeyRule[] {
  const rules: KeyRule[] = [
    { bad: /^[A-Za-z][A-Za-z0-9+.-]*:\/\//, problem: 'must be a key inside the project bucket, not a URI (no other bucket is ever read)' },
    { bad: /^\//, problem: 'must not start with "/"' },
    { bad: KEY_FORBIDDEN_CHARACTERS, problem: 'must not contain control characters or "\\"' },
    // An empty, "." or ".." segment; a prefix may end with "/" (its last, empty segment is allowed).
    {
      bad: kind === 'prefix' ? /(?:^|\/)\.{0,2}\/|(?:^|\/)\.{1,2}$/ : /(?:^|\/)\.{0,2}(?:\/|$)/,
      problem: 'must not contain empty, "." or ".." path segments',
    },
  ];
  if (kind !== 'path') {
    for (const reserved of RESERVED_PREFIXES) {
      // A key inside the reserved prefix; a prefix also must not be the start of one ("ru" lists runs/).
      const starts = kind === 'prefix' ? Array.from({ length: reserved.length - 1 }, (_, n) => reserved.slice(0, n + 1)) : [];
      const alternatives = [`${escapeRegExp(reserved)}`, ...starts.map((start) => `${escapeRegExp(start)}$`)];
      rules.push({ bad: new RegExp(`^(?:${alternatives.join('|')})`), problem: `must not point into ${reserved} (the service's own data)` });
    }
  }
  return rules;
}

/** Why a key or prefix cannot be used, or undefined (the first of {@link keyRules} it breaks). */
export function keyProblem(key: string, kind: KeyKind): string | undefined {
  return keyRules(kind).find((rule) => rule.bad.test(key))?.problem;
}

/**
 * A key, prefix or path of the bucket: non-empty (one issue for an empty value, not one per rule),
 * bounded, and without the problems of {@link keyProblem}. Its JSON Schema carries the same rules:
 * the forbidden characters as a `pattern`, the others as `not: {pattern}`.
 */
const keyLike = (kind: KeyKind, max: number) =>
  z
    .string()
    .min(1, { error: `${kind} must not be empty`, abort: true })
    .max(max, { error: `${kind} must be at most ${max} characters` })
    .superRefine((value, ctx) => {
      const problem = keyProblem(value, kind);
      if (problem) ctx.addIssue({ code: 'custom', message: `${kind} ${problem}` });
    })
    .meta({
      pattern: `^[^${KEY_FORBIDDEN_CHARACTERS.source.slice(1, -1)}]*$`,
      allOf: keyRules(kind)
        .filter((rule) => rule.bad !== KEY_FORBIDDEN_CHARACTERS)
        .map((rule) => ({ not: { pattern: rule.bad.source.replace(/\\\//g, '/') } })),
    });

/**
 * Object schemas whose validation requires exactly one of their (optional) properties, with a
 * refine that JSON Schema cannot carry; {@link apiJsonSchemaOverride} states it in JSON Schema.
 */
const EXACTLY_ONE_PROPERTY = new WeakSet<z.ZodType>();

/**
 * The `override` of every `z.toJSONSchema` call that documents the API (docs/openapi.yaml, the API
 * Gateway request models of infra/api.ts): an object of {@link EXACTLY_ONE_PROPERTY} becomes an
 * `anyOf` of one-property objects (each `required`, `additionalProperties: false`, so at most one
 * branch can match), the form JSON Schema tools generate valid values for (a `oneOf` of `required`
 * lists or `minProperties`/`maxProperties` made schemathesis 4.32 pair a header test with an invalid
 * body). The refine keeps the clear message at validation time.
 * Source: https://zod.dev/json-schema (override)
 */
export function apiJsonSchemaOverride(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  if (!EXACTLY_ONE_PROPERTY.has(ctx.zodSchema as z.ZodType)) return;
  const schema = ctx.jsonSchema;
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  schema.anyOf = Object.entries(properties).map(([name, property]) => ({ type: 'object', properties: { [name]: property }, required: [name], additionalProperties: false }));
  delete schema.type;
  delete schema.properties;
  delete schema.additionalProperties;
}

/** What a run reads: a corpus id, a prefix or a list of keys of the project bucket (exactly one). */
export const CorpusRefSchema = z
  .object({
    id: CorpusIdSchema.optional(),
    prefix: keyLike('prefix', MAX_KEY_CHARS).optional().describe('Every object whose key starts with this prefix (not `runs/`, `api/`, `cache/`).'),
    keys: z
      .array(keyLike('key', MAX_KEY_CHARS))
      .min(1)
      .max(MAX_RUN_KEYS)
      .optional()
      .describe('Object keys of the project bucket.'),
  })
  .strict()
  .refine((c) => [c.id, c.prefix, c.keys].filter((v) => v !== undefined).length === 1, 'corpus needs exactly one of id, prefix or keys')
  .describe('The corpus: exactly one of `id`, `prefix` or `keys`, always inside the project bucket.');
EXACTLY_ONE_PROPERTY.add(CorpusRefSchema);

export type CorpusRef = z.infer<typeof CorpusRefSchema>;

/**
 * The workflow's corpus (the Prepare event's `corpus`) of a validated corpus reference: an id is
 * the prefix `corpora/<id>/`. Used by the API (shared/api/core.ts) and by job files
 * (shared/pipeline/jobs.ts), so both resolve a corpus the same way.
 */
export function resolveCorpusRef(ref: CorpusRef): PrepareEvent['corpus'] {
  if (ref.id !== undefined) return { prefix: corpusPrefix(ref.id) };
  if (ref.prefix !== undefined) return { prefix: ref.prefix };
  return { keys: [...(ref.keys ?? [])] };
}

const IsoTime = z.string().describe('ISO-8601 time');
const Url = z.string().describe('Absolute URL');

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/**
 * A pattern matching any character that is not ECMAScript white space or a line terminator (the
 * characters `String.prototype.trim` removes, ECMA-262 sections 12.2 and 12.3), spelled out because
 * `\S` differs between regex engines (Python's, which API testers use, keeps U+FEFF).
 */
const NOT_ONLY_WHITESPACE = '[^\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';

/** `POST /v1/runs` body. */
export const CreateRunRequestSchema = z
  .object({
    question: z
      .string()
      .trim()
      .min(1, 'question must not be empty')
      .max(MAX_QUESTION_CHARS, `question must be at most ${MAX_QUESTION_CHARS} characters`)
      // The trim in JSON Schema: at least one character that String.prototype.trim keeps.
      .meta({ pattern: NOT_ONLY_WHITESPACE }),
    corpus: CorpusRefSchema,
    options: RunOptionsSchema.optional().describe('Run options (README, "Configuration reference"); every field optional.'),
  })
  .strict()
  .register(requestRegistry, { id: 'CreateRunRequest', description: 'Start a question-answering run.' });

export type CreateRunRequest = z.infer<typeof CreateRunRequestSchema>;

/**
 * An integer query parameter from `min` to `max`: every failure (empty, not a number, a fraction,
 * out of range) gives the one message saying what is expected.
 */
const integerParameter = (name: string, min: number, max: number) => {
  const error = `${name} must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

/** The one message of an invalid `cursor`. */
const CURSOR_ERROR = 'cursor must be the nextCursor of a previous page of this run';

/** `GET /v1/runs/{runId}/messages` query (numbers arrive as strings and are converted first). */
export const MessagesQuerySchema = z
  .object({
    round: integerParameter('round', 1, 10).optional().describe('Only messages of this round (1-based).'),
    limit: integerParameter('limit', 1, MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT).describe('Messages per page.'),
    cursor: z
      .string()
      .min(1, { error: CURSOR_ERROR, abort: true })
      .max(512, { error: CURSOR_ERROR, abort: true })
      .regex(/^[A-Za-z0-9_-]+$/, CURSOR_ERROR)
      .optional()
      .describe('`nextCursor` of the previous page.'),
  })
  .strict();

export type MessagesQuery = z.infer<typeof MessagesQuerySchema>;

/** One file of `POST /v1/corpora`. */
export const CorpusFileRequestSchema = z
  .object({
    path: keyLike('path', MAX_FILE_PATH_CHARS).describe('Path of the file inside the corpus, e.g. `notes/2021.txt` (also its document id).'),
    size: z
      .number()
      .int()
      .min(0)
      .max(MAX_FILE_BYTES, { error: `a file may have at most ${MAX_FILE_BYTES} bytes (500 MiB), the largest document the corpus readers decode` })
      .optional().describe('Size in bytes; when given, the upload must have exactly this size.'),
    contentType: z
      .string()
      .max(255)
      .regex(/^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(?:\s*;\s*[A-Za-z0-9!#$&^_.+-]+=[A-Za-z0-9!#$&^_.+-]+)*$/, 'contentType must be a media type such as text/plain')
      .optional()
      .describe('When given, the upload must send this Content-Type.'),
  })
  .strict();

/** `POST /v1/corpora` body. */
export const CreateCorpusRequestSchema = z
  .object({
    files: z
      .array(CorpusFileRequestSchema)
      .min(1)
      .max(MAX_CORPUS_FILES)
      .refine((files) => new Set(files.map((f) => f.path)).size === files.length, 'file paths must be unique')
      // JSON Schema cannot say "unique by path"; uniqueItems says the part it can (no repeated file).
      .meta({ uniqueItems: true, description: 'The files, each path once.' }),
    expiresInSeconds: z.number().int().min(60).max(3600).default(DEFAULT_UPLOAD_EXPIRY_SECONDS).describe('Validity of the upload URLs, seconds.'),
  })
  .strict()
  .register(requestRegistry, { id: 'CreateCorpusRequest', description: 'Create a corpus and get one upload URL per file.' });

export type CreateCorpusRequest = z.infer<typeof CreateCorpusRequestSchema>;

const IDEMPOTENCY_KEY_ERROR = `Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters (no leading or trailing space)`;
/** The `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header): printable ASCII; one issue per invalid key. */
export const IdempotencyKeySchema = z
  .string()
  .min(1, { error: IDEMPOTENCY_KEY_ERROR, abort: true })
  .max(MAX_IDEMPOTENCY_KEY_CHARS, { error: IDEMPOTENCY_KEY_ERROR, abort: true })
  .regex(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/, IDEMPOTENCY_KEY_ERROR);

// ---------------------------------------------------------------------------------------------
// Responses: the domain shapes of shared/types.ts
// ---------------------------------------------------------------------------------------------

const QuoteSchema = z.object({
  documentId: z.string(),
  start: z.number().int().describe('UTF-16 offset into the document, inclusive'),
  end: z.number().int().describe('UTF-16 offset into the document, exclusive'),
  text: z.string(),
});

/** A scored message (shared/types.ts `Message`). */
export const MessageSchema = z
  .object({
    id: z.string().describe('`r<round>-c<chunkIndex>`'),
    round: z.number().int(),
    chunkIndex: z.number().int(),
    score: z.number().int().min(0).max(100).describe('Relevance score 0-100'),
    evidence: z.string(),
    tokens: z.number().int().describe('Tokens of `evidence`'),
    quotes: z.array(QuoteSchema),
    sources: z.array(z.string()),
  })
  .register(responseRegistry, { id: 'Message', description: 'Evidence one seeking agent extracted from one chunk in one round.' });

const RoleUsageSchema = z.object({
  calls: z.number().int(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  modelMs: z.number().optional().describe('Milliseconds spent waiting for model calls, summed over the calls (absent for the extractive reader)'),
});
const UsageSchema = z.object({ seeker: RoleUsageSchema, reasoner: RoleUsageSchema });

const KarStepSchema = z.object({
  round: z.number().int(),
  k: z.number().int(),
  messagesUsed: z.number().int(),
  evidenceTokens: z.number().int(),
  outcome: z.enum(['answered', 'refused']),
  forced: z.boolean().optional(),
});

const CitationSchema = z.object({
  messageId: z.string(),
  chunkIndex: z.number().int(),
  round: z.number().int(),
  score: z.number().int(),
  documentId: z.string(),
  start: z.number().int(),
  end: z.number().int(),
  quote: z.string(),
});

const SkippedDocumentSchema = z.object({ documentId: z.string(), reason: z.string() });

const ChunkFailureSchema = z.object({ chunk: z.number().int(), round: z.number().int(), error: z.string(), message: z.string() });

const RetryReportSchema = z
  .object({
    total: z.number().int(),
    byRole: z.object({ seeker: z.number().int(), reasoner: z.number().int() }),
    byError: z.record(z.string(), z.number().int()),
  })
  .describe('Transient model errors, each retried by the workflow');

/** The final result of a run (shared/types.ts `RunResult`). */
export const RunResultSchema = z
  .object({
    runId: z.string(),
    question: z.string(),
    answer: z.string().describe('The answer, or exactly "NO ANSWER"'),
    answerable: z.boolean(),
    citations: z.array(CitationSchema),
    trace: z.array(KarStepSchema).describe('One entry per knowledge-accumulating reasoning step'),
    usage: UsageSchema,
    rounds: z.number().int(),
    chunks: z.number().int(),
    poolSize: z.number().int(),
    skipped: z.array(SkippedDocumentSchema),
    failedChunks: z.array(z.number().int()).describe('Chunks whose seeking agent failed permanently in the last round'),
    chunkFailures: z.array(ChunkFailureSchema).describe('One entry per failedChunks entry: the error that failed it'),
    retries: RetryReportSchema,
    warnings: z.array(z.string()),
  })
  .register(responseRegistry, { id: 'RunResult', description: 'Answer, citations, KAR trace and usage of a finished run.' });

// Compile-time checks: the response schemas describe exactly the domain types.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const schemasMatchTypes: [
  Equals<z.infer<typeof MessageSchema>, Message>,
  Equals<z.infer<typeof KarStepSchema>, KarStep>,
  Equals<z.infer<typeof CitationSchema>, Citation>,
  Equals<z.infer<typeof SkippedDocumentSchema>, SkippedDocument>,
  Equals<z.infer<typeof ChunkFailureSchema>, ChunkFailure>,
  Equals<z.infer<typeof RetryReportSchema>, RetryReport>,
  Equals<z.infer<typeof RunResultSchema>, RunResult>,
] = [true, true, true, true, true, true, true];
void schemasMatchTypes;

// ---------------------------------------------------------------------------------------------
// Responses of the API
// ---------------------------------------------------------------------------------------------

const ExecutionStatusSchema = z
  .enum(EXECUTION_STATUSES)
  .describe('Status of the run\'s Step Functions execution');

const RunLinksSchema = z.object({ self: Url, messages: Url });

/** `202` of `POST /v1/runs`. */
export const CreateRunResponseSchema = z
  .object({
    runId: RunIdSchema,
    status: ExecutionStatusSchema,
    links: RunLinksSchema,
  })
  .register(responseRegistry, { id: 'CreateRunResponse', description: 'The run was started (or, for a repeated Idempotency-Key, had been).' });

export type CreateRunResponse = z.infer<typeof CreateRunResponseSchema>;

/** Progress of a run while (and after) it runs. */
export const RunProgressSchema = z.object({
  phase: z.enum(['preparing', 'seeking', 'reasoning', 'finished']),
  chunks: z.number().int().nullable().describe('Chunks of the corpus; null until Prepare is done'),
  tokens: z.number().int().nullable().describe('Tokens of all chunks; null until Prepare is done'),
  rounds: z
    .array(z.object({ round: z.number().int(), sought: z.number().int().describe('Chunks sought so far'), total: z.number().int() }))
    .describe('Seeking progress per round that has started'),
  karSteps: z
    .array(KarStepSchema.extend({ seq: z.number().int() }))
    .describe('Knowledge-accumulating reasoning steps so far'),
});

/** `200` of `GET /v1/runs/{runId}`. */
export const RunStatusSchema = z
  .object({
    runId: RunIdSchema,
    status: ExecutionStatusSchema,
    startedAt: IsoTime.optional(),
    stoppedAt: IsoTime.optional(),
    question: z.string().optional().describe('Once Prepare is done'),
    progress: RunProgressSchema,
    result: RunResultSchema.optional().describe('When status is SUCCEEDED'),
    error: z.object({ name: z.string(), message: z.string() }).optional().describe('When the run failed'),
    links: RunLinksSchema,
  })
  .register(responseRegistry, { id: 'RunStatus', description: 'Status, progress and (when finished) the result of a run.' });

export type RunStatus = z.infer<typeof RunStatusSchema>;
export type RunProgress = z.infer<typeof RunProgressSchema>;

/** `200` of `GET /v1/runs/{runId}/messages`. */
export const MessagePageSchema = z
  .object({
    runId: RunIdSchema,
    round: z.number().int().nullable().describe('The round asked for; null for all rounds'),
    messages: z.array(MessageSchema).describe('In pool order: score descending, then chunk, then round'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
    links: z.object({ self: Url, next: Url.optional() }),
  })
  .register(responseRegistry, { id: 'MessagePage', description: 'One page of a run\'s scored messages.' });

export type MessagePageResponse = z.infer<typeof MessagePageSchema>;

/** `201` of `POST /v1/corpora`. */
export const CreateCorpusResponseSchema = z
  .object({
    corpusId: CorpusIdSchema,
    prefix: z.string().describe('`corpora/<corpusId>/`'),
    uploads: z.array(
      z.object({
        path: z.string(),
        key: z.string(),
        method: z.literal('PUT'),
        url: Url,
        headers: z.record(z.string(), z.string()).describe('Send exactly these headers with the PUT'),
        expiresAt: IsoTime,
      }),
    ),
    links: z.object({ self: Url }),
  })
  .register(responseRegistry, { id: 'CreateCorpusResponse', description: 'The new corpus and one upload URL per file.' });

export type CreateCorpusResponse = z.infer<typeof CreateCorpusResponseSchema>;

/** `200` of `GET /v1/corpora/{corpusId}`. */
export const CorpusSchema = z
  .object({
    corpusId: CorpusIdSchema,
    prefix: z.string(),
    createdAt: IsoTime.optional().describe('When created through POST /v1/corpora'),
    files: z.array(
      z.object({
        path: z.string(),
        key: z.string(),
        size: z.number().int().describe('Bytes'),
        ingested: z.boolean().describe('Whether ingestion has counted this file (tokens are null until then)'),
        tokens: z.number().int().nullable(),
        chars: z.number().int().nullable(),
        skipped: z.string().optional().describe('Why ingestion will not chunk this file (binary, invalid UTF-8, empty)'),
      }),
    ),
    pending: z.array(z.string()).describe('Paths announced at creation and not uploaded yet'),
    totals: z.object({
      files: z.number().int(),
      bytes: z.number().int(),
      tokens: z.number().int().nullable().describe('Null until every file is ingested'),
    }),
    links: z.object({ self: Url }),
  })
  .register(responseRegistry, { id: 'Corpus', description: 'The files of a corpus, their sizes and (once ingested) token counts.' });

export type CorpusResponse = z.infer<typeof CorpusSchema>;

/** An `application/problem+json` body (RFC 9457). */
export const ProblemSchema = z
  .object({
    type: z.string().describe('Problem type URI (`about:blank` or `tag:extagents,2026:<name>`)'),
    title: z.string(),
    status: z.number().int().min(400).max(599).optional(),
    detail: z.string(),
    instance: z.string().optional(),
    errors: z
      .array(
        z.object({
          detail: z.string(),
          pointer: z.string().optional().describe('JSON Pointer into the body (RFC 6901), e.g. `/corpus/keys/0`'),
          parameter: z.string().optional().describe('Query or path parameter'),
          header: z.string().optional(),
        }),
      )
      .optional()
      .describe('Every validation problem found'),
  })
  .register(responseRegistry, { id: 'Problem', description: 'An error (RFC 9457 problem details).' });

export type Problem = z.infer<typeof ProblemSchema>;
