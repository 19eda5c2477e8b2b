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
import { MAX_DOCUMENT_BYTES } from '../decode';
import { CorpusIdSchema, CorpusRefSchema, keyLike } from '../corpus';
import { QuestionSchema, RunIdSchema } from '../pipeline/state';
import { KAR_OUTCOMES, type ChunkFailure, type Citation, type KarStep, type Message, type RetryReport, type RunResult, type SkippedDocument } from '../types';
import { EXECUTION_STATUSES } from '../executions';
import { RUN_PHASES } from '../progress';

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
/** Version of the API: the OpenAPI document's `info.version`, and `version` of `GET /v1/health`. */
export const API_VERSION = '1.0.0';
/** Longest `Idempotency-Key`, characters. */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

const IsoTime = z.string().describe('ISO-8601 time');
const Url = z.string().describe('Absolute URL');

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/** `POST /v1/runs` body. */
export const CreateRunRequestSchema = z
  .object({
    question: QuestionSchema,
    corpus: CorpusRefSchema,
    options: RunOptionsSchema.optional().describe('Run options (docs/CONFIGURATION.md, "Configuration reference"); every field optional.'),
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
/**
 * Shortest cursor the API issues: base64url (no padding) of `<12 hex digits>.<position>` with a
 * position of at least one character, 14 bytes, is 19 characters (shared/api/core.ts encodeCursor).
 * Declared as `minLength`, so a string no cursor can be (`0`, `abc`) is outside the documented schema,
 * not a schema-valid value the server rejects.
 */
export const MIN_CURSOR_CHARS = 19;

/** `GET /v1/runs/{runId}/messages` query (numbers arrive as strings and are converted first). */
export const MessagesQuerySchema = z
  .object({
    round: integerParameter('round', 1, 10).optional().describe('Only messages of this round (1-based).'),
    limit: integerParameter('limit', 1, MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT).describe('Messages per page.'),
    cursor: z
      .string()
      .min(MIN_CURSOR_CHARS, { error: CURSOR_ERROR, abort: true })
      .max(512, { error: CURSOR_ERROR, abort: true })
      .regex(/^[A-Za-z0-9_-]+$/, CURSOR_ERROR)
      .optional()
      .describe(
        '`nextCursor` of the previous page. Opaque and bound to its run: only a `nextCursor` the server gave is valid; any other value is 400, even one of this length and alphabet.',
      ),
  })
  .strict();

export type MessagesQuery = z.infer<typeof MessagesQuerySchema>;

/** The one message of an invalid `cursor` of the run list. */
const RUNS_CURSOR_ERROR = 'cursor must be the nextCursor of a previous page of the run list';
/**
 * Longest run-list cursor: base64url of `<12 hex digits>.<position>`, where the position on AWS is
 * Step Functions' `nextToken` (at most 3,096 characters: ListExecutions), 4,148 characters at most.
 */
export const MAX_RUNS_CURSOR_CHARS = 4148;

/** `GET /v1/runs` query (numbers arrive as strings and are converted first). */
export const RunsQuerySchema = z
  .object({
    limit: integerParameter('limit', 1, MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT).describe('Runs per page.'),
    cursor: z
      .string()
      .min(MIN_CURSOR_CHARS, { error: RUNS_CURSOR_ERROR, abort: true })
      .max(MAX_RUNS_CURSOR_CHARS, { error: RUNS_CURSOR_ERROR, abort: true })
      .regex(/^[A-Za-z0-9_-]+$/, RUNS_CURSOR_ERROR)
      .optional()
      .describe('`nextCursor` of the previous page. Opaque: only a `nextCursor` the server gave for the run list is valid; any other value is 400.'),
  })
  .strict();

export type RunsQuery = z.infer<typeof RunsQuerySchema>;

/** One file of `POST /v1/corpora`. */
export const CorpusFileRequestSchema = z
  .object({
    path: keyLike('path', MAX_FILE_PATH_CHARS).describe('Path of the file inside the corpus, e.g. `notes/2021.txt` (also its document id).'),
    size: z
      .number()
      .int()
      .min(0)
      .max(MAX_FILE_BYTES, { error: `a file may have at most ${MAX_FILE_BYTES} bytes (500 MiB), the largest document the corpus readers decode` })
      .optional()
      .describe('Size in bytes; when given, the upload must have exactly this size.'),
    contentType: z
      .string()
      .max(255)
      .regex(
        /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(?:\s*;\s*[A-Za-z0-9!#$&^_.+-]+=[A-Za-z0-9!#$&^_.+-]+)*$/,
        'contentType must be a media type such as text/plain',
      )
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
    score: z
      .number()
      .int()
      .min(0)
      .max(100)
      .describe('Pool score 0-100: the seeking agent\'s score and the lexical prior combined by the run\'s ranking (docs/CONCEPTS.md, "Evidence and ranking")'),
    modelScore: z.number().int().min(0).max(100).optional().describe("The seeking agent's own relevance score 0-100"),
    prior: z.number().int().min(0).max(100).optional().describe("Lexical prior 0-100: the share of the question's weighted terms in the cited text"),
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
  throttleWaitMs: z
    .number()
    .optional()
    .describe('Milliseconds the adapter waited inside calls for a throttling server (HTTP 429, its Retry-After), summed; not part of modelMs'),
  cacheReadInputTokens: z.number().int().optional().describe('Input tokens read from the prompt cache (Bedrock prompt caching), summed'),
  cacheWriteInputTokens: z.number().int().optional().describe('Input tokens written to the prompt cache, summed'),
});
const UsageSchema = z.object({
  seeker: RoleUsageSchema,
  reasoner: RoleUsageSchema,
  speculative: RoleUsageSchema.optional().describe(
    'Runs with pipelineRounds only: the seeking calls of a speculative round the run did not use (KAR of the round before answered); a subset of seeker',
  ),
});

const KarStepSchema = z.object({
  round: z.number().int(),
  k: z.number().int(),
  messagesUsed: z.number().int(),
  evidenceTokens: z.number().int(),
  outcome: z
    .enum(KAR_OUTCOMES)
    .describe(
      'answered: the answer stands; refused; unsupported: answered, but the cited quotes do not hold the answer; unconfirmed: the next, wider step must give it again (karStop "confirmed") or the sufficiency check said no (karStop "checked"). All but answered read on',
    ),
  forced: z.boolean().optional(),
  followUp: z
    .string()
    .optional()
    .describe(
      'The last step of a round that did not answer, with synchronization "follow-up": the question still open, asked of the next round\'s seeking agents',
    ),
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
  location: z
    .string()
    .optional()
    .describe('Where the quote is in the source: `page 3` of a PDF, or the heading path of an HTML, Markdown or DOCX document (`Introduction › History`)'),
  page: z.number().int().optional().describe('The 1-based PDF page of the quote'),
  sourceLine: z
    .number()
    .int()
    .optional()
    .describe("Markdown: the 1-based line of the source file where the quote's block starts (start/end count characters of the extracted text)"),
  sourceOffset: z.number().int().optional().describe('HTML: the character offset in the source file of the element whose block holds the quote'),
});

const RoleEstimateSchema = z.object({
  calls: z.number().int(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  cacheWriteInputTokens: z.number().int().optional(),
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

const ConcurrencySchema = z
  .object({
    concurrency: z.number().int().describe("The seeking Map's MaxConcurrency"),
    requested: z.number().int().describe('The run option concurrency: the cap'),
    boundBy: z.enum(['concurrency', 'requestsPerMinute', 'tokensPerMinute', 'minimum']),
    quota: z
      .object({ requestsPerMinute: z.number().optional(), tokensPerMinute: z.number().optional() })
      .describe("The seeking model's stated quota, per minute"),
    tokensPerSeek: z.number().int().describe('Tokens one seek counts against the token quota (input + output at its limit), average'),
    seekLatencySeconds: z.number().describe('Expected seconds per seek'),
    byRequests: z.number().optional().describe("Little's law under the request quota, seeks in flight"),
    byTokens: z.number().optional().describe("Little's law under the token quota, seeks in flight"),
    expectedRequestsPerMinute: z.number(),
    expectedTokensPerMinute: z.number(),
    seekingSeconds: z.number().optional().describe('Modeled seeking time of the run, seconds'),
    reasoning: z.array(z.string()),
    warnings: z.array(z.string()),
    throttledCalls: z.number().int().describe('Throttled model calls of the run, each retried by the workflow'),
    throttleWaitSeconds: z.number().describe("Seconds the seeking agents waited for the workflow's Retry after throttled attempts, summed over chunks"),
  })
  .describe('The seeking concurrency derived from the model\'s quota (docs/COST.md, "Quota-aware fan-out")');

/** The final result of a run (shared/types.ts `RunResult`). */
export const RunResultSchema = z
  .object({
    runId: z.string(),
    question: z.string(),
    answer: z.string().describe('The answer, or exactly "NO ANSWER"'),
    answerable: z.boolean(),
    answerBasis: z
      .string()
      .optional()
      .describe(
        'What the answer (or refusal) is when no language model wrote it: the offline extractive reader\'s "extractive: a sentence chosen by word overlap, covering 72% of the question\'s weighted words (it answers from 50%)"',
      ),
    unsupportedAnswer: z
      .string()
      .optional()
      .describe('A best-effort answer that its cited quotes do not hold: the run refuses and keeps the guess here, never as the answer'),
    models: z
      .object({ seeker: z.string(), reasoner: z.string() })
      .optional()
      .describe('The model of each role that answered (extractive, bedrock:<id>, openai:<model>, llama:<file>); absent for older runs'),
    citations: z.array(CitationSchema),
    trace: z.array(KarStepSchema).describe('One entry per knowledge-accumulating reasoning step'),
    usage: UsageSchema,
    estimate: z
      .object({ seeker: RoleEstimateSchema, reasoner: RoleEstimateSchema })
      .optional()
      .describe('What Prepare estimated before any model call: at most this many calls and tokens per role (docs/COST.md, "Cost before spending")'),
    concurrency: ConcurrencySchema.optional(),
    rounds: z.number().int(),
    chunks: z.number().int(),
    poolSize: z.number().int(),
    coverage: z
      .object({
        mode: z.literal('grow'),
        covered: z.number().int().describe('Chunks sought in each round: the first `covered` chunks of the BM25 order'),
        cap: z.number().int().describe('The most it could cover: min(coverageMaxChunks, chunks)'),
        tranches: z.number().int().describe('Tranches sought in round 1 (1 = only the first)'),
      })
      .optional()
      .describe('Runs with coverage "grow" only (docs/CONCEPTS.md, "Coverage that grows only when needed"): the chunks covered'),
    reseek: z
      .object({
        mode: z.literal('promising'),
        chunksPerRound: z
          .array(z.number().int())
          .describe('Chunks each round was to seek, round 1 first: the chunks covered in round 1, then those the rule chose for each later round (0: skipped)'),
      })
      .optional()
      .describe('Runs with reseek "promising" only (docs/CONCEPTS.md, "Later rounds that re-read only promising chunks"): the chunks each round sought'),
    batch: z
      .object({
        rounds: z.array(
          z.object({
            round: z.number().int(),
            mode: z.enum(['batch', 'on-demand']).describe('batch: as batch jobs; on-demand: by the seeking Map alone (reason says why)'),
            reason: z.string().optional(),
            jobs: z
              .array(z.object({ status: z.string().optional(), message: z.string().optional(), records: z.number().int() }))
              .describe("The round's batch jobs and the service's final status of each"),
            records: z.number().int().describe('Chunks asked as batch records'),
            recorded: z.number().int().optional().describe("Records whose reply became the chunk's seek"),
            failedRecords: z.number().int().optional().describe('Records the service failed (sought on demand)'),
            missingRecords: z.number().int().optional().describe('Records a job never wrote (sought on demand)'),
          }),
        ),
      })
      .optional()
      .describe('Runs with seekMode "batch" only (docs/CONCEPTS.md, "Batch seeking"): how each round was sought'),
    skipped: z.array(SkippedDocumentSchema),
    chunkFailures: z
      .array(ChunkFailureSchema)
      .describe('The chunks whose seeking agent failed permanently in the last round, in chunk order, each with the error that failed it'),
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

const ExecutionStatusSchema = z.enum(EXECUTION_STATUSES).describe("Status of the run's Step Functions execution");

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
  phase: z
    .enum(RUN_PHASES)
    .describe(
      'What the run is doing (the phases of the progress events, docs/API.md "Live events"); read from the stored run: preparing, seeking, reasoning, and once it stopped how: finished (SUCCEEDED), aborted (ABORTED: cancelled, or its process stopped) or failed (FAILED, TIMED_OUT) (the live events of `extagents serve` also say synchronizing, answering and finalizing)',
    ),
  chunks: z.number().int().nullable().describe('Chunks of the corpus; null until Prepare is done'),
  tokens: z.number().int().nullable().describe('Tokens of all chunks; null until Prepare is done'),
  rounds: z
    .array(z.object({ round: z.number().int(), sought: z.number().int().describe('Chunks sought so far'), total: z.number().int() }))
    .describe('Seeking progress per round that has started'),
  karSteps: z.array(KarStepSchema.extend({ seq: z.number().int() })).describe('Knowledge-accumulating reasoning steps so far'),
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

/** One run of `GET /v1/runs`, and the `202` of `POST /v1/runs/{runId}/cancel`: the fields of RunStatus that need no read beyond the execution. */
export const RunSummarySchema = z
  .object({
    runId: RunIdSchema,
    status: ExecutionStatusSchema,
    startedAt: IsoTime,
    stoppedAt: IsoTime.optional(),
    links: RunLinksSchema,
  })
  .register(responseRegistry, { id: 'RunSummary', description: "A run's id, status and times (GET /v1/runs/{runId} has its progress and result)." });

export type RunSummary = z.infer<typeof RunSummarySchema>;

/** `200` of `GET /v1/runs`. */
export const RunPageSchema = z
  .object({
    runs: z.array(RunSummarySchema).describe('Newest first (start time descending)'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
    links: z.object({ self: Url, next: Url.optional() }),
  })
  .register(responseRegistry, { id: 'RunPage', description: 'One page of the runs, newest first.' });

export type RunPageResponse = z.infer<typeof RunPageSchema>;

/** `200` of `GET /v1/health` (no authentication: nothing secret). */
export const HealthSchema = z
  .object({
    status: z.literal('ok'),
    version: z.string().describe("Version of the API (the OpenAPI document's `info.version`)"),
  })
  .register(responseRegistry, { id: 'Health', description: 'The API answers.' });

export type HealthResponse = z.infer<typeof HealthSchema>;

/** `200` of `GET /v1/openapi.json` (no authentication): this API's OpenAPI 3.1 document, as docs/openapi.yaml. */
export const OpenApiDocumentSchema = z
  .looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) })
  .register(responseRegistry, { id: 'OpenApiDocument', description: 'An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0).' });

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
  .register(responseRegistry, { id: 'MessagePage', description: "One page of a run's scored messages." });

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
    estimate: z
      .object({ seeker: RoleEstimateSchema, reasoner: RoleEstimateSchema, totalUsd: z.number().optional(), maxCostUsd: z.number() })
      .optional()
      .describe('cost-limit-exceeded: the refused estimate (at most, per role; USD when the model has a price) and the limit'),
    concurrency: ConcurrencySchema.omit({ throttledCalls: true, throttleWaitSeconds: true })
      .optional()
      .describe(
        'quota-exceeded: the refused plan (MaxConcurrency, the quota, tokens and seconds per seek, each step of the derivation; docs/COST.md, "Quota-aware fan-out")',
      ),
  })
  .register(responseRegistry, { id: 'Problem', description: 'An error (RFC 9457 problem details).' });

export type Problem = z.infer<typeof ProblemSchema>;
