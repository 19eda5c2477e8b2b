/**
 * The DOCX reader: a Word document converted to HTML with mammoth (it maps the document's paragraph
 * styles to headings, lists and tables, and drops the layout), then read by the HTML reader, so a
 * DOCX gets the same blocks, table rows and heading locations as a web page. A file mammoth cannot
 * open (a damaged archive, a ZIP without `word/document.xml`) is skipped with the reason.
 * Source: https://github.com/mwilliamson/mammoth.js (convertToHtml)
 */
import { readHtml } from './html';
import type { DocumentLocation } from './types';

/** What a DOCX reads as, or why it cannot be read. */
export type DocxText = { text: string; locations: DocumentLocation[] } | { problem: string };

/**
 * Most bytes a DOCX may unpack to (the sum of its parts' uncompressed sizes): 32 MiB. mammoth holds
 * the whole XML in memory many times over (a 20 MB document.xml took 2.2 GB), and a few hundred KB of
 * deflated XML can unpack to hundreds of MB (a "zip bomb").
 */
export const MAX_DOCX_UNPACKED_BYTES = 32 * 1024 * 1024;

/**
 * The sum of the uncompressed sizes of a ZIP's entries, from its central directory (PKWARE APPNOTE
 * 4.3.12, 4.3.16: the end record, then one file header per entry), or undefined when the bytes hold
 * no readable central directory (mammoth then reports the damage). ZIP64 sizes (0xffffffff) count as
 * too large. Hand-written: it reads two fixed-layout records, and JSZip would inflate to tell.
 */
function unpackedSize(bytes: Uint8Array): number | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let end = bytes.length - 22; end >= Math.max(0, bytes.length - 22 - 65_535); end--) {
    if (view.getUint32(end, true) !== 0x06054b50) continue;
    const entries = view.getUint16(end + 10, true);
    let at = view.getUint32(end + 16, true);
    let total = 0;
    for (let i = 0; i < entries; i++) {
      if (at + 46 > bytes.length || view.getUint32(at, true) !== 0x02014b50) return undefined;
      const size = view.getUint32(at + 24, true);
      total += size === 0xffffffff ? Number.POSITIVE_INFINITY : size;
      at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    }
    return total;
  }
  return undefined;
}

/** Read a DOCX document. Never throws: an unreadable file gives its problem. */
export async function readDocx(bytes: Uint8Array): Promise<DocxText> {
  const unpacked = unpackedSize(bytes);
  if (unpacked !== undefined && unpacked > MAX_DOCX_UNPACKED_BYTES) {
    const mb = Number.isFinite(unpacked) ? `${(unpacked / 1024 / 1024).toFixed(0)} MiB` : 'over 4 GiB';
    return { problem: `DOCX too large unpacked (${mb} from ${bytes.length} bytes; at most ${MAX_DOCX_UNPACKED_BYTES / 1024 / 1024} MiB are read)` };
  }
  // Loaded on first use, as the PDF reader: most corpora hold no DOCX.
  const mammoth = (await import('mammoth')).default;
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })).value;
  } catch (error) {
    return { problem: `not a readable DOCX (${(error as Error).message.replace(/\s+/g, ' ').trim()})` };
  }
  const { text, locations } = readHtml(html);
  return text.trim() === '' ? { problem: 'DOCX without text' } : { text, locations };
}
