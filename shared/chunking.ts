/**
 * Token-aware chunking of a corpus: the fixed-size chunks of the paper (section 2A: each seeking agent
 * reads one chunk of at most L tokens), cut at the most natural boundary available.
 *
 * Guarantees (checked by test/unit/chunking.test.ts):
 * - every chunk's text has at most `chunkTokens` tokens, exactly as `countTokens` counts the final
 *   text (BPE counts of a concatenation can differ from the sum of its parts, so the final text's
 *   count is exact, taken from the documents' pre-token indexes: `countSpans`, shared/tokenizer.ts);
 * - nothing is dropped: for every document, its segments in chunk order cover `[0, text.length)`
 *   contiguously, white space included, so each document is exactly recoverable;
 * - no cut falls inside an extended grapheme cluster (UAX #29: an emoji ZWJ sequence, a letter with
 *   its combining marks, a flag, CRLF), except inside a single cluster that alone exceeds L, which is
 *   then cut between code points; so never inside a code point (no lone surrogate, no U+FFFD);
 * - chunks are in corpus order, `index` 0..n-1; small documents are packed together.
 *
 * How: each document is split lazily into pieces, coarse first (paragraphs), and a piece is refined
 * into sentences, then words, then tokens, then graphemes, then code points only when it must be (it alone exceeds L,
 * or it does not fit and the chunk is less than three quarters full). A paragraph longer than 16,384
 * characters is split into sentences only where the chunk can close (`refineToSentences`), so a
 * corpus of one-paragraph documents (SOTU) is not segmented whole. Pieces are counted once each
 * and packed greedily; when the next piece does not fit, the chunk is closed at the strongest
 * boundary that keeps it at least three quarters full (the latest such one), the pieces after the cut
 * go back to the queue, and the final text is counted once. Every count (a piece, a final text) is a
 * count of ranges of documents, read from each document's pre-token index (`TokenIndex`: one
 * encoding pass over the document, built when its first piece is counted, dropped when its last
 * chunk closes), so each token is encoded about once; only a few dozen characters at each range edge
 * are pre-tokenized again. Documents can be fed one at a time (`ChunkStream`), so a corpus is never
 * held whole. Measured on SOTU at L=8000 (bench/orchestration.ts, `chunkingRatio`): see docs/PERFORMANCE.md.
 */
import { InvalidInputError } from './errors';
import { codePointCuts, GraphemeBoundaries, SEGMENT_WINDOW_CHARS, segmentCuts } from './unicode';
import { countSpans, countTokens, tokenBoundaries, TokenIndex, type TextSpan } from './tokenizer';
import type { Chunk, ChunkSegment, SourceDocument } from './types';

/** Options of `chunkCorpus`. */
export interface ChunkingOptions {
  /**
   * Maximum tokens per chunk (L in the paper), counted with shared/tokenizer.ts. Integer >= 4 (one code
   * point is at most 4 UTF-8 bytes, hence at most 4 tokens); run options allow 64..200000.
   */
  chunkTokens: number;
}

/** Separator between segments of different documents inside one chunk text. */
export const SEGMENT_SEPARATOR = '\n\n';

/** Smallest accepted `chunkTokens`: a single code point is at most 4 byte-level tokens. */
export const MIN_CHUNK_TOKENS = 4;

/** Boundary strengths (lower = stronger) and piece granularities. A document start counts as a paragraph. */
const PARAGRAPH = 1;
const SENTENCE = 2;
const WORD = 3;
const TOKEN = 4;
const GRAPHEME = 5;
const CODE_POINT = 6;
type Level = typeof PARAGRAPH | typeof SENTENCE | typeof WORD | typeof TOKEN | typeof GRAPHEME | typeof CODE_POINT;

/**
 * A chunk is closed at the strongest boundary that keeps it at least this full (share of L, by the
 * estimate). Measured at L=8000 (bench/tokenize.ts): 0.5 gives 301 SOTU chunks of 6909 tokens on
 * average (cuts at speech ends) and 110 chunks of 5460 for the Chinese novel (one per chapter); 0.75
 * gives 278 of 7480 and 79 of 7603. The paper uses fixed-size chunks and every chunk costs a seeking
 * agent call per round, so chunks stay nearly full and a natural boundary is sought in the last quarter.
 */
const MIN_FILL = 0.75;

