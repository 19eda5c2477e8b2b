/**
 * The DOCX reader: a Word document converted to HTML with mammoth (it maps the document's paragraph
 * styles to headings, lists and tables, and drops the layout), then read by the HTML reader, so a
 * DOCX gets the same blocks, table rows and heading locations as a web page. A file mammoth cannot
 * open (a damaged archive, a ZIP without `word/document.xml`) is skipped with the reason.
 * Source: https://github.com/mwilliamson/mammoth.js (convertToHtml)
 */
import { readHtml } from './html';
import { measureZip } from './zip';
import type { DocumentLocation } from './types';

/** What a DOCX reads as, or why it cannot be read. */
export type DocxText = { text: string; locations: DocumentLocation[] } | { problem: string };

/**
 * Most bytes a DOCX may unpack to (the sum of its parts, as inflated): 32 MiB. mammoth holds the
 * whole XML in memory many times over (a 20 MB document.xml took 2.2 GB), and a few hundred KB of
 * deflated XML can unpack to hundreds of MB (a "zip bomb"), whatever the archive's headers say.
 */
export const MAX_DOCX_UNPACKED_BYTES = 32 * 1024 * 1024;

/**
 * Read a DOCX document. Its parts are inflated first with a running cap of
 * {@link MAX_DOCX_UNPACKED_BYTES} (shared/readers/zip.ts `measureZip`): an archive whose headers
 * understate its parts stops at the cap (memory and time bounded by it), and only an archive that
 * unpacks within it reaches mammoth. Never throws: an unreadable file gives its problem (`DOCX too
 * large unpacked (… at most 32 MiB are read)`, `not a readable DOCX (…)`, `DOCX without text`).
 */
export async function readDocx(bytes: Uint8Array): Promise<DocxText> {
  const limit = `at most ${MAX_DOCX_UNPACKED_BYTES / 1024 / 1024} MiB are read`;
  const measured = measureZip(bytes, MAX_DOCX_UNPACKED_BYTES);
  if (!measured.ok && measured.tooLarge) {
    const declared =
      measured.declared === undefined ? undefined : Number.isFinite(measured.declared) ? `${(measured.declared / 1024 / 1024).toFixed(0)} MiB` : 'over 4 GiB';
    return {
      problem: `DOCX too large unpacked (${declared ?? `over ${MAX_DOCX_UNPACKED_BYTES / 1024 / 1024} MiB, whatever its headers say,`} from ${bytes.length} bytes; ${limit})`,
    };
  }
  if (!measured.ok) return { problem: `not a readable DOCX (${measured.problem})` };
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
