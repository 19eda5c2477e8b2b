/**
 * Ports: the small interfaces the domain needs from the outside world. Adapters implement them: the
 * models by the providers of models/ (one folder per model kind), storage for AWS (lambdas/adapters/*)
 * and for the local run (local/*). Nothing here imports the AWS SDK.
 */
import type { Chunk, KarStep, Message, RoleUsage, AgentRole, NO_ANSWER } from './types';
import type { ReplySchema } from './llm/schemas';

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

/** What a seeking agent receives (paper, section 2A; global knowledge synchronization, 2B). */
export interface SeekRequest {
  /** The query: a question (QA) or a topic / section scope (survey). */
  question: string;
  chunk: Chunk;
  /** 1-based round number. */
  round: number;
  /**
   * Round >= 2: the global top-K messages of the pool after the previous round (already fitted to the
   * synchronization token budget). Empty in round 1. The agent is asked for new evidence only.
   */
  synchronized: Message[];
  /**
   * Round >= 2 with run option `synchronization: 'follow-up'`: the question the reasoning agent
   * said is still open when it could not answer (the missing fact or bridge entity, e.g. "Where was
   * Martha Quill born?"), asked of the seeking agents beside the synchronized messages. Absent: the
   * paper's plain synchronization.
   */
  followUp?: string;
}

/**
 * What a seeking agent returns: in ONE model call, the evidence and its relevance score, or "no
 * information" (`evidence: null`, score 0, no spans: the chunk yields no message). A union, so no
 * result can hold a score or spans without evidence.
 */
export type SeekResult = SeekEvidence | SeekNothing;

/** Fields of every seek result. */
interface SeekOutcomeBase {
  usage: RoleUsage;
  /** Non-fatal problems (e.g. "score missing; fallback 50 used"). */
  warnings: string[];
}

/** A seek that found evidence. */
export interface SeekEvidence extends SeekOutcomeBase {
  /** Extracted evidence (may be empty or white space only, which still yields no message: shared/method.ts `buildMessage`). */
  evidence: string;
  /** Relevance score 0-100 (integer; clamped by the parser). */
  score: number;
  /**
   * Verbatim spans of the chunk text that support the evidence, as offsets into the chunk text
   * (`[start, end)`). The LLM adapter fills this by locating quoted sentences; may be empty.
   */
  spans: Array<{ start: number; end: number }>;
}

/** A seek that found nothing ("no information"). */
export interface SeekNothing extends SeekOutcomeBase {
  evidence: null;
  score: 0;
  spans: [];
}

/** What the reasoning agent receives in one knowledge-accumulating reasoning step. */
export interface ReasonRequest {
  question: string;
  /** The top-k messages of the pool, best first, already fitted to the reasoner's token budget. */
  messages: Message[];
  /** True for the best-effort answer after the last round: the agent must not refuse. */
  force: boolean;
}

/**
 * The reasoning agent's answer, or its structured refusal (`answerable: false`, the answer exactly
 * "NO ANSWER", nothing cited): KAR widens k. A union, so no refusal carries an answer or citations.
 */
export type ReasonResult = ReasonAnswer | ReasonRefusal;

/** An answer of the reasoning agent. */
export interface ReasonAnswer extends ReasonOutcomeBase {
  answerable: true;
  /** The answer text. */
  answer: string;
  /** Ids of the messages the answer relies on (subset of the request's messages). */
  citedMessageIds: string[];
}

/** A structured refusal of the reasoning agent. */
export interface ReasonRefusal extends ReasonOutcomeBase {
  answerable: false;
  answer: typeof NO_ANSWER;
  citedMessageIds: [];
}

/** Fields of every reasoning result. */
interface ReasonOutcomeBase {
  usage: RoleUsage;
  warnings: string[];
  /**
   * True when the provider's content filter withheld the reply (`CONTENT_FILTERED`): a refusal that
   * is not the model's, recorded as the KAR step outcome `filtered`, which ends the run.
   */
  filtered?: boolean;
  /**
   * What the answer (or refusal) is, when it is not a language model's own reply: the extractive
   * reader's "extractive: a sentence chosen by word overlap, covering 72% of the question's weighted
   * words (it answers from 50%)" (shared/extractive/reader.ts). Recorded with the KAR step and
   * given as `RunResult.answerBasis`. Absent for language models.
   */
  answerBasis?: string;
}

