/**
 * Decoding corpus objects (raw bytes) into `SourceDocument`s, or skipping them with a reason.
 *
 * Only UTF-8 text is read. The decoder is strict (WHATWG Encoding Standard, `TextDecoder` with
 * `fatal: true`): a document with any ill-formed byte sequence is skipped with the byte offset, never
 * turned into U+FFFD-garbled text that a seeking agent would quote. Binary files are recognised by
 * their magic numbers (file signatures) or by NUL bytes before decoding is tried.
 *
 * Also here: `tokenBoundaries`, the positions in a text where a token ends on a whole code point
 * (used to cut at token boundaries without breaking a character), and `countTokensLinear`, exactly
 * `countTokens` but without the library's quadratic cost on very long pre-tokens (chunking).
 */
import { TextDecoder } from 'node:util';
import { decodeGenerator } from 'gpt-tokenizer';
import o200kRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { InvalidInputError } from './errors';
import { countTokens, encodeTokens } from './tokenizer';
import type { SkippedDocument, SourceDocument } from './types';

/** Result of `decodeDocument`: the decoded document, or why it was skipped. */
export type DecodeResult = { doc: SourceDocument } | { skipped: SkippedDocument };

/**
 * File signatures of common binary formats, checked at the start of the bytes.
 * Hand-written: the well-kept detector (`file-type`) is ESM-only, which this CommonJS project cannot
 * load, and only these few signatures are needed to name what a skipped file looks like. Formats
 * whose bytes are not valid UTF-8 are rejected anyway; the table only gives the reason a name.
 * Sources: the formats' specifications (PNG: RFC 2083 section 3.1; GZIP: RFC 1952 section 2.3.1;
 * ZIP: PKWARE APPNOTE 4.3.7; PDF: ISO 32000-1 section 7.5.2).
 */
const SIGNATURES: ReadonlyArray<{ name: string; offset: number; bytes: readonly number[] }> = [
  { name: 'PNG image', offset: 0, bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { name: 'JPEG image', offset: 0, bytes: [0xff, 0xd8, 0xff] },
  { name: 'GIF image', offset: 0, bytes: [0x47, 0x49, 0x46, 0x38] }, // "GIF8"
  { name: 'WebP image', offset: 8, bytes: [0x57, 0x45, 0x42, 0x50] }, // "RIFF....WEBP"
  { name: 'PDF document', offset: 0, bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] }, // "%PDF-"
  { name: 'ZIP archive (or an Office/EPUB document)', offset: 0, bytes: [0x50, 0x4b, 0x03, 0x04] },
  { name: 'ZIP archive (empty)', offset: 0, bytes: [0x50, 0x4b, 0x05, 0x06] },
  { name: 'GZIP archive', offset: 0, bytes: [0x1f, 0x8b] },
  { name: 'BZIP2 archive', offset: 0, bytes: [0x42, 0x5a, 0x68] }, // "BZh"
  { name: 'XZ archive', offset: 0, bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] },
  { name: '7-Zip archive', offset: 0, bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] },
  { name: 'Zstandard archive', offset: 0, bytes: [0x28, 0xb5, 0x2f, 0xfd] },
  { name: 'RAR archive', offset: 0, bytes: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07] }, // "Rar!\x1A\x07"
  { name: 'legacy Microsoft Office document (OLE2)', offset: 0, bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1] },
  { name: 'ELF executable', offset: 0, bytes: [0x7f, 0x45, 0x4c, 0x46] },
  { name: 'WebAssembly module', offset: 0, bytes: [0x00, 0x61, 0x73, 0x6d] },
  { name: 'SQLite database', offset: 0, bytes: [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65, 0x20, 0x66, 0x6f, 0x72, 0x6d, 0x61, 0x74, 0x20, 0x33, 0x00] },
];

/** Byte order marks of encodings other than UTF-8 (Unicode 15, section 23.8). UTF-32 first: it starts like UTF-16 LE. */
const FOREIGN_BOMS: ReadonlyArray<{ name: string; bytes: readonly number[] }> = [
  { name: 'UTF-32 LE', bytes: [0xff, 0xfe, 0x00, 0x00] },
  { name: 'UTF-32 BE', bytes: [0x00, 0x00, 0xfe, 0xff] },
  { name: 'UTF-16 LE', bytes: [0xff, 0xfe] },
  { name: 'UTF-16 BE', bytes: [0xfe, 0xff] },
];

/** Block size (bytes) of the linear scan that locates the first ill-formed UTF-8 sequence. */
const SCAN_BLOCK_BYTES = 64 * 1024;

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + signature.length) return false;
  for (let i = 0; i < signature.length; i++) if (bytes[offset + i] !== signature[i]) return false;
  return true;
}

const hex = (byte: number): string => `0x${byte.toString(16).padStart(2, '0')}`;

