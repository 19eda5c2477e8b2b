/**
 * The ExtAgents method's pure steps (paper, section 2), in one place for every caller: the
 * workflow's tasks (shared/pipeline/seek.ts, reason.ts, synchronize.ts), the survey
 * (shared/survey/survey.ts, shared/survey/workflow.ts) and the eval's in-memory ablation
 * (eval/strategies/extagents.ts). No storage, no model calls: each caller brings its own.
 *
 * - A seeking agent's reply becomes a message ({@link buildMessage}): evidence and quotes bounded
 *   ({@link boundMessageText}), spans of chunk text mapped to document quotes ({@link spanToQuotes}),
 *   sources, evidence tokens.
 * - Global knowledge synchronization (paper 2B): the snapshot of the global top-K messages the next
 *   round's seeking agents read ({@link synchronizationSnapshot}), halved on a context overflow
 *   ({@link halveSynchronized}).
 * - Knowledge-accumulating reasoning (paper 2B): one step's top-k fitted to the reasoning budget
 *   ({@link fitForReasoning}, {@link FORCED_MAX_MESSAGES} for the best-effort answer), halved on a
 *   context overflow ({@link halveForReasoning}), and the k after a refusal ({@link afterRefusal};
 *   the schedule itself is shared/kar.ts).
 */
import { nextK } from './kar';
import { fitToBudget, type FittedMessages } from './pool';
import type { SeekResult } from './ports';
import { lexicalPrior } from './extractive/prior';
import { poolScore, type RankingMode } from './ranking';
import { countTokens } from './tokenizer';
import { codePointCut } from './unicode';
import type { Chunk, Message, Quote } from './types';

/**
 * Most characters (UTF-16 code units) of a message's evidence that are stored. A model's evidence is
 * bounded by its output tokens; this bounds the extractive reader and any model whose reply is far
 * longer than asked, so the message fits a DynamoDB item (400 KB) and stays small in prompts.
 */
export const MAX_EVIDENCE_CHARS = 16_000;

/**
 * Most characters of quote text stored per message, over all its quotes, in order. A quote cut by
 * this bound keeps its start and its `end` moves to the end of the kept text, so offsets and text
 * still agree; a quote left with no room is dropped. Each cut is reported as a warning of the run.
 * With the evidence bound, a message's JSON stays under ~300 KB even if every character needed a
 * 6-character JSON escape (DynamoDB's item limit is 400 KB).
 */
export const MAX_STORED_QUOTE_CHARS = 32_000;

/** Tokens reserved per message for its label and separators in a reasoning prompt (KAR steps, the outline, the baselines' readers). */
export const MESSAGE_OVERHEAD_TOKENS = 12;

/** The forced (best-effort) answer reads at most this many of the best messages (then the token budget applies). */
export const FORCED_MAX_MESSAGES = 1024;

/**
 * The message of one seeking agent's reply, or null when the reply holds no evidence (null, empty
 * or white space: "no information"). Evidence and quotes are bounded ({@link boundMessageText});
 * a quote whose exact text also stands in another document of the chunk (identical documents packed
 * together) cites that document too; `sources` are the documents of its quotes (the chunk's
 * documents when it has none). With `ranking`, the message's pool score is the seeking agent's score
 * and the lexical prior of its cited text (the quotes, else the evidence) combined by the mode
 * (shared/ranking.ts), and both parts are kept (`modelScore`, `prior`); without it, the pool score is
 * the agent's score.
 * @param id the message id (`messageId(round, chunk)` in the workflow, e.g. `r2-c17`; a survey
 *   section's synchronized round prefixes it).
 * @param ranking the query, the round's follow-up question if any (the prior is the higher of the
 *   two), and the run's ranking mode.
 * @returns the message (or null) and one warning per cut.
 */
