/**
 * The corpus readers: one corpus object (raw bytes) becomes a `SourceDocument` — its text, the format
 * it was read as, and the map from text offsets back to the source (pages, heading paths) — or is
 * skipped with a reason, never dropped silently and never fatal for the run. The same readers serve
 * local runs, the AWS Prepare Lambda and ingestion (shared/pipeline/ingest.ts `decodeAndChunk`).
 *
 * Formats (`documentFormat`): PDF (`.pdf`, or the `%PDF-` signature), DOCX (`.docx`, or a ZIP that
 * holds `word/document.xml`), HTML (`.html`, `.htm`, `.xhtml`, or UTF-8 text that starts with a
 * doctype or `<html>`), Markdown (`.md`, `.markdown`, `.mdown`, `.mkd`), else plain UTF-8 text
 * (shared/decode.ts `decodeDocument`, which also names what a binary file looks like). HTML and Markdown
 * are decoded as UTF-8 first, with the same rules and reasons as plain text.
 */
import { decodeDocument, MAX_DOCUMENT_BYTES, type DecodeResult } from '../decode';
import type { SourceDocument } from '../types';
import type { DocumentFormat, DocumentLocation } from './types';

export { DOCUMENT_FORMATS, locationAt, type DocumentFormat, type DocumentLocation } from './types';

const PDF_SIGNATURE = [0x25, 0x50, 0x44, 0x46, 0x2d]; // "%PDF-" (ISO 32000-1, section 7.5.2)
const ZIP_SIGNATURE = [0x50, 0x4b, 0x03, 0x04]; // local file header (PKWARE APPNOTE 4.3.7)
/** A DOCX is a ZIP whose main part is `word/document.xml` (ECMA-376 Part 2, Open Packaging Conventions); ZIP stores names uncompressed. */
const DOCX_PART = Buffer.from('word/document.xml');

const extensionOf = (id: string): string => /\.([A-Za-z0-9]+)$/.exec(id)?.[1]?.toLowerCase() ?? '';
const startsWith = (bytes: Uint8Array, signature: readonly number[]): boolean => signature.every((b, i) => bytes[i] === b);

/**
 * The format a corpus object is read as, from its name and first bytes.
 * @param id the document id (its extension decides first).
 */
export function documentFormat(id: string, bytes: Uint8Array): DocumentFormat {
  const extension = extensionOf(id);
  if (extension === 'pdf' || startsWith(bytes, PDF_SIGNATURE)) return 'pdf';
  if (extension === 'docx' || (startsWith(bytes, ZIP_SIGNATURE) && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(DOCX_PART)))
    return 'docx';
  if (extension === 'html' || extension === 'htm' || extension === 'xhtml') return 'html';
  if (extension === 'md' || extension === 'markdown' || extension === 'mdown' || extension === 'mkd') return 'markdown';
  // Sniff HTML saved under another name (the first non-blank characters).
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 512))
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
    .slice(0, 15)
    .toLowerCase();
  if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'html';
  return 'text';
}

// The reader of each format other than plain text, loaded on the first document of that format (issue
// 27, item 3): a corpus of .txt files never loads parse5, markdown-it, yaml, unpdf or mammoth, whose
// loading cost a 1 KB `ask` about 0.1 s. test/integration/startup-loads.test.ts checks it.
const readers = {
  html: () => require('./html') as typeof import('./html'),
  markdown: () => require('./markdown') as typeof import('./markdown'),
  pdf: () => require('./pdf') as typeof import('./pdf'),
  docx: () => require('./docx') as typeof import('./docx'),
} satisfies Record<Exclude<DocumentFormat, 'text'>, () => unknown>;

const skip = (documentId: string, reason: string): DecodeResult => ({ skipped: { documentId, reason } });

/**
 * Read one corpus object.
 * @returns `{ doc }` (text, `format`, `locations` when the format has them, `title` when the source
 *   names one), or `{ skipped }` with the reason (e.g. "encrypted PDF …", "not a readable DOCX (…)",
 *   the plain-text reasons of shared/decode.ts `decodeDocument`).
 * @throws InvalidInputError when `id` is empty (as decodeDocument).
 */
export async function readDocument(id: string, bytes: Uint8Array): Promise<DecodeResult> {
  if (id.length === 0) return decodeDocument(id, bytes); // throws InvalidInputError, as documented
  try {
    return await readAs(id, bytes);
  } catch (error) {
    // A reader that fails on a pathological file (e.g. markup nested thousands of levels deep:
    // RangeError, maximum call stack) skips that file with the reason; it never fails the run.
    const e = error instanceof Error ? error : new Error(String(error));
    return skip(id, `could not be read as ${documentFormat(id, bytes)} (${e.name}: ${e.message.split('\n')[0]})`);
  }
}

async function readAs(id: string, bytes: Uint8Array): Promise<DecodeResult> {
  const format = documentFormat(id, bytes);
  if (format === 'text') return decodeDocument(id, bytes);
  if (bytes.length === 0) return skip(id, 'empty file');
  if (bytes.length > MAX_DOCUMENT_BYTES) return decodeDocument(id, bytes); // the size reason, in one place
  if (format === 'pdf' || format === 'docx') {
    const read = format === 'pdf' ? await readers.pdf().readPdf(bytes) : await readers.docx().readDocx(bytes);
    if ('problem' in read) return skip(id, read.problem);
    return { doc: document(id, format, read.text, read.locations, 'title' in read && typeof read.title === 'string' ? read.title : undefined) };
  }
  const decoded = decodeDocument(id, bytes);
  if (!('doc' in decoded)) return decoded;
  if (format === 'html') {
    const { htmlNestingDepth, MAX_HTML_DEPTH } = readers.html();
    if (htmlNestingDepth(decoded.doc.text, MAX_HTML_DEPTH) > MAX_HTML_DEPTH)
      return skip(id, `markup nested too deeply (more than ${MAX_HTML_DEPTH.toLocaleString('en-US')} elements open at once)`);
  }
  const read = format === 'html' ? readers.html().readHtml(decoded.doc.text) : readers.markdown().readMarkdown(decoded.doc.text);
  if (read.text.trim() === '') return skip(id, `no text (${format === 'html' ? 'an HTML page' : 'a Markdown file'} of markup only)`);
  return { doc: document(id, format, read.text, read.locations, 'title' in read && typeof read.title === 'string' ? read.title : undefined) };
}

function document(id: string, format: DocumentFormat, text: string, locations: DocumentLocation[], title: string | undefined): SourceDocument {
  return { id, text, format, ...(locations.length > 0 && { locations }), ...(title !== undefined && { title }) };
}
