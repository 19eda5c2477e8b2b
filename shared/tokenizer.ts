/**
 * Token counting for budgets and chunking.
 *
 * Library: gpt-tokenizer (pure JavaScript BPE, the `o200k_base` encoding; no network, no native code).
 * Bedrock models use their own tokenizers (Llama 3 uses a 128k-vocabulary BPE of similar
 * granularity), so counts here are an estimate of the model's count: budgets keep a margin for that.
 * Usage figures reported by Bedrock come from the model's response, not from here.
 */
import type * as GptTokenizer from 'gpt-tokenizer';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';

// Loaded on the first count, not at start-up: the o200k ranks take ~0.2-0.4 s to load, which every
// command that never counts (`--help`, `runs ls`, `doctor`, …) would pay (issue 11, item 1).
let library: typeof GptTokenizer | undefined;
const gpt = (): typeof GptTokenizer => (library ??= require('gpt-tokenizer') as typeof GptTokenizer);
const o200kRanks = (): Array<string | number[]> => (require('gpt-tokenizer/bpeRanks/o200k_base') as { default: Array<string | number[]> }).default;

/**
 * Number of tokens of `text` (o200k_base), exactly as gpt-tokenizer counts it, in O(n log n) also for
 * texts with very long pre-tokens (see "Token counting without … quadratic merge" below: the
 * library alone is quadratic there, e.g. minutes for a 1.5 MB line without spaces). Special-token
 * strings in the text are counted as text.
 * @param text any string without lone surrogates.
 * @returns the token count, 0 for an empty text.
 */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  if (hasLongRun(text)) return countTokensMerged(text);
  return countLibraryTokens(text);
}

/**
 * gpt-tokenizer's own count: fast unless the text holds a long run (see `countTokens`). Exported as
 * the reference that test/unit/tokens-linear.test.ts checks `countTokens` against; use `countTokens`.
 */
export function countLibraryTokens(text: string): number {
  return gpt().countTokens(text, { disallowedSpecial: new Set() });
}

/** Token ids of `text` (o200k_base), special-token strings encoded as ordinary text. */
export function encodeTokens(text: string): number[] {
  return gpt().encode(text, { disallowedSpecial: new Set() });
}

// No decodeTokens here on purpose: gpt-tokenizer 4.0.0 decodes through one shared stateful decoder,
// so decoding ids that end inside a character returns "" and corrupts the NEXT decode call with
// U+FFFD. Cut text at token boundaries with `tokenBoundaries` (shared/tokenizer.ts) instead.

/** Name of the encoding, recorded in results and cache keys. */
export const TOKENIZER_NAME = 'gpt-tokenizer/o200k_base';

/** A position in a text that is both a token boundary and a code point boundary. */
export interface TokenBoundary {
  /** Characters (UTF-16 code units) of the text before this boundary. */
  offset: number;
  /** Tokens of the text's encoding before this boundary (an upper bound in the fallback, see below). */
  tokens: number;
}

/**
 * Every position of `text` where a token of its encoding (shared/tokenizer.ts) ends on a whole code
 * point, in increasing order; the last is `{ offset: text.length, tokens: countTokens(text) }`.
 * A token can hold part of a multi-byte character (a CJK character is often 2-3 byte tokens), so such
 * tokens are grouped with the following ones until the character is complete.
 *
 * Why not `decodeTokens` on token prefixes: gpt-tokenizer 4.0.0 decodes with one module-level
 * `TextDecoder` in stream mode, so decoding ids that end inside a character returns "" and leaves
 * the bytes pending, to be prepended (as U+FFFD) to the next, unrelated decode call. Here the whole
 * encoding is decoded in one pass with the library's `decodeGenerator` (which yields only complete
 * characters), counting the ids it has pulled; the pass ends on a complete character, leaving the
 * shared decoder clean. If the pieces ever fail to match the text (a decoder left dirty by another
 * caller), the boundaries fall back to every code point, with `tokens` = UTF-8 bytes so far (an upper
 * bound: a token holds at least one byte).
 * @param text any string without lone surrogates (decoded documents, model output).
 * @returns boundaries, empty for an empty text.
 */