/**
 * A paragraph or sentence longer than this many characters per token of L is split one level finer
 * without being counted first: it almost surely exceeds L, and splitting never loses a boundary (only
 * adds weaker ones), so this only saves counting it twice.
 */
const EAGER_SPLIT_CHARS_PER_TOKEN = 2;

/**
 * The same for a word (a run without white space: base64, a DNA sequence, minified data, Chinese
 * without punctuation), which has at most ~2 characters per token in practice (measured with
 * bench/long-line.ts: base64 1.4, DNA 2.1): such a word longer than 4 characters per token of L goes
 * to token pieces without being counted whole first. Token counting is O(n log n) in the length of
 * a run (`countTokens`), so this saves one pass over a long line, not a blow-up.
 */
const EAGER_SPLIT_WORD_CHARS_PER_TOKEN = 4;

/**
 * Sentences of a paragraph are sought from this share of L before the chunk's minimum fill
 * (`refineToSentences`): the estimate of a piece counted whole differs a little from the sum of its
 * sentences' counts, so a few sentences below MIN_FILL keep a boundary near it.
 */
const SENTENCE_WINDOW_SLACK = 1 / 16;

/**
 * A paragraph longer than this (characters) is split into sentences only where the chunk can close
 * (`refineToSentences`); a shorter one is segmented whole, which costs little and keeps the cuts of
 * chunking version 2 for text with ordinary paragraphs.
 */
const WINDOWED_SENTENCES_MIN_CHARS = SEGMENT_WINDOW_CHARS;

/** Characters segmented past where the chunk is full, at first (doubled until a sentence boundary is found there). */
const SENTENCE_LOOKAHEAD_CHARS = 512;

/** Locale fixed for determinism (UAX #29 rules; CJK words use ICU's dictionary whatever the locale). */
const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
const wordSegmenter = new Intl.Segmenter('en', { granularity: 'word' });

/** Estimated tokens of the separator between two documents' segments. */
const SEPARATOR_TOKENS = countTokens(SEGMENT_SEPARATOR);

/** A contiguous slice `[start, end)` of one document, the unit of packing. */
interface Piece {
  /** Index of the document in the corpus. */
  doc: number;
  start: number;
  end: number;
  /** Strength of the boundary at `start`. */
  boundary: Level;
  /** Granularity the piece was made at; refining goes one level finer. */
  grain: Level;
  /** Token count of the piece text alone; -1 until counted. */
  tokens: number;
}

/**
 * Split a corpus into chunks of at most `chunkTokens` tokens, in corpus order.
 *
 * The chunk text is the chunk's segments' texts joined by `SEGMENT_SEPARATOR` ("\n\n", between
 * documents; the separator belongs to no segment). Boundaries are preferred in this order: paragraph
 * (a blank line; a document start counts as one), sentence (UAX #29 via `Intl.Segmenter`, which also
 * ends a sentence at a line break), word (UAX #29 words; dictionary-based for Chinese and Japanese),
 * token, code point. Documents with empty text yield no segment.
 *
 * @param docs documents in corpus order, with distinct ids.
 * @param options `chunkTokens`: L, in tokens of shared/tokenizer.ts.
 * @returns chunks with `index` 0..n-1, exact `tokens` (of the text) and `chars` (UTF-16 code units).
 * @throws InvalidInputError when `chunkTokens` is not an integer >= 4 or two documents share an id.
 */
export function chunkCorpus(docs: SourceDocument[], options: ChunkingOptions): Chunk[] {
  const stream = new ChunkStream(options);
  const ids = new Set<string>();
  for (const doc of docs) {
    if (ids.has(doc.id)) throw new InvalidInputError(`Two documents have the same id: ${doc.id}`);
    ids.add(doc.id);
  }
  const chunks: Chunk[] = [];
  for (const doc of docs) for (const chunk of stream.add(doc)) chunks.push(chunk);
  for (const chunk of stream.end()) chunks.push(chunk);
  return chunks;
}

/** A document being chunked, with its pre-token index once a piece of it was counted. */
interface DocEntry {
  doc: SourceDocument;
  index?: TokenIndex;
}

/**
 * `chunkCorpus` one document at a time, for callers that must not hold the whole corpus (Prepare):
 * `add` each document in corpus order, then `end`; each call returns the chunks it closed, and the
 * chunks of all calls are exactly `chunkCorpus`'s. Only the documents of the chunk being filled are
 * kept (a chunk never reaches back past them).
 */
