/**
 * Seek: one seeking agent reads one chunk in one round (docs/ARCHITECTURE.md, step 2; paper 2A).
 * In rounds >= 2 it also reads the synchronized global top-K messages (global knowledge
 * synchronization, paper 2B). The resulting message, if any, joins the pool.
 */
import { MessageAlreadyRecordedError } from '../errors';
import { messageId } from '../pool';
import type { AgentModel, BlobStore, MessageStore } from '../ports';
import { countTokens } from '../tokenizer';
import type { Chunk, Message, Quote } from '../types';
import { chunkKey } from './layout';
import { loadRunRecord, loadSynchronized } from './run-record';
import type { SeekEvent, SeekOutcome } from './state';

export interface SeekDeps {
  blobs: BlobStore;
  store: MessageStore;
  model: AgentModel;
}

/**
 * Run the seeking agent of one chunk, at most once per (run, round, chunk): a chunk already sought
 * (a resumed run, a retried task) is not sent to the model again, and a message is written with a
 * conditional write so the pool never holds duplicates.
 * @throws NotFoundError when the run or chunk object is missing; model errors (ModelThrottledError, …)
 *   propagate unchanged so Step Functions can Retry by name.
 */
export async function seekChunk(event: SeekEvent, deps: SeekDeps): Promise<SeekOutcome> {
  const { blobs, store, model } = deps;
  const { runId, round, chunk: index } = event;
  if (await store.wasSought(runId, round, index)) return { chunk: index, outcome: 'already-done' };

  const record = await loadRunRecord(blobs, runId);
  const chunk = JSON.parse(await blobs.getText(chunkKey(runId, index))) as Chunk;
  const synchronized = await loadSynchronized(blobs, runId, round);

  const result = await model.seek({ question: record.question, chunk, round, synchronized });
  await store.addUsage(runId, 'seeker', result.usage, result.warnings.map((w) => `chunk ${index}, round ${round}: ${w}`));

  let outcome: SeekOutcome['outcome'] = 'none';
  if (result.evidence !== null && result.evidence.trim() !== '') {
    const quotes = result.spans.flatMap((span) => spanToQuotes(chunk, span.start, span.end));
    const sources = [...new Set((quotes.length > 0 ? quotes : chunk.segments).map((q) => q.documentId))];
    const message: Message = {
      id: messageId(round, index),
      round,
      chunkIndex: index,
      score: result.score,
      evidence: result.evidence,
      tokens: countTokens(result.evidence),
      quotes,
      sources,
    };
    try {
      await store.putMessage(runId, message);
      outcome = 'message';
    } catch (error) {
      if (!(error instanceof MessageAlreadyRecordedError)) throw error;
      outcome = 'already-done';
    }
  }
  await store.markSought(runId, round, index, outcome === 'none' ? 'none' : 'message');
  return { chunk: index, outcome };
}

/**
 * Map a span of chunk text (`[start, end)`, chunk offsets) to quotes in documents. A span that
 * crosses a segment boundary yields one quote per segment; the "\n\n" joiners between segments are
 * not part of any document and are dropped.
 */
export function spanToQuotes(chunk: Chunk, start: number, end: number): Quote[] {
  const quotes: Quote[] = [];
  for (const seg of chunk.segments) {
    const segEnd = seg.chunkStart + (seg.end - seg.start);
    const from = Math.max(start, seg.chunkStart);
    const to = Math.min(end, segEnd);
    if (from >= to) continue;
    const text = chunk.text.slice(from, to);
    if (text.trim() === '') continue;
    quotes.push({
      documentId: seg.documentId,
      start: seg.start + (from - seg.chunkStart),
      end: seg.start + (to - seg.chunkStart),
      text,
    });
  }
  return quotes;
}