export function tokenBoundaries(text: string): TokenBoundary[] {
  if (hasLongRun(text)) return tokenBoundariesLinear(text);
  const ids = encodeTokens(text);
  let pulled = 0;
  function* counted(): Generator<number> {
    for (const id of ids) {
      pulled++;
      yield id;
    }
  }
  const boundaries: TokenBoundary[] = [];
  let offset = 0;
  let matches = true;
  for (const piece of gpt().decodeGenerator(counted())) {
    // Consume the whole generator even after a mismatch, so that the shared decoder ends clean.
    if (matches && text.startsWith(piece, offset)) {
      offset += piece.length;
      boundaries.push({ offset, tokens: pulled });
    } else {
      matches = false;
    }
  }
  if (matches && offset === text.length) return boundaries;
  return codePointBoundaries(text);
}

/** Fallback of `tokenBoundaries`: every code point boundary, with UTF-8 bytes so far as the token bound. */
function codePointBoundaries(text: string): TokenBoundary[] {
  const boundaries: TokenBoundary[] = [];
  let offset = 0;
  let bytes = 0;
  for (const codePoint of text) {
    offset += codePoint.length;
    const code = codePoint.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    boundaries.push({ offset, tokens: bytes });
  }
  return boundaries;
}

// ---------------------------------------------------------------------------------------------
// Counting a text once, then any of its ranges: the pre-token index
// ---------------------------------------------------------------------------------------------

/**
 * Why: chunking counts paragraphs, sentences and then each final chunk text, which re-encodes every
 * token about twice. A byte-pair encoder counts a text as the sum of its pre-tokens' counts (the
 * pre-tokenizer is one regular expression, `O200K_TOKEN_SPLIT_REGEX`, and each pre-token is merged
 * alone), so one pass over a document that records where each pre-token ends and the running token
 * count answers the count of any range `[start, end)` — also of ranges of several documents joined
 * by a separator — with two lookups, re-encoding only a few hundred characters at each edge.
 *
 * Exactness (checked against `countTokens` on random ranges and joins by
 * test/unit/token-index.test.ts, and by the byte-identity of chunks in test/unit/chunking.test.ts):
 * the regular expression has no look-behind and matches at every position, so the pre-tokens of a
 * string from one of its pre-token boundaries on depend only on the characters after it. A range's
 * own pre-tokens therefore equal the document's from the first document boundary they reach, until
 * the matcher, to decide a pre-token, would look past the range's end. Each alternative of the
 * expression looks at most to the end of the pre-token after the one it matches plus a few characters
 * (a run of white space or letters, a contraction suffix of at most 3), so a document pre-token is
 * taken as is only when the two after it end at least {@link EDGE_MARGIN_CHARS} characters before
 * the range's end; near the edges the range's own text is pre-tokenized again, in windows.
 */

/** See above: characters kept between the last reused pre-token's second successor and a range end. */
const EDGE_MARGIN_CHARS = 8;
/** First window (characters) re-pre-tokenized at a range edge; doubled while it decides no pre-token. */
const EDGE_WINDOW_CHARS = 64;

/** The parts of gpt-tokenizer's encoder that count one pre-token (its merge cache included). */
interface PretokenEncoder {
  getBpeRankFromString(piece: string): number | undefined;
  bytePairEncode(piece: string): number[];
}

/**
 * gpt-tokenizer 4's encoder object (not part of its typed API): counting pre-token by pre-token
 * through it costs what `countTokens` costs. Undefined if a later version moves it; then each
 * pre-token is counted with `countLibraryTokens` (same counts, slower).
 */
let pretokenEncoderFound: { encoder?: PretokenEncoder } | undefined;
function pretokenEncoder(): PretokenEncoder | undefined {
  pretokenEncoderFound ??= (() => {
    const core = (gpt().default as unknown as { bytePairEncodingCoreProcessor?: Partial<PretokenEncoder> }).bytePairEncodingCoreProcessor;
    return typeof core?.getBpeRankFromString === 'function' && typeof core.bytePairEncode === 'function' ? { encoder: core as PretokenEncoder } : {};
  })();
  return pretokenEncoderFound.encoder;
}

/** Tokens of one pre-token, as `countTokens` counts it inside any text. */
function countOnePretoken(piece: string): number {
  // A long pre-token goes to the O(n log n) merge (the library's is quadratic), as in `countTokens`.
  if (piece.length >= LONG_RUN_CHARS) return countPretoken(piece, rankTables());
  const encoder = pretokenEncoder();
  if (encoder === undefined) return countLibraryTokens(piece);
  return encoder.getBpeRankFromString(piece) !== undefined ? 1 : encoder.bytePairEncode(piece).length;
}