export class ChunkStream {
  private readonly chunker: Chunker;
  private readonly ids = new Set<string>();

  /** @throws InvalidInputError when `chunkTokens` is not an integer >= 4. */
  constructor(options: ChunkingOptions) {
    const limit = options.chunkTokens;
    if (!Number.isInteger(limit) || limit < MIN_CHUNK_TOKENS) {
      throw new InvalidInputError(`chunkTokens must be an integer >= ${MIN_CHUNK_TOKENS}, got ${String(limit)}`);
    }
    this.chunker = new Chunker(limit);
  }

  /**
   * Add the next document (empty text: no segment).
   * @returns the chunks closed meanwhile, in order.
   * @throws InvalidInputError when a document of the same id was added before.
   */
  add(doc: SourceDocument): Chunk[] {
    if (this.ids.has(doc.id)) throw new InvalidInputError(`Two documents have the same id: ${doc.id}`);
    this.ids.add(doc.id);
    return this.chunker.add(doc);
  }

  /** No more documents: the last chunks. */
  end(): Chunk[] {
    return this.chunker.drain(true);
  }
}

/** The packing loop; one instance per corpus. */
class Chunker {
  /** Chunks closed since the last `drain`. */
  private closed: Chunk[] = [];
  private chunkCount = 0;
  /** Pieces still to pack, the next one last. */
  private readonly stack: Piece[] = [];
  /** Pieces of the chunk being filled, in order. */
  private current: Piece[] = [];
  /** Estimated tokens of the chunk being filled (sum of piece counts plus separators). */
  private estimate = 0;
  private nextDoc = 0;
  /** The documents pieces may still refer to, by their number in the corpus. */
  private readonly docs = new Map<number, DocEntry>();
  private readonly minFillTokens: number;

  constructor(private readonly limit: number) {
    this.minFillTokens = MIN_FILL * limit;
  }

  add(doc: SourceDocument): Chunk[] {
    const number = this.nextDoc++;
    this.docs.set(number, { doc });
    this.pushParagraphs(number);
    return this.drain(false);
  }

  /** Pack until every queued piece is placed (and, when `ending`, the last chunk is closed). */
  drain(ending: boolean): Chunk[] {
    for (;;) {
      const piece = this.stack.at(-1);
      if (piece === undefined) {
        if (ending && this.current.length > 0) {
          this.closeChunk(PARAGRAPH); // end of corpus
          continue;
        }
        break;
      }
      if (piece.tokens < 0) {
        const chars = piece.end - piece.start;
        const eager =
          (piece.grain <= SENTENCE && chars > EAGER_SPLIT_CHARS_PER_TOKEN * this.limit) ||
          (piece.grain === WORD && chars > EAGER_SPLIT_WORD_CHARS_PER_TOKEN * this.limit);
        if (eager) {
          this.refineTop();
          continue;
        }
        piece.tokens = countSpans([this.spanOf(piece.doc, piece.start, piece.end)]);
      }
      const cost = this.costOf(piece);
      if (this.estimate + cost <= this.limit) {
        this.stack.pop();
        this.current.push(piece);
        this.estimate += cost;
      } else if (this.estimate < this.minFillTokens && (piece.grain < GRAPHEME || (piece.grain === GRAPHEME && piece.tokens > this.limit))) {
        // Fill the chunk with parts of the piece rather than leave it mostly empty; but a grapheme
        // cluster is never split to fill a chunk, only when it alone exceeds L.
        this.refineTop();
      } else if (this.current.length > 0) {
        this.closeChunk(piece.boundary);
      } else {
        // Unreachable for chunkTokens >= 4: a code point alone is at most 4 tokens.
        throw new InvalidInputError(`chunkTokens ${this.limit} is too small for one character of ${this.docOf(piece.doc).id}`);
      }
    }
    // Only the documents of the chunk being filled can be read again.
    const keep = new Set(this.current.map((p) => p.doc));
    for (const number of this.docs.keys()) if (!keep.has(number)) this.docs.delete(number);
    const closed = this.closed;
    this.closed = [];
    return closed;
  }

  private docOf(number: number): SourceDocument {
    return (this.docs.get(number) as DocEntry).doc;
  }

