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

/** Read a DOCX document. Never throws: an unreadable file gives its problem. */
export async function readDocx(bytes: Uint8Array): Promise<DocxText> {
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