/** The pre-token expression, global (`lastIndex`), a private instance. */
const pretokenRegex = (): RegExp => new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu');

/**
 * One document's pre-tokens: where each ends (characters, UTF-16 code units) and the tokens before
 * it. Built in one pass (about the cost of one `countTokens` of the text); 8 bytes per pre-token.
 */
export class TokenIndex {
  /** `ends[k]`: offset of the k-th pre-token boundary; `ends[0]` = 0, the last = `text.length`. */
  private readonly ends: Int32Array;
  /** `counts[k]`: tokens of the text before `ends[k]`. */
  private readonly counts: Int32Array;
  /** Number of boundaries (pre-tokens + 1). */
  private readonly size: number;

  constructor(readonly text: string) {
    let ends = new Int32Array(Math.max(16, (text.length >> 2) + 2));
    let counts = new Int32Array(ends.length);
    let size = 1;
    let tokens = 0;
    const regex = pretokenRegex();
    for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
      tokens += countOnePretoken(match[0]);
      if (size === ends.length) {
        const grownEnds = new Int32Array(ends.length * 2);
        grownEnds.set(ends);
        ends = grownEnds;
        const grownCounts = new Int32Array(counts.length * 2);
        grownCounts.set(counts);
        counts = grownCounts;
      }
      ends[size] = match.index + match[0].length;
      counts[size] = tokens;
      size++;
    }
    this.ends = ends;
    this.counts = counts;
    this.size = size;
  }

  /** Tokens of the whole text (equals `countTokens(text)`). */
  get tokens(): number {
    return this.counts[this.size - 1];
  }

  /** The boundary number at `offset` (characters), or -1 when no pre-token of the text ends there. */
  boundaryAt(offset: number): number {
    const k = this.lastBoundaryAtMost(offset);
    return k >= 0 && this.ends[k] === offset ? k : -1;
  }

  /** Offset (characters) of boundary `k`. */
  offsetOf(k: number): number {
    return this.ends[k];
  }

  /** Tokens between boundaries `from` and `to`. */
  tokensBetween(from: number, to: number): number {
    return this.counts[to] - this.counts[from];
  }

  /** Number of the last boundary. */
  get lastBoundary(): number {
    return this.size - 1;
  }

  /**
   * About where `tokens` tokens after `from` end: the offset (characters) of the last pre-token
   * boundary at or before which the text from `from`'s boundary holds at most `tokens` tokens, and at
   * least `from`. An estimate for placing work (a pre-token is counted whole; the edges of a range
   * are not pre-tokenized again as `countSpans` does), never a count.
   */
  offsetAfterTokens(from: number, tokens: number): number {
    const first = Math.max(0, this.lastBoundaryAtMost(from));
    const target = this.counts[first] + Math.max(0, tokens);
    let low = first;
    let high = this.size - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.counts[mid] <= target) low = mid;
      else high = mid - 1;
    }
    return Math.max(from, this.ends[low]);
  }

  /** The largest boundary number whose offset is <= `offset`, or -1. */
  lastBoundaryAtMost(offset: number): number {
    let low = 0;
    let high = this.size - 1;
    if (offset < 0) return -1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.ends[mid] <= offset) low = mid;
      else high = mid - 1;
    }
    return low;
  }
}

/** A range `[start, end)` (characters) of `text`; with the text's `TokenIndex` when it has one. */
export interface TextSpan {
  text: string;
  start: number;
  end: number;
  index?: TokenIndex;
}

/**
 * Tokens of the concatenation of `spans` (each `text.slice(start, end)`), exactly `countTokens` of
 * that string, without building it: spans with a `TokenIndex` are counted from the index, only
 * their edges are pre-tokenized again (see "the pre-token index" above).
 * @param spans in order; an empty span counts nothing.
 */
