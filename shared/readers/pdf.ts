/**
 * The PDF reader: the text layer of every page, with unpdf (a serverless build of Mozilla's PDF.js,
 * the parser Firefox uses, with a CommonJS entry that this project can load; pdfjs-dist itself is
 * ESM-only). Pages are blocks separated by a blank line; each page is a location (`page 3`).
 * A PDF that cannot be read is skipped with a reason: encrypted (a password is needed), no text
 * layer at all (a scan: no OCR here), or not a readable PDF (damaged). A page set in two columns is
 * read column by column ({@link columnText}).
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
    const { text: extracted } = await extractText(proxy, { mergePages: false });
    // A page set in two columns is read column by column (PDF.js gives its text row by row).
    const pages = await Promise.all(
      extracted.map(async (pageText, i) => {
        const page = await proxy.getPage(i + 1);
        const content = await page.getTextContent();
        return columnText(content.items as PdfTextItem[], page.getViewport({ scale: 1 }).width) ?? pageText;
      }),
    );
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

/** One text item of a PDF.js page (`getTextContent().items`): its string, its transform (x = [4], y = [5]), width and height. */
export interface PdfTextItem {
  str: string;
  transform: number[];
  width: number;
  height: number;
}

/** Fewest rows that must show the gutter for a page to be read as two columns. */
const MIN_GUTTER_ROWS = 3;
/** Share of a page's rows with text that must show the gutter. */
const MIN_GUTTER_ROW_SHARE = 0.3;

/**
 * The text of a page set in two columns, column by column; undefined for any other page (then the
 * text PDF.js extracted is kept as it is). PDF.js gives a page's text row by row, so the two columns
 * of a row come out side by side ("…dredged RIGHT ONE. The railway…"). Rows are items on one
 * baseline; a row shows the gutter when two neighbouring items leave a gap of at least two line
 * heights whose middle lies in the middle half of the page; with at least `MIN_GUTTER_ROWS` such rows
 * (and `MIN_GUTTER_ROW_SHARE` of the rows), the gutter is the median of those middles. Rows with an
 * item across the gutter (a title, a full-width figure caption) split the page into bands; each band
 * is read left column first, then right, and a blank line goes where the vertical gap between two
 * rows of a column is more than 1.6 line heights (a paragraph break). Hand-written: PDF.js has no
 * reading-order analysis, and the libraries that do (pdfminer's layout analysis) are not JavaScript.
 * @param items the page's text items; @param pageWidth its width, PDF units.
 */
export function columnText(items: readonly PdfTextItem[], pageWidth: number): string | undefined {
  const texts = items.filter((i) => i.str.trim() !== '' && Array.isArray(i.transform) && i.transform.length >= 6);
  if (texts.length === 0) return undefined;
  const height = median(texts.map((i) => i.height || Math.abs(i.transform[3]) || 10));
  // Rows: items on one baseline (within a third of a line height), top to bottom, each left to right.
  const sorted = [...texts].sort((a, b) => b.transform[5] - a.transform[5] || a.transform[4] - b.transform[4]);
  const rows: { y: number; items: PdfTextItem[] }[] = [];
  for (const item of sorted) {
    const row = rows[rows.length - 1];
    if (row !== undefined && Math.abs(row.y - item.transform[5]) <= height / 3) row.items.push(item);
    else rows.push({ y: item.transform[5], items: [item] });
  }
  for (const row of rows) row.items.sort((a, b) => a.transform[4] - b.transform[4]);
  const middles: number[] = [];
  for (const row of rows) {
    for (let k = 1; k < row.items.length; k++) {
      const end = row.items[k - 1].transform[4] + row.items[k - 1].width;
      const start = row.items[k].transform[4];
      const middle = (end + start) / 2;
      if (start - end >= 2 * height && middle > pageWidth / 4 && middle < (3 * pageWidth) / 4) {
        middles.push(middle);
        break;
      }
    }
  }
  if (middles.length < MIN_GUTTER_ROWS || middles.length < MIN_GUTTER_ROW_SHARE * rows.length) return undefined;
  const gutter = median(middles);
  const crosses = (i: PdfTextItem): boolean => i.transform[4] < gutter && i.transform[4] + i.width > gutter;
  const out: string[] = [];
  const emit = (part: { y: number; items: PdfTextItem[] }[]): void => {
    part.forEach((row, k) => {
      if (k > 0 && part[k - 1].y - row.y > 1.6 * height) out.push('');
      out.push(rowText(row.items, height));
    });
  };
  let band: { y: number; items: PdfTextItem[] }[] = [];
  const flush = (): void => {
    emit(band.map((r) => ({ y: r.y, items: r.items.filter((i) => i.transform[4] < gutter) })).filter((r) => r.items.length > 0));
    const right = band.map((r) => ({ y: r.y, items: r.items.filter((i) => i.transform[4] >= gutter) })).filter((r) => r.items.length > 0);
    if (right.length > 0) out.push('');
    emit(right);
    band = [];
  };
  for (const row of rows) {
    if (row.items.some(crosses)) {
      flush();
      out.push(rowText(row.items, height), '');
    } else band.push(row);
  }
  flush();
  return out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** A row's items as text: a space between two items that do not touch (pdf.js often gives the spaces as items of their own). */
function rowText(items: readonly PdfTextItem[], height: number): string {
  let text = '';
  items.forEach((item, k) => {
    const previous = items[k - 1];
    const gap = previous === undefined ? 0 : item.transform[4] - (previous.transform[4] + previous.width);
    text += (k > 0 && gap > height / 5 && !/\s$/.test(text) && !/^\s/.test(item.str) ? ' ' : '') + item.str;
  });
  return text.replace(/[ \t]+/g, ' ').trim();
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)];
}