/**
 * The model port of the two agent roles. Implementations: `ExtractiveReader` (offline, not an LLM,
 * shared/extractive) and `LlmAgents` (prompts + lenient parsing over a `ChatModel`, shared/llm).
 */
export interface AgentModel {
  /** Human-readable description, e.g. "extractive (offline BM25 reader, not an LLM)". */
  readonly description: string;
  seek(request: SeekRequest): Promise<SeekResult>;
  reason(request: ReasonRequest): Promise<ReasonResult>;
  /**
   * What the reasoning agent still needs after refusing (or having its answer rejected) at the last
   * KAR step of a round: one short follow-up question for the next round's seeking agents (run option
   * `synchronization: 'follow-up'`; the idea of Self-Ask, arXiv 2210.03350, and IRCoT, 2212.10509).
   * Optional: a model without it (the offline extractive reader) synchronizes plainly.
   * @throws the chat model's typed errors unchanged.
   */
  followUp?(request: FollowUpRequest): Promise<FollowUpResult>;
  /**
   * A sufficiency check of a KAR step's answer (run option `karStop: 'checked'`): do the messages
   * it cites state it as the answer to the question? One short call. Optional: a model without it
   * (the offline extractive reader) is not checked.
   * @throws the chat model's typed errors unchanged.
   */
  checkAnswer?(request: CheckRequest): Promise<CheckResult>;
}

/** What the sufficiency check reads: the question, the answer and the messages it cites, best first. */
export interface CheckRequest {
  question: string;
  answer: string;
  messages: Message[];
}

/** The check's verdict: `yes`, `no`, or `unknown` for a reply that is neither (not counted against the answer). */
export interface CheckResult {
  verdict: 'yes' | 'no' | 'unknown';
  usage: RoleUsage;
  warnings: string[];
}

/** What the reasoning agent reads to say what is missing: the question and the last step's messages, best first. */
export interface FollowUpRequest {
  question: string;
  messages: Message[];
}

/** The follow-up question, or null when the reply gave none usable (plain synchronization then). */
export interface FollowUpResult {
  followUp: string | null;
  usage: RoleUsage;
  warnings: string[];
}

/** One chat completion request, provider-neutral (maps onto the Bedrock Converse API). */
export interface ChatRequest {
  role: AgentRole;
  system: string;
  /** Alternating user/assistant turns, starting with user. */
  messages: Array<{ role: 'user' | 'assistant'; text: string }>;
  /** Output token limit. */
  maxTokens: number;
  temperature?: number;
  /**
   * The JSON schema the reply must follow (shared/llm/schemas.ts). Adapters use their provider's
   * structured-output mechanism for it (a grammar for `llama:`, `response_format` json_schema for
   * OpenAI-compatible servers, a forced tool for Bedrock) or, without one, ignore it: the prompt
   * states the same format in prose and the lenient parser reads the reply.
   */
  schema?: ReplySchema;
  /**
   * The first user turn split where its repeated part ends (the seeking agent's: `prefix` is its
   * chunk, the same in every round and for every question over the corpus; `suffix` the query, the
   * known evidence and the instructions): a hint any adapter may use to pay once for a prefix it
   * has already read, whatever its mechanism, and that every adapter may ignore. Today Bedrock
   * Converse sends the two with a `cachePoint` between them (Anthropic Claude, Amazon Nova) instead of
   * `messages[0]`, and the `llama:` adapter keeps the evaluated state of a prefix when
   * `messages[0].text` is exactly `prefix + "\n" + suffix` (the prose seeking agent's layout); the
   * others send `messages[0].text` (the JSON seeking agent's puts the query first there).
   */
  cacheable?: { prefix: string; suffix: string };
}