export function countSpans(spans: readonly TextSpan[]): number {
  let count = 0;
  let i = 0;
  let at = spans.length > 0 ? spans[0].start : 0;
  const regex = pretokenRegex();
  let window = EDGE_WINDOW_CHARS;
  for (;;) {
    while (i < spans.length && at >= spans[i].end) {
      i++;
      if (i < spans.length) at = spans[i].start;
    }
    if (i >= spans.length) return count;
    // Every position the loop stops at is a pre-token boundary of the joined text.
    const jump = reusableTokens(spans, i, at);
    if (jump !== undefined) {
      count += jump.tokens;
      at = jump.to;
      window = EDGE_WINDOW_CHARS;
      continue;
    }
    // Pre-tokenize a window of the joined text from here.
    const starts: number[] = [];
    const parts: string[] = [];
    let length = 0;
    let j = i;
    let from = at;
    while (j < spans.length && length < window) {
      const to = Math.min(spans[j].end, from + (window - length));
      starts.push(length);
      parts.push(spans[j].text.slice(from, to));
      length += to - from;
      if (to < spans[j].end) break;
      j++;
      if (j < spans.length) from = spans[j].start;
    }
    const local = parts.join('');
    const matchEnds: number[] = [];
    regex.lastIndex = 0;
    for (let match = regex.exec(local); match !== null; match = regex.exec(local)) matchEnds.push(match.index + match[0].length);
    let accepted = matchEnds.length;
    if (j < spans.length) {
      // The window stops before the joined text does: keep the pre-tokens decided without looking past it.
      accepted = 0;
      while (accepted + 2 < matchEnds.length && matchEnds[accepted + 2] + EDGE_MARGIN_CHARS < local.length) accepted++;
    }
    if (accepted === 0) {
      window *= 2;
      continue;
    }
    let previous = 0;
    let part = 0;
    let nextI = i;
    let nextAt = at;
    for (let m = 0; m < accepted; m++) {
      const end = matchEnds[m];
      count += countOnePretoken(local.slice(previous, end));
      previous = end;
      while (part + 1 < starts.length && end >= starts[part + 1]) part++;
      nextI = i + part;
      nextAt = (part === 0 ? at : spans[nextI].start) + (end - starts[part]);
      // Back to the index as soon as it can be used again.
      if (nextAt < spans[nextI].end && reusableTokens(spans, nextI, nextAt) !== undefined) break;
    }
    i = nextI;
    at = nextAt;
    window = EDGE_WINDOW_CHARS;
  }
}

/**
 * The document pre-tokens that `countSpans` may take from span `i`'s index from offset `at` (a
 * boundary of the joined text): their tokens and where they end, or undefined when `at` is no
 * boundary of the document or no pre-token is safe (see "the pre-token index" above).
 */
function reusableTokens(spans: readonly TextSpan[], i: number, at: number): { tokens: number; to: number } | undefined {
  const span = spans[i];
  const { index } = span;
  if (index === undefined) return undefined;
  const k = index.boundaryAt(at);
  if (k < 0) return undefined;
  if (i === spans.length - 1 && span.end === span.text.length) return { tokens: index.tokensBetween(k, index.lastBoundary), to: span.end };
  const safe = index.lastBoundaryAtMost(span.end - EDGE_MARGIN_CHARS - 1) - 2;
  return safe > k ? { tokens: index.tokensBetween(k, safe), to: index.offsetOf(safe) } : undefined;
}

// ---------------------------------------------------------------------------------------------
// Token counting without gpt-tokenizer's quadratic merge on long pre-tokens
// ---------------------------------------------------------------------------------------------

/**
 * Why: gpt-tokenizer 4.0.0 merges the byte pairs of one pre-token by scanning every pair for the
 * lowest rank at each merge, O(n^2) in the pre-token's length. The o200k pre-tokenizer keeps a run
 * of letters of one case (Chinese or Japanese without punctuation, a DNA sequence, a long lowercase
 * identifier) or of symbols as ONE pre-token, so a chunk of such text is one pre-token of thousands
 * of bytes: counting an 8,000-token chunk of unpunctuated Chinese took ~0.4 s, and chunking 1 MB of
 * it 19 s, so ~6 minutes for a 20 MB line (bench/long-line.ts). Here the same byte-pair merge runs
 * with a heap and a linked list, O(n log n), over the same rank table and the same pre-tokenizer
 * (gpt-tokenizer's own, imported from the package), and is used only for texts that hold a long run
 * (`LONG_RUN`); every other text is counted by the library itself. (20 MB line of unpunctuated
 * Chinese after this: ~1 minute of CPU, dominated by ICU word segmentation and the library's counts.)
 *
 * Equivalence with the library (checked by test/unit/tokens-linear.test.ts on random texts): the library
 * counts a pre-token as 1 when it is a token, else merges its UTF-8 bytes, always the pair of
 * lowest rank, the leftmost among equals, where the rank of a pair is the rank of its concatenated
 * bytes (looked up as a string when the bytes are valid UTF-8, else among the byte-array tokens).
 * The heap pops (rank, position) in exactly that order. Special-token strings are plain text, as in
 * `countTokens` of shared/tokenizer.ts.
 */

