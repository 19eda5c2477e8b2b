/**
 * Seek: one seeking agent reads one chunk in one round (docs/ARCHITECTURE.md, step 2; paper 2A).
 * In rounds >= 2 it also reads the synchronized global top-K messages (global knowledge
 * synchronization, paper 2B). The resulting message, if any, joins the pool.
 */
import { ContextOverflowError, isContextOverflow, ModelThrottledError, RETRYABLE_ERRORS } from '../errors';
import { buildMessage, halveSynchronized, sameCitations } from '../method';
import { messageId } from '../pool';
import type { AgentModel, BlobStore, MessageStore, SeekFailure, SeekRequest, SeekResult } from '../ports';
import { MODEL_RETRY_POLICY } from '../quota';
import { DEFAULT_RANKING, type RankingMode } from '../ranking';
import type { AgentRole, Chunk, Message } from '../types';
import { runChunkKey } from './layout';
import { loadFollowUp, loadRunRecord, loadSeekQuery, loadSynchronized, type SeekQuery } from './run-record';
import type { SeekEvent, SeekOutcome } from './state';

export interface SeekDeps {
  blobs: BlobStore;
  store: MessageStore;
  /**
   * The seeking agent's model, or a factory of it called once per task inside the task's error
   * handling (so a bad model setting, e.g. a ConfigurationError, is recorded for the chunk).
   */
  model: AgentModel | (() => Promise<AgentModel>);
  /** Clock, ms since the epoch (tests pass their own): when a failure is recorded, and the throttle waits. */
  now?: () => number;
}

/**
 * The longest gap between a throttled attempt and the next attempt of its chunk that counts as the
 * workflow's Retry backoff, ms: the longest delay (60 s) plus a minute for the invocation itself. A
 * longer gap is another execution of the run (a resume), not a wait for the quota.
 */
export const MAX_COUNTED_THROTTLE_WAIT_MS = (MODEL_RETRY_POLICY.maxDelaySeconds + 60) * 1000;

/**
 * Run the seeking agent of one chunk, at most once per (run, round, chunk): a chunk already sought
 * (a resumed run, a retried task) is not sent to the model again, and the task's message, usage and
 * warnings are one conditional write (`MessageStore.recordSeek`), so the pool never holds duplicates
 * and a chunk is sought exactly when its record exists.
 *
 * Faults:
 * - a transient model error (ModelThrottledError, ModelUnavailableError, ModelTimeoutError) is
 *   counted in the run's counters (`RunResult.retries`) and rethrown unchanged, so Step Functions
 *   retries the task by name;
 * - ContextOverflowError (the prompt exceeds the model's context window) is never retried as is: in
 *   rounds >= 2 the request is sent once more with the synchronized messages halved (fewer messages,
 *   the first one trimmed when it alone exceeds half: `halveSynchronized`, shared/method.ts); if that overflows too, or in
 *   round 1 (where only the chunk itself could be cut, which would drop corpus text), the task fails
 *   with a ContextOverflowError naming the chunk and what to change;
 * - any error that fails the task is recorded for the chunk (`RunResult.chunkFailures` lists it
 *   when the chunk ends up failed), with its time: the chunk's next attempt, after a
 *   ModelThrottledError, adds the gap to the run's throttle wait (`countThrottleWait`).
 * @throws NotFoundError when the run or chunk object is missing; ContextOverflowError as above;
 *   other model errors (ModelThrottledError, …) unchanged so Step Functions can Retry by name.
 */
export async function seekChunk(event: SeekEvent, deps: SeekDeps): Promise<SeekOutcome> {
  const { store } = deps;
  const { runId, round, chunk: index } = event;
  const now = deps.now ?? Date.now;
  try {
    const { sought, lastFailure } = await store.seekState(runId, round, index);
    if (sought) return { chunk: index, outcome: 'already-done' };
    await countThrottleWait(store, runId, lastFailure, now());
    const model = typeof deps.model === 'function' ? await deps.model() : deps.model;
    return await seekOnce(event, { ...deps, model });
  } catch (error) {
    await countIfTransient(store, runId, 'seeker', error);
    await bestEffort(store.recordSeekFailure(runId, round, index, { ...describe(error), at: now() }));
    throw error;
  }
}

/**
 * After a throttled attempt of this chunk (its failure record, `at`), the time until this attempt is
 * the workflow's Retry backoff (plus the invocation): added to the run's throttle wait. Step Functions
 * does not tell the task how long it waited, so the task measures it from the record; a gap over
 * {@link MAX_COUNTED_THROTTLE_WAIT_MS} is not a backoff (a resumed run) and is not counted.
 */
