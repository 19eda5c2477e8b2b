/**
 * The PDF reader: the text layer of every page, with unpdf (a serverless build of Mozilla's PDF.js,
 * the parser Firefox uses, with a CommonJS entry that this project can load; pdfjs-dist itself is
 * ESM-only). Pages are blocks separated by a blank line; each page is a location (`page 3`).
 * A PDF that cannot be read is skipped with a reason: encrypted (a password is needed), no text
 * layer at all (a scan: no OCR here), or not a readable PDF (damaged).
 * Source: https://github.com/unjs/unpdf (extractText, getDocumentProxy), https://mozilla.github.io/pdf.js/
 */
import type { DocumentLocation } from './types';

/** What a PDF reads as, or why it cannot be read. */
export type PdfText = { text: string; locations: DocumentLocation[]; title?: string } | { problem: string };

/** Read a PDF's text layer. Never throws: an unreadable PDF gives its problem. */
export async function readPdf(bytes: Uint8Array): Promise<PdfText> {
  // Loaded on first use: PDF.js is large, and most corpora hold no PDF.
  const { extractText, getDocumentProxy, getMeta } = await import('unpdf');
  let proxy;
  try {
    // A copy: PDF.js transfers (detaches) the buffer it is given. verbosity 0: errors only, no warnings on stdout.
    proxy = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'PasswordException') return { problem: 'encrypted PDF (a password is needed to read it)' };
    return { problem: `not a readable PDF (${(error as Error).message.replace(/\s+/g, ' ').trim() || name})` };
  }
  try {
    const { text: pages } = await extractText(proxy, { mergePages: false });
    const locations: DocumentLocation[] = [];
    const kept: string[] = [];
    let length = 0;
    pages.forEach((pageText, i) => {
      const text = pageText.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
      if (text === '') return;
      const start = kept.length === 0 ? 0 : length + 2;
      locations.push({ start, label: `page ${i + 1}`, page: i + 1 });
      kept.push(text);
      length = start + text.length;
    });
    if (kept.length === 0) return { problem: `PDF without a text layer (${pages.length} page(s) of images, e.g. a scan; no OCR is done)` };
    const title = await getMeta(proxy).then((m) => (m.info as { Title?: unknown } | undefined)?.Title, () => undefined);
    return { text: kept.join('\n\n'), locations, ...(typeof title === 'string' && title.trim() !== '' && { title: title.trim() }) };
  } catch (error) {
    return { problem: `not a readable PDF (${(error as Error).message.replace(/\s+/g, ' ').trim()})` };
  } finally {
    // PDF.js frees the document's memory (its typings omit the method).
    await (proxy as unknown as { destroy?: () => Promise<void> }).destroy?.().catch(() => undefined);
  }
}