  /** `[start, end)` of a document as a span to count, with the document's pre-token index (built on first use). */
  private spanOf(number: number, start: number, end: number): TextSpan {
    const entry = this.docs.get(number) as DocEntry;
    entry.index ??= new TokenIndex(entry.doc.text);
    return { text: entry.doc.text, start, end, index: entry.index };
  }

  private textOf(piece: Piece): string {
    return this.docOf(piece.doc).text.slice(piece.start, piece.end);
  }

  /** Tokens `piece` adds to the current chunk, with the separator when it starts another document. */
  private costOf(piece: Piece): number {
    const last = this.current.at(-1);
    return piece.tokens + (last !== undefined && last.doc !== piece.doc ? SEPARATOR_TOKENS : 0);
  }

  /** Queue a document's paragraphs: cuts after each run of blank lines (the white space stays with the paragraph before). */
  private pushParagraphs(doc: number): void {
    const { text } = this.docOf(doc);
    if (text.length === 0) return;
    const cuts: number[] = [];
    const clusters = new GraphemeBoundaries(text);
    for (const match of text.matchAll(/\n[^\S\n]*\n\s*/g)) {
      const end = match.index + match[0].length;
      // White space then a combining mark is one cluster: no paragraph cut inside it.
      if (match.index > 0 && end < text.length && clusters.has(end)) cuts.push(end);
    }
    this.pushPieces(doc, 0, text.length, cuts, PARAGRAPH, PARAGRAPH);
  }

  /**
   * Push pieces `[start, cuts[0]), [cuts[0], cuts[1]), …, [cuts[n-1], end)` (absolute offsets, strictly
   * increasing, inside (start, end)) onto the stack so that the first is on top. The first piece keeps
   * `firstBoundary`; the others start at a boundary of strength `grain`.
   */
  private pushPieces(doc: number, start: number, end: number, cuts: number[], firstBoundary: Level, grain: Level, tokens?: number[]): void {
    for (let i = cuts.length; i >= 0; i--) {
      const pieceStart = i === 0 ? start : cuts[i - 1];
      const pieceEnd = i === cuts.length ? end : cuts[i];
      this.stack.push({ doc, start: pieceStart, end: pieceEnd, boundary: i === 0 ? firstBoundary : grain, grain, tokens: tokens?.[i] ?? -1 });
    }
  }

  /** Replace the top piece by its parts one granularity finer. */
  private refineTop(): void {
    const piece = this.stack.pop() as Piece;
    const grain = (piece.grain + 1) as Level;
    if (grain === SENTENCE && piece.end - piece.start > WINDOWED_SENTENCES_MIN_CHARS) {
      this.refineToSentences(piece);
      return;
    }
    const text = this.textOf(piece);
    const clusters = new GraphemeBoundaries(text);
    let cuts: number[];
    let tokens: number[] | undefined;
    switch (grain) {
      case SENTENCE:
        cuts = segmentCuts(text, sentenceSegmenter, (s) => /\S/.test(s.segment));
        break;
      case WORD:
        cuts = NEEDS_DICTIONARY.test(text) ? segmentCuts(text, wordSegmenter, (s) => s.isWordLike === true) : wordStarts(text);
        break;
      case TOKEN: {
        // Token pieces take their counts from the boundaries (tokens between two boundaries in the
        // text's own encoding): one pass instead of one count per token. Counts are estimates for
        // packing; the final chunk text is counted exactly. A token boundary inside a grapheme
        // cluster (a byte-level BPE token may end between a letter and its combining mark) is
        // dropped and the counts of the tokens it separated are added.
        const boundaries = tokenBoundaries(text);
        cuts = [];
        tokens = [];
        let previous = 0;
        for (const boundary of boundaries) {
          if (boundary.offset < text.length && !clusters.has(boundary.offset)) continue;
          tokens.push(boundary.tokens - previous);
          previous = boundary.tokens;
          if (boundary.offset < text.length) cuts.push(boundary.offset);
        }
        break;
      }
      case GRAPHEME:
        cuts = codePointCuts(text).filter((offset) => clusters.has(offset));
        break;
      default:
        // Only a piece that is one grapheme cluster gets here (it alone exceeds L): code points.
        cuts = codePointCuts(text);
    }
    // Sentence and word boundaries of Intl.Segmenter respect clusters, except a forced cut in a
    // very long segment; `wordStarts` may start a word at a joiner or mark: both are filtered here.
    if (grain === SENTENCE || grain === WORD) cuts = cuts.filter((offset) => clusters.has(offset));
    this.pushPieces(
      piece.doc,
      piece.start,
      piece.end,
      cuts.map((c) => piece.start + c),
      piece.boundary,
      grain,
      tokens,
    );
  }

