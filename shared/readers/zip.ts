/**
 * What a ZIP archive (a DOCX, OOXML's Open Packaging Conventions) really unpacks to, measured by
 * inflating every entry with a running byte cap, whatever its headers claim: headers can lie (an
 * entry declared as 1,000 bytes that inflates to 1.25 GB), and several central directory entries can
 * point at one deflated stream (an overlapping "zip bomb"). Inflation is node:zlib's
 * (`inflateRawSync` with `maxOutputLength`, which stops as soon as the output passes the cap), so the
 * memory a check takes is bounded by the cap, not by the archive.
 * Layout: PKWARE APPNOTE 6.3.10, 4.3.7 (local file header), 4.3.12 (central directory file header),
 * 4.3.16 (end of central directory record).
 */
import { inflateRawSync } from 'node:zlib';

/** The outcome of {@link measureZip}. */
export type ZipMeasure =
  /** Every entry inflated within the cap, to the sizes its headers declare. */
  | { ok: true; bytes: number; entries: number }
  /** The entries together unpack to more than the cap (`declared`: the headers said so, before any inflation). */
  | { ok: false; tooLarge: true; declared?: number }
  /** Not a readable ZIP: no central directory, an entry out of bounds, a damaged stream, sizes that differ from the headers. */
  | { ok: false; tooLarge: false; problem: string };

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const ZIP64_MARK = 0xffffffff;
const STORED = 0;
const DEFLATED = 8;

/**
 * Inflate every entry of a ZIP archive, stopping at `maxBytes` in all (a running cap over the sum of
 * the entries, so overlapping entries count each time they are read).
 * @param bytes the archive.
 * @param maxBytes most bytes the entries may unpack to together.
 * @returns `{ ok: true, bytes, entries }` (bytes: the real unpacked total); `{ ok: false, tooLarge:
 *   true }` as soon as the cap is passed (`declared` when the headers alone exceed it, checked first,
 *   without inflating); else `{ ok: false, tooLarge: false, problem }`. Never throws.
 */
export function measureZip(bytes: Uint8Array, maxBytes: number): ZipMeasure {
  const damaged = (problem: string): ZipMeasure => ({ ok: false, tooLarge: false, problem });
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = -1;
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 65_535); at--) {
    if (view.getUint32(at, true) === END_OF_CENTRAL_DIRECTORY) {
      end = at;
      break;
    }
  }
  if (end < 0) return damaged('no ZIP central directory');
  const count = view.getUint16(end + 10, true);
  const entries: Array<{ name: string; method: number; compressed: number; size: number; local: number }> = [];
  let at = view.getUint32(end + 16, true);
  let declared = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== CENTRAL_FILE_HEADER)
      return damaged(`central directory entry ${i + 1} of ${count} out of bounds`);
    const nameLength = view.getUint16(at + 28, true);
    const entry = {
      name: Buffer.from(bytes.buffer, bytes.byteOffset + at + 46, Math.min(nameLength, Math.max(0, bytes.length - at - 46))).toString('utf8'),
      method: view.getUint16(at + 10, true),
      compressed: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
      local: view.getUint32(at + 42, true),
    };
    // ZIP64 sizes: more than 4 GiB declared, which no document this project reads may unpack to.
    if (entry.size === ZIP64_MARK || entry.compressed === ZIP64_MARK) return { ok: false, tooLarge: true, declared: Number.POSITIVE_INFINITY };
    declared += entry.size;
    entries.push(entry);
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  if (declared > maxBytes) return { ok: false, tooLarge: true, declared };
  let total = 0;
  let mismatch: string | undefined;
  for (const entry of entries) {
    const local = entry.local;
    if (local + 30 > bytes.length || view.getUint32(local, true) !== LOCAL_FILE_HEADER) return damaged(`entry ${entry.name}: no local header`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (start + entry.compressed > bytes.length) return damaged(`entry ${entry.name}: data past the end of the file`);
    const data = bytes.subarray(start, start + entry.compressed);
    let size: number;
    if (entry.method === STORED) size = data.length;
    else if (entry.method === DEFLATED) {
      try {
        // One byte over the remaining budget tells "exactly at the cap" from "past it".
        size = inflateRawSync(data, { maxOutputLength: maxBytes - total + 1 }).length;
      } catch (error) {
        if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return { ok: false, tooLarge: true };
        return damaged(`entry ${entry.name}: ${(error as Error).message}`);
      }
    } else return damaged(`entry ${entry.name}: compression method ${entry.method} (only stored and deflated are read)`);
    total += size;
    if (total > maxBytes) return { ok: false, tooLarge: true };
    // Inflation goes on past an entry whose header lies, so that a larger lie further on is reported as too large.
    if (size !== entry.size) mismatch ??= `entry ${entry.name} unpacks to ${size} bytes, its header says ${entry.size}`;
  }
  if (mismatch !== undefined) return damaged(mismatch);
  return { ok: true, bytes: total, entries: entries.length };
}
