/**
 * The PDF reader: the text layer of every page, with unpdf (a serverless build of Mozilla's PDF.js,
 * the parser Firefox uses, with a CommonJS entry that this project can load; pdfjs-dist itself is
 * ESM-only). Pages are blocks separated by a blank line; each page is a location (`page 3`).
 * A PDF that cannot be read is skipped with a reason: encrypted (a password is needed), no text
 * layer at all (a scan: no OCR here), or not a readable PDF (damaged).
 * A page's lines are rejoined into paragraphs ({@link joinPdfLines}): a PDF's text layer ends every
 * printed line, so a sentence wrapped over three lines would read as three, and a word hyphenated at
 * a line end as two.
 * Source: https://github.com/unjs/unpdf (extractText, getDocumentProxy), https://mozilla.github.io/pdf.js/
 */
import { LIST_ITEM_START } from '../extractive/text';
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
      const text = joinPdfLines(
        pageText
          .replace(/[ \t]+\n/g, '\n')
          .replace(/\n{3,}/g, '\n\n')
          .trim(),
      );
      if (text === '') return;
      const start = kept.length === 0 ? 0 : length + 2;
      locations.push({ start, label: `page ${i + 1}`, page: i + 1 });
      kept.push(text);
      length = start + text.length;
    });
    if (kept.length === 0) return { problem: `PDF without a text layer (${pages.length} page(s) of images, e.g. a scan; no OCR is done)` };
    const title = await getMeta(proxy).then(
      (m) => (m.info as { Title?: unknown } | undefined)?.Title,
      () => undefined,
    );
    return { text: kept.join('\n\n'), locations, ...(typeof title === 'string' && title.trim() !== '' && { title: title.trim() }) };
  } catch (error) {
    return { problem: `not a readable PDF (${(error as Error).message.replace(/\s+/g, ' ').trim()})` };
  } finally {
    // PDF.js frees the document's memory (its typings omit the method).
    await (proxy as unknown as { destroy?: () => Promise<void> }).destroy?.().catch(() => undefined);
  }
}

/** Shortest line (characters) that can be a wrapped line of running text: shorter ones end where they end. */
const MIN_WRAPPED_LINE_CHARS = 40;
/** A line at least this share of the page's longest line fills the measure: its text goes on on the next line. */
const WRAPPED_LINE_SHARE = 0.7;

/**
 * Rejoin the lines of one PDF page into paragraphs. A line end between two lines of running text
 * becomes a space, and a word hyphenated at a line end (`engi-` / `neer`: a lower-case letter, `-`,
 * then a line starting with a lower-case letter) is joined without the hyphen (`engineer`), one before a capital or a digit keeps it (`Anglo-Saxon`); a
 * line end is kept where the line does not fill the measure (shorter than {@link MIN_WRAPPED_LINE_CHARS}
 * characters or than {@link WRAPPED_LINE_SHARE} of the page's longest line: a paragraph's last line, a
 * heading, a table row, a line of verse) or where the next line starts a list item (`LIST_ITEM_START`, shared/extractive/text.ts);
 * blank lines stay paragraph breaks.
 * @param page the page's text, lines separated by `\n`.
 * @returns the page's text as read: citation offsets are offsets of it. Never throws.
 */
export function joinPdfLines(page: string): string {
  const lines = page.split('\n');
  const longest = lines.reduce((max, line) => Math.max(max, line.trim().length), 0);
  const measure = Math.max(MIN_WRAPPED_LINE_CHARS, WRAPPED_LINE_SHARE * longest);
  let out = lines[0] ?? '';
  for (let i = 1; i < lines.length; i++) {
    const before = lines[i - 1];
    const line = lines[i];
    const wrapped = before.trim() !== '' && line.trim() !== '' && before.trim().length >= measure && !LIST_ITEM_START.test(line);
    if (wrapped && /\p{Ll}-$/u.test(before) && /^\p{Ll}/u.test(line)) out = `${out.slice(0, -1)}${line}`;
    else if (wrapped && /[\p{L}\p{N}]-$/u.test(before) && /^[\p{L}\p{N}]/u.test(line))
      out += line; // Anglo-/Saxon: a hyphen of the word
    else if (wrapped) out += ` ${line.trimStart()}`;
    else out += `\n${line}`;
  }
  return out;
}