  /**
   * Replace the top piece (a paragraph of more than WINDOWED_SENTENCES_MIN_CHARS characters) by
   * sentences, segmenting only the part of it where the chunk being filled can close
   * (CHUNKING_VERSION 3; before, the whole paragraph was segmented, and a
   * SOTU address is one paragraph of ~46,000 characters). By the document's pre-token index, the
   * piece's first `noCutBelow` tokens would leave the chunk under MIN_FILL at any cut, so they stay
   * one piece (not segmented, counted once); sentences are sought from there to a little past where
   * the chunk is full (`reach`), the window growing until a sentence boundary past `reach` is found
   * or the piece ends; the rest of the paragraph goes back to the queue as one piece starting at a
   * sentence boundary, refined the same way when its turn comes. Measured on SOTU
   * (`npx tsx bench/chunk-stats.ts`): 37% of the corpus's characters segmented at L = 8000, 66% at
   * 1000, where version 2 segmented all of them (the windows' fixed look-ahead weighs more in small
   * chunks). Text with few sentence
   * ends grows the window (each growth segments it again, so at most about twice its characters); a
   * paragraph with none is segmented to its end once and then split at words, as before. Cuts are
   * filtered to grapheme cluster boundaries, as every cut is.
   */
  private refineToSentences(piece: Piece): void {
    const { text } = this.docOf(piece.doc);
    const index = this.spanOf(piece.doc, piece.start, piece.end).index as TokenIndex;
    const clusters = new GraphemeBoundaries(text);
    const last = this.current.at(-1);
    const separator = last !== undefined && last.doc !== piece.doc ? SEPARATOR_TOKENS : 0;
    const room = this.limit - this.estimate - separator;
    const noCutBelow = this.minFillTokens - this.estimate - separator - this.limit * SENTENCE_WINDOW_SLACK;
    const from = noCutBelow > 0 ? Math.min(piece.end, index.offsetAfterTokens(piece.start, noCutBelow)) : piece.start;
    const reach = Math.min(piece.end, index.offsetAfterTokens(piece.start, room));
    let lookahead = SENTENCE_LOOKAHEAD_CHARS;
    let to: number;
    let cuts: number[];
    for (;;) {
      to = Math.min(piece.end, reach + lookahead);
      // A forced cut of a 65,536-character run without a sentence end is no sentence end: dropped.
      cuts = segmentCuts(text.slice(from, to), sentenceSegmenter, (s) => /\S/.test(s.segment), false)
        .map((cut) => from + cut)
        .filter((offset) => offset > piece.start && clusters.has(offset));
      if (to === piece.end) break;
      // The window's last boundary was decided without the text after the window: not kept.
      cuts.pop();
      if (cuts.length > 0 && (cuts.at(-1) as number) > reach) break;
      lookahead *= 2;
    }
    let end = piece.end;
    if (to < piece.end) {
      end = cuts.pop() as number;
      this.stack.push({ doc: piece.doc, start: end, end: piece.end, boundary: SENTENCE, grain: piece.grain, tokens: -1 });
    }
    this.pushPieces(piece.doc, piece.start, end, cuts, piece.boundary, SENTENCE);
    // The first piece holds the unsegmented part (below the minimum fill, so it fits): counted now,
    // or the eager rule would split a long one into words without counting it.
    const first = this.stack.at(-1) as Piece;
    first.tokens = countSpans([this.spanOf(first.doc, first.start, first.end)]);
  }

