import { constants } from 'node:buffer';
import { InvalidInputError } from '../../shared/errors';
import { MAX_DOCUMENT_BYTES, decodeDocument } from '../../shared/decode';
import { tokenBoundaries } from '../../shared/tokenizer';
import { decode as decodeTokens } from 'gpt-tokenizer';
import { countTokens, encodeTokens } from '../../shared/tokenizer';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const bytes = (...parts: Array<string | number[]>): Uint8Array => Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...utf8(p)] : p)));

function decodedText(id: string, input: Uint8Array): string {
  const result = decodeDocument(id, input);
  if (!('doc' in result)) throw new Error(`expected a document, got skipped: ${result.skipped.reason}`);
  expect(result.doc.id).toBe(id);
  return result.doc.text;
}

function skipReason(id: string, input: Uint8Array): string {
  const result = decodeDocument(id, input);
  if (!('skipped' in result)) throw new Error('expected the document to be skipped');
  expect(result.skipped.documentId).toBe(id);
  return result.skipped.reason;
}

describe('decodeDocument', () => {
  test('decodes UTF-8 text with Chinese and emoji unchanged', () => {
    // Arrange
    const text = '三国演义 第一回\n\nFellow-Citizens 😀 👩‍👩‍👧 done.';
    // Act
    const decoded = decodedText('a.txt', utf8(text));
    // Assert
    expect(decoded).toBe(text);
  });

  test('removes a leading UTF-8 byte order mark', () => {
    const decoded = decodedText('bom.txt', bytes([0xef, 0xbb, 0xbf], 'hello'));
    expect(decoded).toBe('hello');
  });

  test('turns CRLF and lone CR into LF', () => {
    const decoded = decodedText('crlf.txt', utf8('one\r\ntwo\rthree\r\n\r\nfour\n'));
    expect(decoded).toBe('one\ntwo\nthree\n\nfour\n');
  });

  test('skips a file too large to be one string with a reason, instead of the V8 string-length crash', () => {
    // The limit sits below V8's longest string (a UTF-8 file never decodes to more UTF-16 units than
    // it has bytes), so a file at the limit decodes; one byte over it is refused by our check.
    expect(MAX_DOCUMENT_BYTES).toBeLessThan(constants.MAX_STRING_LENGTH);
    const over = new Uint8Array(MAX_DOCUMENT_BYTES + 1).fill(0x61);
    expect(skipReason('huge.txt', over)).toBe(
      `too large (${MAX_DOCUMENT_BYTES + 1} bytes; a document is read as one string of at most ${MAX_DOCUMENT_BYTES} bytes, 500 MiB): split it into smaller files`,
    );
  });

  test('skips invalid UTF-8 naming the offending byte offset', () => {
    const reason = skipReason('bad.txt', bytes('abc', [0xff], 'def'));
    expect(reason).toBe('not valid UTF-8 at byte 3 (0xff)');
  });

  test('reports the lead byte of a multi-byte sequence cut short in the middle of the file', () => {
    // 0xE4 0xB8 starts a 3-byte character ("中" is E4 B8 AD) but "c" follows.
    const reason = skipReason('cut.txt', bytes('ab', [0xe4, 0xb8], 'c'));
    expect(reason).toBe('not valid UTF-8 at byte 2 (0xe4)');
  });

  test('reports a file that ends inside a multi-byte character', () => {
    const reason = skipReason('end.txt', bytes('héllo', [0xe4, 0xb8]));
    expect(reason).toBe('not valid UTF-8 at byte 6 (file ends inside a multi-byte character)');
  });

  test('rejects UTF-8-encoded surrogates instead of producing lone surrogates', () => {
    // ED A0 80 would be U+D800, which UTF-8 forbids.
    const reason = skipReason('surrogate.txt', bytes('x', [0xed, 0xa0, 0x80]));
    expect(reason).toBe('not valid UTF-8 at byte 1 (0xed)');
  });

  test('finds an invalid byte far beyond the first scan block', () => {
    const prefix = '范围内产生的二氧化碳排放量。'.repeat(10_000); // 3 bytes per character
    const offset = utf8(prefix).length;
    const reason = skipReason('long.txt', bytes(prefix, [0xc0, 0x80], 'tail'));
    expect(offset).toBeGreaterThan(64 * 1024);
    expect(reason).toBe(`not valid UTF-8 at byte ${offset} (0xc0)`);
  });

  test('finds an invalid byte in a scan block that starts inside a character', () => {
    // "ab" then 3-byte characters: byte 65536 (the second block's start) is the third byte of one.
    const prefix = 'ab' + '中'.repeat(30_000);
    expect((65_536 - 2) % 3).toBe(2);
    const reason = skipReason('mid.txt', bytes(prefix, [0x80]));
    expect(reason).toBe(`not valid UTF-8 at byte ${2 + 90_000} (0x80)`);
  });

  test.each([
    ['PNG image', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]],
    ['PDF document', [...utf8('%PDF-1.7\n%âãÏÓ\n1 0 obj')]],
    ['ZIP archive (or an Office/EPUB document)', [0x50, 0x4b, 0x03, 0x04, 0x14, 0x00]],
    ['GZIP archive', [0x1f, 0x8b, 0x08, 0x00]],
    ['JPEG image', [0xff, 0xd8, 0xff, 0xe0]],
  ])('skips a %s by its signature', (name, signature) => {
    const reason = skipReason('file.bin', Uint8Array.from(signature));
    expect(reason).toBe(`binary file (${name})`);
  });

  test('skips content with a NUL byte as binary', () => {
    const reason = skipReason('data.bin', bytes('abc', [0x00], 'def'));
    expect(reason).toBe('binary file (NUL byte at byte 3)');
  });

  test('skips UTF-16 text with a reason naming the encoding', () => {
    const reason = skipReason('utf16.txt', bytes([0xff, 0xfe], [0x68, 0x00, 0x69, 0x00]));
    expect(reason).toBe('UTF-16 LE text (byte order mark 0xff 0xfe); only UTF-8 is read');
  });

  test('skips empty, BOM-only and whitespace-only files', () => {
    expect(skipReason('empty.txt', new Uint8Array())).toBe('empty file');
    expect(skipReason('bom-only.txt', bytes([0xef, 0xbb, 0xbf]))).toBe('empty file (byte order mark only)');
    expect(skipReason('blank.txt', utf8(' \r\n\t\u3000\n'))).toBe('whitespace only');
  });

  test('refuses an empty document id', () => {
    expect(() => decodeDocument('', utf8('text'))).toThrow(InvalidInputError);
  });
});