/**
 * A run of characters that the pre-tokenizer may keep in one pre-token (letters and marks, or
 * symbols and punctuation, or white space) longer than 64 characters: below that the library's
 * merge is fast.
 */
const LONG_RUN = /[\p{L}\p{M}]{65}|[^\s\p{L}\p{N}]{65}|\s{65}/u;
/** Run length of `LONG_RUN`, in UTF-16 code units at least. */
const LONG_RUN_CHARS = 65;

/**
 * Does `text` hold a `LONG_RUN`? An O(n) scan of `charCodeAt` first, with three run lengths in
 * which an ASCII character ends the runs it cannot belong to (a letter ends a symbol run, a digit
 * both, a space both and starts a white-space run; a non-ASCII character continues all but the
 * white-space run unless it is white space itself). Ordinary prose, code and data are rejected
 * without the regular expression, which only confirms. Never misses: a `LONG_RUN` run keeps its
 * counter growing for 65 code units.
 */
function hasLongRun(text: string): boolean {
  let letters = 0;
  let symbols = 0;
  let blanks = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      const space = c === 0x20 || (c >= 0x09 && c <= 0x0d);
      const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
      const digit = c >= 0x30 && c <= 0x39;
      letters = letter ? letters + 1 : 0;
      symbols = !letter && !digit && !space ? symbols + 1 : 0;
      blanks = space ? blanks + 1 : 0;
    } else {
      // Every non-ASCII character of \s (ECMAScript WhiteSpace and LineTerminator).
      const space =
        c === 0xa0 ||
        c === 0x1680 ||
        (c >= 0x2000 && c <= 0x200a) ||
        c === 0x2028 ||
        c === 0x2029 ||
        c === 0x202f ||
        c === 0x205f ||
        c === 0x3000 ||
        c === 0xfeff;
      letters = space ? 0 : letters + 1;
      symbols = space ? 0 : symbols + 1;
      blanks = space ? blanks + 1 : 0;
    }
    if (letters >= LONG_RUN_CHARS || symbols >= LONG_RUN_CHARS || blanks >= LONG_RUN_CHARS) return LONG_RUN.test(text);
  }
  return false;
}

/** The rank tables, built on first use (~0.6 s, ~25 MB of heap, measured) from gpt-tokenizer's o200k_base data. */
interface RankTables {
  /** Tokens that are valid UTF-8, by their text (as the library keys them). */
  byText: Map<string, number>;
  /** Every token the library can find by bytes, keyed by its bytes as a latin1 string (one char per byte). */
  byBytes: Map<string, number>;
  /** Longest token, in bytes: a longer byte pair is never a token. */
  maxTokenBytes: number;
}

let tables: RankTables | undefined;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function rankTables(): RankTables {
  if (tables) return tables;
  const byText = new Map<string, number>();
  const byBytes = new Map<string, number>();
  let maxTokenBytes = 1;
  o200kRanks().forEach((value, rank) => {
    if (typeof value === 'string') {
      byText.set(value, rank);
      // A string with a lone surrogate has no UTF-8 form: the library never finds it by bytes.
      if (LONE_SURROGATE.test(value)) return;
      const bytes = Buffer.from(value, 'utf8');
      byBytes.set(bytes.toString('latin1'), rank);
      maxTokenBytes = Math.max(maxTokenBytes, bytes.length);
      return;
    }
    const bytes = Buffer.from(value);
    // Byte tokens that happen to be valid UTF-8 are looked up as text by the library, so never found.
    if (isUtf8(bytes)) return;
    byBytes.set(bytes.toString('latin1'), rank);
    maxTokenBytes = Math.max(maxTokenBytes, bytes.length);
  });
  tables = { byText, byBytes, maxTokenBytes };
  return tables;
}

/** Is `bytes` well-formed UTF-8? (WHATWG decoder, fatal; as the library's own check, no surrogates, no overlongs.) */
function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The 256 one-byte strings (latin1), keys of single bytes. */
const BYTE_STRINGS = Array.from({ length: 256 }, (_, b) => String.fromCharCode(b));