/**
 * The port's stop reason of a reply a provider's content filter withheld or replaced (its text is the
 * filter's canned message, never the model's reply): the agents read it as a refusal with a warning
 * (shared/llm/agents.ts), never as an answer or evidence.
 */
export const CONTENT_FILTERED = 'content_filtered' as const;

/**
 * Why a reply ended, in the port's closed vocabulary; each adapter maps its provider's values once
 * (models/bedrock/bedrock.ts, models/openai/openai.ts `stopReasonOf`, models/llama/llama.ts
 * `stopReasonOf`):
 * - `end_turn`: the model finished (Bedrock `end_turn`, a forced tool's `tool_use`; OpenAI `stop`;
 *   node-llama-cpp `eogToken`);
 * - `max_tokens`: cut off at the request's `maxTokens` (OpenAI `length`; node-llama-cpp `maxTokens`);
 * - `stop_sequence`: a stop sequence ended it (Bedrock `stop_sequence`; node-llama-cpp
 *   `stopGenerationTrigger`, `customStopTrigger`);
 * - `content_filtered` ({@link CONTENT_FILTERED}): the provider's content filter withheld or replaced
 *   the reply; `filteredBy` names the provider's value;
 * - `other`: any other value (`providerStopReason` keeps it), read as a complete reply.
 */
export const STOP_REASONS = ['end_turn', 'max_tokens', 'stop_sequence', CONTENT_FILTERED, 'other'] as const;
/** One stop reason of the port (see {@link STOP_REASONS}). */
export type StopReason = (typeof STOP_REASONS)[number];

export interface ChatResponse {
  text: string;
  /** Why the reply ended ({@link STOP_REASONS}, mapped once by the adapter). */
  stopReason: StopReason;
  /** With `stopReason` `other`: the provider's own value, e.g. OpenAI "tool_calls". */
  providerStopReason?: string;
  /** With `stopReason` `CONTENT_FILTERED`: the provider's own stop reason, e.g. "guardrail_intervened". */
  filteredBy?: string;
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the prompt cache (Bedrock `usage.cacheReadInputTokens`); absent without caching. */
  cacheReadInputTokens?: number;
  /** Input tokens written to the prompt cache (Bedrock `usage.cacheWriteInputTokens`); absent without caching. */
  cacheWriteInputTokens?: number;
  /**
   * How the reply was constrained: `schema` (decoded against the request's schema: a grammar, a
   * json_schema response format or a forced tool), `json` (any JSON object), `prose` (not at all).
   * Absent when the request had no schema or the adapter does not say.
   */
  structured?: 'schema' | 'json' | 'prose';
  /** Milliseconds of this call the adapter spent waiting for a throttling server (HTTP 429), not the model; absent when none. */
  throttleWaitMs?: number;
  /** Non-fatal notices of the adapter (e.g. "the server rejected response_format; falling back"), once per process. */
  warnings?: string[];
}

/**
 * A text-in, text-out chat model (one per role; heterogeneous deployment uses different ids).
 * Adapters map provider failures onto the typed errors of shared/errors.ts.
 */
export interface ChatModel {
  readonly modelId: string;
  complete(request: ChatRequest): Promise<ChatResponse>;
}

// ---------------------------------------------------------------------------------------------
// Batch inference (the seeking phase of work nobody waits for: issue 40)
// ---------------------------------------------------------------------------------------------

/**
 * One record of a batch job: the first model call of one chunk's seeking agent, as the agents built
 * it (shared/llm/agents.ts), so the batch reply is read by the same parser as an on-demand reply.
 * `recordId` names the chunk (`C` + its index, 10 digits: 11 alphanumerics, the form of Bedrock's
 * record ids); the job names the run and the round.
 */
export interface BatchRecord {
  recordId: string;
  request: ChatRequest;
}

/** What a batch job returned for one record: the reply, or why the service failed it. */
export type BatchRecordResult = { recordId: string; response: ChatResponse } | { recordId: string; error: { code: string; message: string } };

/** A submitted job: its id (Bedrock: the job ARN), the bucket prefix of its records and output, its model. */
export interface BatchJobRef {
  jobId: string;
  prefix: string;
  modelId: string;
}