  /**
   * Close the chunk being filled. The cut is the strongest boundary (the latest among equals) that
   * keeps the chunk at least `MIN_FILL` full; `endBoundary` is the strength of the boundary after the
   * last piece. The final text is counted; if it exceeds L (BPE merges across pieces), the cut moves
   * back by the excess until it fits (one piece alone always fits: it was counted alone). Pieces
   * after the cut go back to the queue.
   */
  private closeChunk(endBoundary: Level): void {
    const pieces = this.current;
    // fills[i] = estimated tokens of pieces[0, i)
    const fills = [0];
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i];
      const separator = i > 0 && pieces[i - 1].doc !== piece.doc ? SEPARATOR_TOKENS : 0;
      fills.push(fills[i] + separator + piece.tokens);
    }
    const strengthAt = (i: number): Level => (i < pieces.length ? pieces[i].boundary : endBoundary);

    let cut = this.chooseCut(fills, pieces.length, Number.POSITIVE_INFINITY, strengthAt);
    for (;;) {
      const tokens = countSpans(this.spansOf(pieces.slice(0, cut)));
      if (tokens <= this.limit || cut === 1) {
        const { text, segments } = this.assemble(pieces.slice(0, cut));
        this.closed.push({ index: this.chunkCount++, tokens, chars: text.length, segments, text });
        break;
      }
      cut = this.chooseCut(fills, cut - 1, fills[cut] - (tokens - this.limit), strengthAt);
    }
    for (let i = pieces.length - 1; i >= cut; i--) this.stack.push(pieces[i]);
    this.current = [];
    this.estimate = 0;
  }

  /**
   * The cut index in [1, maxCut] whose estimated fill is at most `maxFill`: among those at least
   * `MIN_FILL` full, the strongest boundary (latest among equals); else the latest that fits; else 1.
   */
  private chooseCut(fills: number[], maxCut: number, maxFill: number, strengthAt: (i: number) => Level): number {
    let best = -1;
    let fallback = 1;
    for (let i = maxCut; i >= 1; i--) {
      const fill = fills[i];
      if (fill > maxFill) continue;
      if (fallback === 1 && i > 1) fallback = i;
      if (fill < this.minFillTokens) break;
      if (best === -1 || strengthAt(i) < strengthAt(best)) best = i;
    }
    return best !== -1 ? best : fallback;
  }

  /** The chunk text of `pieces` as spans to count: one per run of pieces of one document, separators between. */
  private spansOf(pieces: Piece[]): TextSpan[] {
    const spans: TextSpan[] = [];
    let i = 0;
    while (i < pieces.length) {
      let j = i;
      while (j + 1 < pieces.length && pieces[j + 1].doc === pieces[i].doc) j++;
      if (spans.length > 0) spans.push({ text: SEGMENT_SEPARATOR, start: 0, end: SEGMENT_SEPARATOR.length });
      spans.push(this.spanOf(pieces[i].doc, pieces[i].start, pieces[j].end));
      i = j + 1;
    }
    return spans;
  }

  /** Segments (one per run of consecutive pieces of one document) and the chunk text. */
  private assemble(pieces: Piece[]): { text: string; segments: ChunkSegment[] } {
    const segments: ChunkSegment[] = [];
    const parts: string[] = [];
    let chunkOffset = 0;
    let i = 0;
    while (i < pieces.length) {
      const first = pieces[i];
      let j = i;
      while (j + 1 < pieces.length && pieces[j + 1].doc === first.doc) j++;
      const last = pieces[j];
      const doc = this.docOf(first.doc);
      if (segments.length > 0) chunkOffset += SEGMENT_SEPARATOR.length;
      segments.push({ documentId: doc.id, start: first.start, end: last.end, chunkStart: chunkOffset });
      parts.push(doc.text.slice(first.start, last.end));
      chunkOffset += last.end - first.start;
      i = j + 1;
    }
    return { text: parts.join(SEGMENT_SEPARATOR), segments };
  }
}

/**
 * Scripts written without spaces between words, which need ICU's dictionary-based word segmentation
 * (Intl.Segmenter); other text is split by `wordStarts`, ~100x faster than Intl.Segmenter's word
 * granularity (measured: 2.9 s for a 1 MB one-line JSON document).
 */
const NEEDS_DICTIONARY = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/**
 * Offsets (relative to `text`, inside (0, text.length)) where a word starts: a letter, digit or mark
 * (or any character that is not white space, punctuation or a symbol) after one that is; white space,
 * punctuation and symbols stay with the word before them, as with `Intl.Segmenter` words above.
 * Hand-written (one regular expression) for speed, for scripts that separate words by spaces.
 */
function wordStarts(text: string): number[] {
  const cuts: number[] = [];
  for (const match of text.matchAll(/[^\s\p{P}\p{S}]+/gu)) if (match.index > 0) cuts.push(match.index);
  return cuts;
}