export function buildMessage(
  chunk: Chunk,
  round: number,
  id: string,
  reply: Pick<SeekResult, 'evidence' | 'spans' | 'score'>,
  ranking?: { question: string; followUp?: string; mode: RankingMode },
): { message: Message | null; warnings: string[] } {
  if (reply.evidence === null || reply.evidence.trim() === '') return { message: null, warnings: [] };
  const located = reply.spans.flatMap((span) => spanToQuotes(chunk, span.start, span.end));
  const { evidence, quotes, warnings } = boundMessageText(reply.evidence, [...located, ...copiesInOtherDocuments(chunk, located)]);
  const sources = [...new Set((quotes.length > 0 ? quotes : chunk.segments).map((q) => q.documentId))];
  const message: Message = { id, round, chunkIndex: chunk.index, score: reply.score, evidence, tokens: countTokens(evidence), quotes, sources };
  if (ranking) {
    const cited = located.length > 0 ? located.map((q) => q.text).join('\n') : evidence;
    // With a follow-up question (round >= 2), a message that answers it ranks by it: the bridge
    // sentence shares few words with the run's question.
    const prior = Math.max(lexicalPrior(ranking.question, cited), ranking.followUp !== undefined ? lexicalPrior(ranking.followUp, cited) : 0);
    Object.assign(message, { score: poolScore(ranking.mode, reply.score, prior), modelScore: reply.score, prior });
  }
  return { message, warnings };
}

/**
 * True when two messages cite exactly the same document ranges (the same set of quotes: document,
 * start, end), whatever their evidence text or score: a round-2 message of a chunk that cites what
 * its round-1 message cited adds nothing to the pool (issue 49: it took two places in KAR's top-k).
 * Messages without quotes never match (nothing located to compare).
 */
export function sameCitations(a: Pick<Message, 'quotes'>, b: Pick<Message, 'quotes'>): boolean {
  if (a.quotes.length === 0 || b.quotes.length === 0) return false;
  const key = (q: Quote): string => `${q.documentId}\u0000${q.start}\u0000${q.end}`;
  const ka = new Set(a.quotes.map(key));
  const kb = new Set(b.quotes.map(key));
  return ka.size === kb.size && [...ka].every((k) => kb.has(k));
}

/**
 * Quotes of the same text in the chunk's other documents: when identical documents (or identical
 * passages) are packed into one chunk, a cited sentence stands in each, and each is a source.
 * At most one copy per document, the first; none for quotes shorter than 16 characters (a short
 * phrase recurs by chance).
 */
function copiesInOtherDocuments(chunk: Chunk, quotes: readonly Quote[]): Quote[] {
  const copies: Quote[] = [];
  for (const quote of quotes) {
    if (quote.text.trim().length < 16) continue;
    for (const seg of chunk.segments) {
      if (seg.documentId === quote.documentId) continue;
      const segText = chunk.text.slice(seg.chunkStart, seg.chunkStart + (seg.end - seg.start));
      const at = segText.indexOf(quote.text);
      if (at === -1) continue;
      const same = (c: Quote): boolean => c.documentId === seg.documentId && c.start === seg.start + at;
      // Not a copy already found, nor a quote the seeking agent cited itself (both copies cited).
      if (copies.some(same) || quotes.some(same)) continue;
      copies.push({ documentId: seg.documentId, start: seg.start + at, end: seg.start + at + quote.text.length, text: quote.text });
    }
  }
  return copies;
}

/**
 * The synchronized messages of the next round: the global top-K, at most `syncMaxMessages`, fitted
 * to `syncBudgetTokens` of evidence (no per-message overhead); none when either bound is 0.
 * @param top the pool's best messages in pool order (at least `syncMaxMessages` when the pool has them).
 */
export function synchronizationSnapshot(top: readonly Message[], options: { syncMaxMessages: number; syncBudgetTokens: number }): Message[] {
  if (options.syncMaxMessages <= 0 || options.syncBudgetTokens <= 0 || top.length === 0) return [];
  return fitToBudget(top.slice(0, options.syncMaxMessages), options.syncBudgetTokens).messages;
}