/** A batch job's state as the workflow reads it: still running, or ended (completed, partly or not at all). */
export interface BatchJobStatus {
  state: 'in-progress' | 'ended';
  /** The service's own status, e.g. Bedrock `InProgress`, `Completed`, `PartiallyCompleted`, `Failed`, `Expired`. */
  serviceStatus: string;
  /** The service's message of a failed or stopped job. */
  message?: string;
}

/**
 * Batch inference for one seeking model: Amazon Bedrock's model invocation jobs
 * (lambdas/adapters/bedrock-batch.ts: JSONL records in S3, CreateModelInvocationJob, results in S3)
 * or the local batch runner (local/engine/local-batch.ts: the same records, run through the local
 * model). Source: https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference.html
 */
export interface BatchInference {
  /**
   * How many records one job of this model takes, or why the model has no batch inference (the run
   * then seeks on demand and says so).
   */
  limits(modelId: string): { minRecords: number; maxRecords: number } | { unavailable: string };
  /** Seconds the workflow waits between two status reads of a running job (the Wait state's period). */
  readonly pollSeconds: number;
  /**
   * Write the records under `prefix` and start one job; idempotent per `name`: the same name (a
   * resumed run, a retried task) never starts a second job, it returns the first one's id.
   * @returns the job's id (Bedrock: its ARN).
   * @throws the service's typed errors (ModelThrottledError for a quota of jobs, ModelConfigurationError, …).
   */
  submit(job: { name: string; modelId: string; prefix: string; records: BatchRecord[] }): Promise<string>;
  /** The job's state. The local runner advances its job here, a slice of records at a time. */
  status(job: BatchJobRef): Promise<BatchJobStatus>;
  /**
   * The output records of an ended job, by record id (records the job never wrote are absent).
   * @param requests the job's requests by record id: each reply is read against its own request.
   */
  results(job: BatchJobRef, requests: ReadonlyMap<string, ChatRequest>): Promise<Map<string, BatchRecordResult>>;
}

// ---------------------------------------------------------------------------------------------
// Storage
// ---------------------------------------------------------------------------------------------

/**
 * Object storage (S3 in AWS; a directory locally). Keys are '/'-separated relative paths.
 * `get` throws NotFoundError for a missing key.
 */
export interface BlobStore {
  put(key: string, body: string | Uint8Array, contentType?: string): Promise<void>;
  get(key: string): Promise<Uint8Array>;
  getText(key: string): Promise<string>;
  /** All keys under a prefix, sorted ascending, paginating as needed. */
  list(prefix: string): Promise<Array<{ key: string; size: number }>>;
  exists(key: string): Promise<boolean>;
  /**
   * Optional server-side copy of one object to another key (S3 CopyObject; a file copy locally), so
   * that callers need not move the bytes through the process. Callers fall back to get + put when a
   * store has none. Throws NotFoundError when `sourceKey` does not exist.
   */
  copy?(sourceKey: string, targetKey: string): Promise<void>;
}

/** Per-run counters kept by the message store. */
export interface RunCounters {
  usage: Record<AgentRole, RoleUsage>;
  /** The first warnings recorded (at most `MAX_STORED_WARNINGS`), in arrival order. */
  warnings: string[];
  /** Total number of warnings recorded (may exceed `warnings.length`). */
  warningCount: number;
  /** Transient model errors counted by `countTransientError`, per role and per error name. */
  transientErrors: { byRole: Record<AgentRole, number>; byError: Record<string, number> };
  /**
   * Milliseconds the seeking agents waited between a throttled attempt and the next attempt of the
   * same chunk (`addThrottleWait`): the workflow's Retry backoff as the tasks measured it.
   */
  throttleWaitMs: number;
  /**
   * The seeking agents' usage by round number (the seek records of each round; `usage.seeker` is
   * their sum plus any older counter): with `pipelineRounds`, Finalize reports the rounds after the
   * run's last one — sought speculatively, never used — as `RunResult.usage.speculative`.
   */
  seekerByRound: Record<number, RoleUsage>;
}

