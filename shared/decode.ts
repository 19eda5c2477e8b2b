/**
 * Decoding corpus objects (raw bytes) into `SourceDocument`s, or skipping them with a reason.
 *
 * Only UTF-8 text is read. The decoder is strict (WHATWG Encoding Standard, `TextDecoder` with
 * `fatal: true`): a document with any ill-formed byte sequence is skipped with the byte offset, never
 * turned into U+FFFD-garbled text that a seeking agent would quote. Binary files are recognised by
 * their magic numbers (file signatures) or by NUL bytes before decoding is tried.
 *
 * Token boundaries and counts live in shared/tokenizer.ts (`tokenBoundaries`, `countTokens`).
 */
import { TextDecoder } from 'node:util';
import { InvalidInputError } from './errors';
import type { SkippedDocument, SourceDocument } from './types';

/**
 * Largest document (bytes) that is read: 500 MiB. A document is decoded into one JavaScript string,
 * and V8 refuses strings longer than 2^29 - 24 UTF-16 code units (Node's
 * `buffer.constants.MAX_STRING_LENGTH`, 536,870,888 on 64-bit; a UTF-8 file never decodes to more code
 * units than it has bytes), so a larger file cannot be read at all; 500 MiB keeps a margin below
 * that. The API's largest upload (MAX_FILE_BYTES of shared/api/schemas.ts) is this number too.
 */
export const MAX_DOCUMENT_BYTES = 500 * 1024 * 1024;

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
/**
 * The skip reason of a document over `MAX_DOCUMENT_BYTES`, the one wording for every path that finds
 * one (decoding, and the corpus readers that skip it by its size without reading it).
 * @param size the object's size, bytes.
 */
export function tooLargeReason(size: number): string {
  return `too large (${size} bytes; a document is read as one string of at most ${MAX_DOCUMENT_BYTES} bytes, 500 MiB): split it into smaller files`;
}

export function decodeDocument(id: string, bytes: Uint8Array): DecodeResult {
  if (id.length === 0) throw new InvalidInputError('A document id must not be empty');
  if (bytes.length === 0) return skip(id, 'empty file');
  if (bytes.length > MAX_DOCUMENT_BYTES) return skip(id, tooLargeReason(bytes.length));

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