describe('tokenBoundaries', () => {
  test('groups the byte tokens of a character and ends at the text length with its token count', () => {
    // Arrange: "𠀀" (U+20000) is 4 UTF-8 bytes, encoded as several byte tokens.
    const text = '𠀀𠀁 ok 😀';
    // Act
    const boundaries = tokenBoundaries(text);
    // Assert
    expect(boundaries.at(-1)).toEqual({ offset: text.length, tokens: countTokens(text) });
    expect(boundaries.slice(0, 2).map((b) => b.offset)).toEqual([2, 4]); // after each whole character
    expect(boundaries[0]?.tokens).toBeGreaterThan(1);
    for (let i = 1; i < boundaries.length; i++) {
      expect(boundaries[i]?.offset).toBeGreaterThan(boundaries[i - 1]?.offset ?? 0);
      expect(boundaries[i]?.tokens).toBeGreaterThan(boundaries[i - 1]?.tokens ?? 0);
    }
    for (const b of boundaries) expect(text.slice(0, b.offset)).not.toMatch(/[\uD800-\uDBFF]$/);
  });

  test('leaves the shared decoder clean for the next decode', () => {
    tokenBoundaries('范围内产生的二氧化碳排放量𠀀');
    expect(decodeTokens(encodeTokens('ᚠ'))).toBe('ᚠ');
  });

  test('falls back to code points when another caller left the shared decoder inside a character', () => {
    // Arrange: decoding the first byte token of a 4-byte character leaves 1 byte pending in gpt-tokenizer.
    expect(decodeTokens(encodeTokens('𠀀').slice(0, 1))).toBe('');
    // Act
    const boundaries = tokenBoundaries('ᚠᚡ hi');
    // Assert: still whole code points, covering the text, with byte counts as token bounds.
    expect(boundaries.map((b) => b.offset)).toEqual([1, 2, 3, 4, 5]);
    expect(boundaries.map((b) => b.tokens)).toEqual([3, 6, 7, 8, 9]);
    expect(decodeTokens(encodeTokens('ᚠ'))).toBe('ᚠ');
  });

  test('returns nothing for an empty text', () => {
    expect(tokenBoundaries('')).toEqual([]);
  });
});