/** What one seeking agent's task records (`MessageStore.recordSeek`). */
export interface SeekRecord {
  /** Round, 1-based. */
  round: number;
  /** Chunk index, 0-based. */
  chunkIndex: number;
  /** The message the agent found (its `round` and `chunkIndex` equal the record's); none: no information. */
  message?: Message;
  /** The model usage of the task's calls. */
  usage: RoleUsage;
  /** Warnings of the task, each already naming its chunk and round. */
  warnings: string[];
  /**
   * The run's coverage when the chunk was sought (`SeekEvent.covered`; shared/coverage.ts): reads of
   * the pool bounded by a smaller coverage leave the message out. Absent: in every read.
   */
  covered?: number;
}

/** The last error recorded for one chunk in one round by `recordSeekFailure`. */
export interface SeekFailure {
  chunk: number;
  /** Error name, e.g. "ModelError". */
  error: string;
  /** Error message, at most `MAX_FAILURE_MESSAGE_CHARS` characters. */
  message: string;
  /** When it was recorded, ms since the epoch (absent in records of older versions). */
  at?: number;
}

/** Longest stored failure message (characters); longer messages are cut with "…". */
export const MAX_FAILURE_MESSAGE_CHARS = 1000;

/** How many warning texts a run keeps (the count is always exact). */
export const MAX_STORED_WARNINGS = 100;

/** A recorded KAR step: the step, its sequence number and the reasoning agent's output (with its `answerBasis`, when the reader states one). */
/**
 * A KAR step as recorded: the trace's fields, the answer and cited ids, and `messageIds`, the ids of
 * the messages the reasoning agent read, in prompt order (absent on steps recorded before it was
 * kept): a later step over the same messages is not sent again (shared/pipeline/reason.ts).
 */
export type StoredStep = KarStep & { seq: number; answer: string; citedMessageIds: string[]; answerBasis?: string; messageIds?: string[] };

/**
 * The message pool and run records, as the method needs them (implementations: DynamoDB in AWS and
 * locally through dynalite, lambdas/adapters/dynamo-message-store.ts; in memory,
 * shared/memory-message-store.ts; both pass test/support/message-store-conformance.ts).
 * The pool order is: score descending, then chunk index ascending, then round ascending.
 */