async function countThrottleWait(store: MessageStore, runId: string, previous: SeekFailure | undefined, at: number): Promise<void> {
  if (previous?.error !== ModelThrottledError.name || previous.at === undefined) return;
  const waited = at - previous.at;
  if (waited < 0 || waited > MAX_COUNTED_THROTTLE_WAIT_MS) return;
  await bestEffort(store.addThrottleWait(runId, waited));
}

/** Is this one of the errors the workflow retries (ModelThrottledError, …)? */
export function isTransientModelError(error: unknown): error is Error {
  return error instanceof Error && (RETRYABLE_ERRORS as readonly string[]).includes(error.name);
}

/**
 * Count a transient model error in the run's counters before it is rethrown for the workflow's
 * Retry (`RunResult.retries`). A failure to count is ignored: the task's own error must reach Step
 * Functions unchanged (the figure is then one short).
 */
export async function countIfTransient(store: MessageStore, runId: string, role: AgentRole, error: unknown): Promise<void> {
  if (isTransientModelError(error)) await bestEffort(store.countTransientError(runId, role, error.name));
}

async function bestEffort(write: Promise<void>): Promise<void> {
  try {
    await write;
  } catch {
    // Bookkeeping only: never mask the error being reported.
  }
}

function describe(error: unknown): { error: string; message: string } {
  return error instanceof Error ? { error: error.name, message: error.message } : { error: 'Error', message: String(error) };
}

async function seekOnce(event: SeekEvent, deps: SeekDeps & { model: AgentModel }): Promise<SeekOutcome> {
  const prepared = await prepareSeek(event, deps.blobs);
  const { result, warnings } = await seekShrinkingOnOverflow(deps.model, prepared.request, prepared.chunkTokens);
  return recordSeekResult(event, prepared, result, warnings, deps.store);
}

/** What one seeking agent is asked (the chunk, the query, the synchronized messages) and how its message is ranked. */
export interface PreparedSeek {
  request: SeekRequest;
  /** The run's chunk size, tokens (for the overflow advice). */
  chunkTokens: number;
  ranking: RankingMode;
}

/**
 * The request of one chunk's seeking agent in one round, read from the run's records: the same for
 * an on-demand Seek and a batch record (shared/pipeline/seek-batch.ts).
 * @throws NotFoundError when the run or chunk object is missing.
 */
export async function prepareSeek(event: SeekEvent, blobs: BlobStore): Promise<PreparedSeek> {
  const { runId, round, chunk: index } = event;
  const { query, chunkTokens, chunksFrom, ranking } = await queryOf(event, blobs);
  const chunk = JSON.parse(await blobs.getText(runChunkKey(runId, index, chunksFrom))) as Chunk;
  const synchronized = await loadSynchronized(blobs, runId, round);
  const followUp = event.task === 'survey' ? undefined : await loadFollowUp(blobs, runId, round);
  return { request: { question: query, chunk, round, synchronized, ...(followUp !== undefined && { followUp }) }, chunkTokens, ranking };
}

/**
 * One seeking agent's result as its message (if any), usage and warnings, in one conditional write
 * (`MessageStore.recordSeek`): how an on-demand Seek and a collected batch record end alike.
 */
export async function recordSeekResult(
  event: SeekEvent,
  prepared: PreparedSeek,
  result: SeekResult,
  warnings: string[],
  store: MessageStore,
): Promise<SeekOutcome> {
  const { runId, round, chunk: index } = event;
  const { request, ranking } = prepared;
  const built = buildMessage(request.chunk, round, messageId(round, index), result, { question: request.question, followUp: request.followUp, mode: ranking });
  const allWarnings = [...warnings, ...result.warnings, ...built.warnings];
  // A question's round >= 2 message that cites exactly what the same chunk's earlier message cited
  // adds nothing: it is not added to the pool again, so it takes one place in KAR's top-k and in a
  // refusal's best evidence (a survey's rounds are its sections' queries: each keeps its own).
  const earlier = built.message && event.task !== 'survey' && round > 1 ? await sameAsEarlier(store, runId, round, index, built.message) : undefined;
  if (earlier !== undefined) allWarnings.push(`the same quotes as its message ${earlier}: not added to the pool again`);
  const message = earlier === undefined ? built.message : null;
  // One write records the message (if any), the usage and the warnings, and marks the chunk sought.
  const written = await store.recordSeek(runId, {
    round,
    chunkIndex: index,
    ...(message && { message }),
    usage: result.usage,
    warnings: allWarnings.map((w) => `chunk ${index}, round ${round}: ${w}`),
    ...(event.covered !== undefined && { covered: event.covered }),
  });
  const outcome: SeekOutcome['outcome'] = written === 'already-recorded' ? 'already-done' : message ? 'message' : 'none';
  return { chunk: index, outcome };
}

