/**
 * Finalize: assemble and persist the run's result (docs/ARCHITECTURE.md, step 7): the answer of the
 * first answered KAR step (or the refusal), its citations resolved to documents and character
 * ranges, the KAR trace, usage per role, skipped documents and failed chunks.
 */
import type { BlobStore, MessageStore, StoredStep } from '../ports';
import { NO_ANSWER, type Citation, type Message, type RunResult } from '../types';
import { chunkKey, resultKey } from './layout';
import { loadRunRecord } from './run-record';
import type { Chunk } from '../types';
import type { FinalizeOutput, WorkflowState } from './state';

export interface FinalizeDeps {
  blobs: BlobStore;
  store: MessageStore;
}

/** Messages cited as "the best evidence" when the run refuses. */
const BEST_EVIDENCE_ON_REFUSAL = 3;
/** Longest quote in a citation, in characters. */
const MAX_QUOTE_CHARS = 300;

/**
 * Build the `RunResult`, write it to `runs/<runId>/result.json` and return a small summary.
 * A refusal (no answered step) answers exactly "NO ANSWER" and cites the best evidence found.
 */
export async function finalizeRun(state: WorkflowState, deps: FinalizeDeps): Promise<FinalizeOutput & { result: RunResult }> {
  const { blobs, store } = deps;
  const record = await loadRunRecord(blobs, state.runId);
  const [steps, counters, sought] = await Promise.all([
    store.getSteps(state.runId),
    store.getCounters(state.runId),
    store.soughtChunks(state.runId, state.round),
  ]);
  const answeredStep: StoredStep | undefined = steps.find((s) => s.outcome === 'answered');
  const answerable = answeredStep !== undefined;

  const citedIds = answerable
    ? answeredStep.citedMessageIds
    : (await store.topK(state.runId, BEST_EVIDENCE_ON_REFUSAL)).map((m) => m.id);
  const messages = await store.getMessages(state.runId, citedIds);
  const byId = new Map(messages.map((m) => [m.id, m]));
  const citations: Citation[] = [];
  for (const id of citedIds) {
    const message = byId.get(id);
    if (message) citations.push(...(await citationsOf(message, state.runId, blobs)));
  }

  const soughtSet = new Set(sought);
  const failedChunks: number[] = [];
  for (let i = 0; i < record.chunks; i++) if (!soughtSet.has(i)) failedChunks.push(i);

  const warnings = [...counters.warnings];
  if (counters.warningCount > counters.warnings.length) {
    warnings.push(`… and ${counters.warningCount - counters.warnings.length} more warning(s)`);
  }
  const result: RunResult = {
    runId: state.runId,
    question: record.question,
    answer: answerable ? answeredStep.answer : NO_ANSWER,
    answerable,
    citations,
    trace: steps.map(({ round, k, messagesUsed, evidenceTokens, outcome, forced }) => ({
      round,
      k,
      messagesUsed,
      evidenceTokens,
      outcome,
      ...(forced ? { forced } : {}),
    })),
    usage: counters.usage,
    rounds: state.round,
    chunks: record.chunks,
    poolSize: await store.poolSize(state.runId),
    skipped: record.skipped,
    failedChunks,
    warnings,
  };
  const key = resultKey(state.runId);
  await blobs.put(key, JSON.stringify(result, null, 2), 'application/json');
  return { runId: state.runId, answerable, resultKey: key, result };
}

/** One citation per verbatim quote; a message without quotes cites its chunk's first segment. */
async function citationsOf(message: Message, runId: string, blobs: BlobStore): Promise<Citation[]> {
  const base = { messageId: message.id, chunkIndex: message.chunkIndex, round: message.round, score: message.score };
  if (message.quotes.length > 0) {
    return message.quotes.map((q) => ({ ...base, documentId: q.documentId, start: q.start, end: q.end, quote: shorten(q.text) }));
  }
  const chunk = JSON.parse(await blobs.getText(chunkKey(runId, message.chunkIndex))) as Chunk;
  const seg = chunk.segments[0];
  const text = chunk.text.slice(seg.chunkStart, seg.chunkStart + (seg.end - seg.start));
  return [{ ...base, documentId: seg.documentId, start: seg.start, end: seg.end, quote: shorten(text) }];
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= MAX_QUOTE_CHARS) return flat;
  // Cut on a code point boundary (Array.from iterates code points).
  return Array.from(flat).slice(0, MAX_QUOTE_CHARS - 1).join('') + '…';
}