/**
 * The synchronized messages halved (by evidence tokens, as the snapshot counts them), for one more
 * seek after a context overflow: fewer messages, the first one trimmed when it alone exceeds half.
 * @returns the smaller list and the tokens before and after.
 */
export function halveSynchronized(synchronized: readonly Message[]): { messages: Message[]; before: number; tokens: number } {
  const before = synchronized.reduce((sum, m) => sum + m.tokens, 0);
  const smaller = fitToBudget([...synchronized], Math.floor(before / 2));
  return { messages: smaller.messages, before, tokens: smaller.tokens };
}

/** One KAR step's messages: the top-k fitted to the reasoning budget with {@link MESSAGE_OVERHEAD_TOKENS} per message. */
export function fitForReasoning(topK: readonly Message[], budgetTokens: number): FittedMessages {
  return fitToBudget([...topK], budgetTokens, { overheadTokensPerMessage: MESSAGE_OVERHEAD_TOKENS });
}

/**
 * A KAR step's messages halved after a context overflow: half the tokens (the first message's
 * label overhead is not halved, so a single message is trimmed to half its evidence rather than
 * dropped). May hold no message when nothing is left to send.
 */
export function halveForReasoning(fitted: FittedMessages): FittedMessages {
  const halved = MESSAGE_OVERHEAD_TOKENS + Math.floor((fitted.tokens - MESSAGE_OVERHEAD_TOKENS) / 2);
  return fitToBudget(fitted.messages, Math.max(0, halved), { overheadTokensPerMessage: MESSAGE_OVERHEAD_TOKENS });
}

/**
 * The next KAR step after a refusal at `k` over a pool of `poolSize` messages: k doubles (shared/kar.ts
 * `nextK`), and the round is exhausted when k already covered the pool or when the step was
 * budget-bound (`truncated`: the budget dropped or trimmed messages it was given, so a wider k
 * would give the agent the same text again).
 */
export function afterRefusal(k: number, poolSize: number, truncated: boolean): { k: number; exhausted: boolean } {
  const next = nextK(k, poolSize);
  return { k: next.k, exhausted: next.exhausted || truncated };
}

/**
 * Bound the text a message stores: evidence to `MAX_EVIDENCE_CHARS`, quote text to `MAX_STORED_QUOTE_CHARS`
 * in all (see there). Cuts never split a surrogate pair. Pure; `quotes` is not modified.
 * @returns the kept evidence and quotes, and one warning per cut (empty when nothing was cut).
 */
export function boundMessageText(evidence: string, quotes: Quote[]): { evidence: string; quotes: Quote[]; warnings: string[] } {
  const warnings: string[] = [];
  let keptEvidence = evidence;
  if (evidence.length > MAX_EVIDENCE_CHARS) {
    keptEvidence = evidence.slice(0, codePointCut(evidence, MAX_EVIDENCE_CHARS));
    warnings.push(`evidence of ${evidence.length} characters cut to ${keptEvidence.length} (MAX_EVIDENCE_CHARS)`);
  }
  const kept: Quote[] = [];
  let room = MAX_STORED_QUOTE_CHARS;
  for (const quote of quotes) {
    if (quote.text.length <= room) {
      kept.push(quote);
      room -= quote.text.length;
      continue;
    }
    const cut = codePointCut(quote.text, room);
    if (cut > 0) {
      kept.push({ ...quote, end: quote.start + cut, text: quote.text.slice(0, cut) });
      warnings.push(`quote of ${quote.documentId} [${quote.start}, ${quote.end}) cut to its first ${cut} characters (MAX_STORED_QUOTE_CHARS)`);
    } else {
      warnings.push(
        `quote of ${quote.documentId} [${quote.start}, ${quote.end}) not stored: the message's quotes already hold ${MAX_STORED_QUOTE_CHARS} characters (MAX_STORED_QUOTE_CHARS)`,
      );
    }
    room -= cut;
  }
  return { evidence: keptEvidence, quotes: kept, warnings };
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