/** The id of an earlier round's message of the same chunk that cites exactly what `message` cites, if any (`sameCitations`). */
async function sameAsEarlier(store: MessageStore, runId: string, round: number, chunkIndex: number, message: Message): Promise<string | undefined> {
  const ids = Array.from({ length: round - 1 }, (_, r) => messageId(r + 1, chunkIndex));
  return (await store.getMessages(runId, ids)).find((m) => sameCitations(m, message))?.id;
}

/**
 * The query of a Seek: the run's question (QA), or the round's query record (survey); where its
 * chunks are; and how its pool is ranked (a survey's: the default).
 */
async function queryOf(event: SeekEvent, blobs: BlobStore): Promise<SeekQuery & { chunksFrom?: string; ranking: RankingMode }> {
  if (event.task === 'survey') return { ...(await loadSeekQuery(blobs, event.runId, event.round)), ranking: DEFAULT_RANKING };
  const record = await loadRunRecord(blobs, event.runId);
  return { query: record.question, chunkTokens: record.options.chunkTokens, chunksFrom: record.chunksFrom, ranking: record.options.ranking };
}

/**
 * A chunk size that would have fitted the overflowing prompt, when the provider said how many tokens it
 * had: the chunk's share of the prompt scaled down to what the context leaves (the prompt's other
 * parts kept), always below the chunk size that failed. Empty when the provider did not count.
 * @param chunkTokens the failing chunk's tokens (o200k); `runChunkTokens` the run's chunk size.
 */
function fittingAdvice(error: unknown, chunkTokens: number, runChunkTokens: number): string {
  const tokens = (error as { tokens?: { prompt: number; context: number; reply: number } }).tokens;
  if (tokens === undefined || tokens.prompt <= 0 || chunkTokens <= 0) return '';
  const room = tokens.context - tokens.reply;
  // The chunk's part of the prompt in the model's tokens, its ids and line breaks included, at most the whole prompt.
  const chunkPart = Math.min(tokens.prompt, Math.max(1, tokens.prompt - SEEK_PROMPT_REST_TOKENS));
  const over = tokens.prompt - room;
  const fits = Math.floor(((Math.min(runChunkTokens, chunkTokens) * Math.max(0, chunkPart - over)) / chunkPart) * 0.95);
  return fits >= 64
    ? ` (this chunk's prompt was ${tokens.prompt} tokens for a context of ${tokens.context} less ${tokens.reply} for the reply: chunks of about ${fits} tokens would fit; the sentence ids shown with a chunk of many short lines add more than usual)`
    : ` (this chunk's prompt was ${tokens.prompt} tokens for a context of ${tokens.context} less ${tokens.reply} for the reply)`;
}

/** Tokens of a seeking prompt other than its chunk, roughly (instructions, question, tags), for `fittingAdvice`. */
const SEEK_PROMPT_REST_TOKENS = 400;

/**
 * One seek, and on a context overflow one more with the synchronized messages halved (see
 * `seekChunk`). Usage of the overflowing call is unknown (the model rejected it) and not counted.
 * @returns the result and a warning when the request was shrunk.
 * @throws ContextOverflowError naming the chunk when nothing can be shrunk or the smaller request
 *   overflows too; any other error of the model unchanged.
 */
export async function seekShrinkingOnOverflow(
  model: AgentModel,
  request: SeekRequest,
  chunkTokens: number,
): Promise<{ result: SeekResult; warnings: string[] }> {
  const { chunk, round } = request;
  const what = `Chunk ${chunk.index} (round ${round}, ${chunk.tokens} tokens of corpus text)`;
  const advice = `use a smaller chunk size (run option chunkTokens, CLI --chunk-tokens; now ${chunkTokens}) or a model with a larger context window`;
  try {
    return { result: await model.seek(request), warnings: [] };
  } catch (error) {
    if (!isContextOverflow(error)) throw error;
    if (request.synchronized.length === 0) {
      throw new ContextOverflowError(
        `${what} exceeds the seeking model's context window; nothing but the chunk is sent, and cutting it would drop corpus text: ${advice}${fittingAdvice(error, chunk.tokens, chunkTokens)}`,
        { cause: error },
      );
    }
    const smaller = halveSynchronized(request.synchronized);
    const shrunk = `the synchronized messages shrunk from ${request.synchronized.length} (${smaller.before} tokens) to ${smaller.messages.length} (${smaller.tokens} tokens)`;
    try {
      const result = await model.seek({ ...request, synchronized: smaller.messages });
      return { result, warnings: [`context window exceeded; sent once more with ${shrunk}`] };
    } catch (retryError) {
      if (!isContextOverflow(retryError)) throw retryError;
      throw new ContextOverflowError(
        `${what} exceeds the seeking model's context window even with ${shrunk}: ${advice}, or a smaller synchronization budget (syncBudgetTokens)`,
        { cause: retryError },
      );
    }
  }
}
