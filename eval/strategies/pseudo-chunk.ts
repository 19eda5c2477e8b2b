/**
 * Pseudo-chunks: a chunk made of messages' evidence, for the calls of the reference procedures that
 * read extracted information rather than corpus text (the official ExtAgents score call, the
 * LLM×MapReduce collapse). Sent through `AgentModel.seek` like any chunk; spans the model returns
 * are mapped back to the quotes of the messages they fall in, so evidence recall still locates them.
 */
import { SEGMENT_SEPARATOR } from '../../shared/chunking';
import { countTokens } from '../../shared/tokenizer';
import type { Chunk, Message, Quote } from '../../shared/types';

/** Prefix of the pseudo document ids (`msg:<messageId>`): never a corpus document id of a data set. */
export const PSEUDO_DOCUMENT_PREFIX = 'msg:';

/**
 * A chunk whose text is the messages' evidence joined by "\n\n", one segment per message (document
 * id `msg:<messageId>`, offsets into the evidence).
 * @param index the pseudo chunk's index (shown to the model as its position).
 * @param placeholder text used when there is no evidence at all (an empty chunk), e.g. the official
 *   score call of an agent that found nothing.
 */
export function pseudoChunk(index: number, messages: readonly Message[], placeholder = 'No relevant information.'): Chunk {
  const parts = messages.map((m) => m.evidence).filter((e) => e.length > 0);
  if (parts.length === 0) {
    return {
      index,
      tokens: countTokens(placeholder),
      chars: placeholder.length,
      segments: [{ documentId: `${PSEUDO_DOCUMENT_PREFIX}none`, start: 0, end: placeholder.length, chunkStart: 0 }],
      text: placeholder,
    };
  }
  const segments: Chunk['segments'] = [];
  let offset = 0;
  for (const m of messages) {
    if (m.evidence.length === 0) continue;
    if (segments.length > 0) offset += SEGMENT_SEPARATOR.length;
    segments.push({ documentId: `${PSEUDO_DOCUMENT_PREFIX}${m.id}`, start: 0, end: m.evidence.length, chunkStart: offset });
    offset += m.evidence.length;
  }
  const text = parts.join(SEGMENT_SEPARATOR);
  return { index, tokens: countTokens(text), chars: text.length, segments, text };
}

/**
 * The corpus quotes behind spans of a pseudo-chunk: the quotes of every message whose segment a span
 * overlaps; all the messages' quotes when there are no spans (the model paraphrased). Quotes are
 * de-duplicated by (document, start, end).
 */
export function quotesBehind(chunk: Chunk, messages: readonly Message[], spans: ReadonlyArray<{ start: number; end: number }>): Quote[] {
  const byId = new Map(messages.map((m) => [`${PSEUDO_DOCUMENT_PREFIX}${m.id}`, m]));
  const used =
    spans.length === 0
      ? [...messages]
      : chunk.segments
          .filter((seg) => spans.some((s) => s.start < seg.chunkStart + (seg.end - seg.start) && s.end > seg.chunkStart))
          .map((seg) => byId.get(seg.documentId))
          .filter((m): m is Message => m !== undefined);
  const seen = new Set<string>();
  const quotes: Quote[] = [];
  for (const q of used.flatMap((m) => m.quotes)) {
    const key = `${q.documentId}\u0000${q.start}\u0000${q.end}`;
    if (seen.has(key)) continue;
    seen.add(key);
    quotes.push(q);
  }
  return quotes;
}