/** Does `bytes` (one piece, continuing a stream) decode as UTF-8 so far? `stream: true` tolerates a trailing incomplete sequence. */
function decodesAsStream(decoder: TextDecoder, bytes: Uint8Array): boolean {
  try {
    decoder.decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Byte offset of the first ill-formed UTF-8 sequence of `bytes` (its lead byte when a multi-byte
 * sequence is cut short, else the offending byte), or `bytes.length` when the bytes end inside a
 * multi-byte character.
 * Called only after a fatal decode failed. Uses the platform decoder, not a hand-written one: a linear
 * scan in blocks finds the failing block, then a binary search over prefixes of that block (each
 * decoded in stream mode from a character boundary) finds the byte. O(n + B log B) for block size B.
 */
function invalidUtf8Offset(bytes: Uint8Array): number {
  const streaming = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let blockStart = 0;
  while (blockStart < bytes.length) {
    const blockEnd = Math.min(bytes.length, blockStart + SCAN_BLOCK_BYTES);
    if (!decodesAsStream(streaming, bytes.subarray(blockStart, blockEnd))) break;
    blockStart = blockEnd;
  }
  if (blockStart >= bytes.length) return bytes.length; // every byte continued a sequence: truncated at the end
  // Restart at a character boundary at or before the block (the bytes before it were well-formed):
  // back up over at most 3 continuation bytes (10xxxxxx) to the lead byte of a pending sequence.
  let restart = blockStart;
  while (restart > 0 && blockStart - restart < 3 && ((bytes[restart] ?? 0) & 0xc0) === 0x80) restart--;
  const blockEnd = Math.min(bytes.length, blockStart + SCAN_BLOCK_BYTES);
  // Smallest `end` in (restart, blockEnd] such that bytes[restart, end) fails to decode in stream mode.
  let lo = restart + 1;
  let hi = blockEnd;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const ok = decodesAsStream(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }), bytes.subarray(restart, mid));
    if (ok) lo = mid + 1;
    else hi = mid;
  }
  const failing = lo - 1;
  // When the bytes before the failing one end inside a sequence (e.g. E4 B8 41), that sequence is the
  // ill-formed one: report its lead byte rather than the well-formed byte that interrupted it.
  let complete = true;
  try {
    new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(restart, failing));
  } catch {
    complete = false;
  }
  return complete ? failing : truncatedSequenceStart(bytes.subarray(0, failing));
}

/** Offset of the lead byte of the incomplete multi-byte sequence at the end of `bytes`. */
function truncatedSequenceStart(bytes: Uint8Array): number {
  let i = bytes.length - 1;
  while (i > 0 && bytes.length - i < 4 && ((bytes[i] ?? 0) & 0xc0) === 0x80) i--;
  return i;
}

const skip = (documentId: string, reason: string): DecodeResult => ({ skipped: { documentId, reason } });

/**
 * Decode one corpus object into a `SourceDocument`, or skip it with a human-readable reason.
 *
 * Steps, in order:
 * 1. zero bytes -> skipped, "empty file";
 * 2. a known binary signature -> skipped, e.g. "binary file (PNG image)";
 * 3. a UTF-16/UTF-32 byte order mark -> skipped, e.g. "UTF-16 LE text (byte order mark 0xff 0xfe); only UTF-8 is read";
 * 4. a NUL byte -> skipped, "binary file (NUL byte at byte 12)";
 * 5. strict UTF-8 decoding (WHATWG `TextDecoder`, `fatal: true`); failure -> skipped,
 *    "not valid UTF-8 at byte 1234 (0xff)" or "not valid UTF-8 at byte 1234 (file ends inside a multi-byte character)";
 * 6. a leading UTF-8 byte order mark (EF BB BF) is removed; CRLF and lone CR become LF;
 * 7. nothing left -> "empty file (byte order mark only)"; only white space -> "whitespace only".
 *
 * @param id the document id (file name relative to the corpus root, or S3 key below the prefix).
 * @param bytes the raw object body.
 * @returns `{ doc }` with the normalised text (UTF-16 string), or `{ skipped }`.
 * @throws InvalidInputError when `id` is empty.
 */
export function decodeDocument(id: string, bytes: Uint8Array): DecodeResult {
  if (id.length === 0) throw new InvalidInputError('A document id must not be empty');
  if (bytes.length === 0) return skip(id, 'empty file');

  for (const signature of SIGNATURES) {
    if (startsWith(bytes, signature.bytes, signature.offset)) return skip(id, `binary file (${signature.name})`);
  }
  for (const bom of FOREIGN_BOMS) {
    if (startsWith(bytes, bom.bytes)) {
      return skip(id, `${bom.name} text (byte order mark ${bom.bytes.map(hex).join(' ')}); only UTF-8 is read`);
    }
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) return skip(id, `binary file (NUL byte at byte ${nul})`);

  let decoded: string;
  try {
    // ignoreBOM: false (the default) makes the decoder drop a leading UTF-8 BOM.
    decoded = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    const offset = invalidUtf8Offset(bytes);
    if (offset >= bytes.length) {
      return skip(id, `not valid UTF-8 at byte ${truncatedSequenceStart(bytes)} (file ends inside a multi-byte character)`);
    }
    return skip(id, `not valid UTF-8 at byte ${offset} (${hex(bytes[offset] ?? 0)})`);
  }

  const text = decoded.replace(/\r\n?/g, '\n');
  if (text.length === 0) return skip(id, 'empty file (byte order mark only)');
  if (/^\s*$/.test(text)) return skip(id, 'whitespace only');
  return { doc: { id, text } };
}

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
  for (const piece of decodeGenerator(counted())) {
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
      const space = c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
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
  o200kRanks.forEach((value, rank) => {
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

/**
 * Exactly `countTokens(text)` (shared/tokenizer.ts, o200k_base), in O(n log n) also for texts with
 * very long pre-tokens (see the section comment); texts without a long run go to the library.
 * @param text any string without lone surrogates.
 * @returns the token count, 0 for an empty text.
 */
export function countTokensLinear(text: string): number {
  if (!hasLongRun(text)) return countTokens(text);
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
    const ends =
      t.byText.has(piece) || bytes.length <= 1 ? [bytes.length] : [...mergeBytePairs(bytes, t).slice(1), bytes.length];
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