/**
 * Byte-pair merge of one pre-token's bytes (length >= 2) with a min-heap of (rank, position) and a
 * linked list of parts. Returns the start offset of every resulting token, ascending (the token
 * ends where the next starts; the last ends at `bytes.length`). Each part keeps its bytes as a
 * latin1 string, so a pair's key is the concatenation of two strings (no Buffer conversion).
 */
function mergeBytePairs(bytes: Uint8Array, t: RankTables): number[] {
  const n = bytes.length;
  const next = new Int32Array(n); // next part's start (n at the end)
  const prev = new Int32Array(n); // previous part's start (-1 at the start)
  const rankAt = new Float64Array(n); // rank of the pair (part at i, next part), Infinity when none
  const alive = new Uint8Array(n);
  // oxlint-disable-next-line no-new-array -- preallocated to the part count, every slot written below.
  const text: string[] = new Array<string>(n); // bytes of the part starting at i, latin1
  // Heap of rank * 2^32 + position: smallest rank first, leftmost among equals.
  const heap: number[] = [];
  const push = (key: number): void => {
    let i = heap.length;
    heap.push(key);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent] <= key) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = key;
  };
  const pop = (): number => {
    const top = heap[0];
    const last = heap.pop() as number;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const child = left + 1 < heap.length && heap[left + 1] < heap[left] ? left + 1 : left;
        if (heap[child] >= last) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = last;
    }
    return top;
  };
  const update = (start: number): void => {
    const mid = next[start];
    let rank = Infinity;
    if (mid < n && next[mid] - start <= t.maxTokenBytes) rank = t.byBytes.get(text[start] + text[mid]) ?? Infinity;
    rankAt[start] = rank;
    if (rank !== Infinity) push(rank * 4294967296 + start);
  };
  for (let i = 0; i < n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
    alive[i] = 1;
    text[i] = BYTE_STRINGS[bytes[i]];
  }
  for (let i = 0; i < n; i++) update(i);
  while (heap.length > 0) {
    const key = pop();
    const rank = Math.floor(key / 4294967296);
    const start = key - rank * 4294967296;
    if (!alive[start] || rankAt[start] !== rank) continue; // stale entry
    const mid = next[start];
    const end = next[mid];
    alive[mid] = 0;
    text[start] += text[mid];
    next[start] = end;
    if (end < n) prev[end] = start;
    update(start);
    if (prev[start] >= 0) update(prev[start]);
  }
  const starts: number[] = [];
  for (let i = 0; i < n; i = next[i]) starts.push(i);
  return starts;
}

/** Tokens of one pre-token (as `countTokens` counts it). */
function countPretoken(piece: string, t: RankTables): number {
  if (t.byText.has(piece)) return 1;
  const bytes = Buffer.from(piece, 'utf8');
  return bytes.length <= 1 ? bytes.length : mergeBytePairs(bytes, t).length;
}

/** The count of a text that holds a long run: the heap merge above, one pre-token at a time. */
function countTokensMerged(text: string): number {
  const t = rankTables();
  let count = 0;
  for (const [piece] of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) count += countPretoken(piece, t);
  return count;
}

/**
 * `tokenBoundaries` computed from the merge above: for each pre-token, its tokens' byte lengths;
 * a boundary after every token that ends on a code point boundary. Used for texts with a long run.
 */
function tokenBoundariesLinear(text: string): TokenBoundary[] {
  const t = rankTables();
  const boundaries: TokenBoundary[] = [];
  let offset = 0;
  let tokens = 0;
  for (const [piece] of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) {
    const bytes = Buffer.from(piece, 'utf8');
    const ends = t.byText.has(piece) || bytes.length <= 1 ? [bytes.length] : [...mergeBytePairs(bytes, t).slice(1), bytes.length];
    // Walk the pre-token's code points, emitting a boundary where a token end meets one.
    let byte = 0;
    let unit = 0;
    let e = 0;
    for (const codePoint of piece) {
      const code = codePoint.codePointAt(0) ?? 0;
      byte += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
      unit += codePoint.length;
      while (e < ends.length && ends[e] < byte) e++;
      if (e < ends.length && ends[e] === byte) boundaries.push({ offset: offset + unit, tokens: tokens + e + 1 });
    }
    tokens += ends.length;
    offset += piece.length;
  }
  return boundaries;
}