export interface MessageStore {
  /**
   * Record what one seeking agent's task produced for (run, round, chunk) — the message it found, if
   * any, its model usage and its warnings — as one atomic record (no seeking agent waits on a
   * shared counter; the usage is summed by `getCounters` at the step that needs it).
   * The record is also what makes the chunk "sought" (`seekState`, `soughtChunks`), so a message and
   * its seek record can never be out of step, whatever point a run is killed at.
   * @returns `recorded`, or `already-recorded` when (run, round, chunk) already has a record (a
   *   retried or duplicated task): the first record stands and nothing of this one is counted.
   */
  recordSeek(runId: string, record: SeekRecord): Promise<'recorded' | 'already-recorded'>;
  /**
   * What a Seek task reads first, in one read: whether (run, round, chunk) was sought (a seek record
   * or a message: resume / retry) and the failure recorded for it, if any (`lastSeekFailure`);
   * consistent reads.
   */
  seekState(runId: string, round: number, chunkIndex: number): Promise<{ sought: boolean; lastFailure?: SeekFailure }>;
  /** Indexes of the chunks sought in a round (any outcome), ascending. */
  soughtChunks(runId: string, round: number): Promise<number[]>;
  /**
   * Indexes of the chunks whose seeking agent recorded a message in a round (it found something),
   * ascending; consistent reads (`reseek: 'promising'`, shared/reseek.ts).
   */
  messageChunks(runId: string, round: number): Promise<number[]>;
  /**
   * The global top-k messages of rounds 1..`maxRound`, in pool order (global knowledge
   * synchronization and the KAR steps read them; DynamoDB: one descending GSI Query). The round
   * bound is what makes a resumed run read the pool as the killed one did at the same step: messages
   * of a later round, recorded before the kill, stay out of an earlier round's KAR steps and
   * synchronization snapshot (docs/ARCHITECTURE.md, "Resume").
   * @param k messages wanted (>= 0); fewer come back when the pool is smaller.
   * @param maxRound last round (1-based) whose messages count.
   * @param maxCovered when given, only messages recorded at a coverage of at most this many chunks
   *   count (`SeekRecord.covered`; a grow run's tranches, shared/coverage.ts): the same resume rule
   *   as the round bound, for a replay of an earlier tranche.
   */
  topK(runId: string, k: number, maxRound: number, maxCovered?: number): Promise<Message[]>;
  /** Number of messages in the pool of rounds 1..`maxRound` (and coverage <= `maxCovered`; see `topK`). */
  poolSize(runId: string, maxRound: number, maxCovered?: number): Promise<number>;
  /** Messages by id (for citations). */
  getMessages(runId: string, ids: string[]): Promise<Message[]>;
  /**
   * The run's counters: the usage and warnings of every seek record and every KAR step, summed
   * here (shared/run-counters.ts `sumRunCounters`), plus the run's own counters (transient errors,
   * throttle waits; the reasoning agent's usage of runs recorded before steps carried it).
   * Warnings come in a fixed order: those of seek records by round then chunk, then those of KAR
   * steps by sequence, then the others in arrival order (at most MAX_STORED_WARNINGS texts; the
   * count is exact).
   */
  getCounters(runId: string): Promise<RunCounters>;
  /**
   * Count one transient model error (a name of `RETRYABLE_ERRORS`) of a role (atomically), before
   * the task rethrows it for the workflow's Retry; reported as `RunResult.retries`.
   */
  countTransientError(runId: string, role: AgentRole, errorName: string): Promise<void>;
  /**
   * Record the error that failed a Seek task for (run, round, chunk); a later failure of the same
   * chunk replaces it. Listed in `RunResult.chunkFailures` when the chunk ends up not sought.
   */
  recordSeekFailure(runId: string, round: number, chunkIndex: number, failure: { error: string; message: string; at?: number }): Promise<void>;
  /** The failure recorded for (run, round, chunk) by `recordSeekFailure`, if any (a consistent read). */
  lastSeekFailure(runId: string, round: number, chunkIndex: number): Promise<SeekFailure | undefined>;
  /**
   * Add the milliseconds a seeking agent waited for the workflow's Retry after a throttled attempt
   * (atomically, on the run's counters); reported in `RunResult.concurrency.throttleWaitSeconds`.
   */
  addThrottleWait(runId: string, ms: number): Promise<void>;
  /** The failures recorded in a round, by ascending chunk index. */
  seekFailures(runId: string, round: number): Promise<SeekFailure[]>;
  /**
   * Record one KAR step with the reasoning agent's output, and the usage and warnings of the model
   * call(s) that made it, in one write: a step's usage counts once its result is recorded, as a
   * seek's does (a call whose step a kill lost is made again when the run resumes, and counted then,
   * not twice). A step recorded under the same `seq` (another path of a resumed run) is replaced,
   * usage included.
   */
  putStep(runId: string, step: StoredStep, made?: { usage: RoleUsage; warnings: string[] }): Promise<void>;
  /** All KAR steps in `seq` order. */
  getSteps(runId: string): Promise<StoredStep[]>;
  /**
   * One page of the pool in pool order (score descending, then chunk ascending, then round
   * ascending), optionally of one round only (the API's `GET /v1/runs/{runId}/messages`).
   * @param page.limit messages per page (1-1000); `after` the `next` of the previous page.
   * @returns the messages and `next` (an opaque cursor) when more may follow.
   * @throws InvalidInputError for a malformed `after`.
   */
  listMessages(runId: string, page: { round?: number; limit: number; after?: string }): Promise<MessagePage>;
}

/** One page of messages (see `MessageStore.listMessages`). */
export interface MessagePage {
  messages: Message[];
  /** Cursor of the next page; absent on the last page. */
  next?: string;
}
