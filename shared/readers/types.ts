/**
 * Types of the corpus readers (shared/readers/): which format a document was read as, and the map
 * from offsets of its text back to the source.
 */

/** The formats the readers take (shared/readers/index.ts `documentFormat`). */
export const DOCUMENT_FORMATS = ['text', 'html', 'markdown', 'pdf', 'docx'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

/**
 * Where the text from `start` on comes from in the source: a PDF page (`page 3`), or the heading path
 * of HTML, Markdown and DOCX (`Introduction › History`); it holds until the next location's `start`.
 */
export interface DocumentLocation {
  /** Offset in the document's text (UTF-16 code units) from which `label` holds. */
  start: number;
  /** `page 3`, or the heading path `Introduction › History`. */
  label: string;
  /** PDF: the 1-based page. */
  page?: number;
  /** HTML: the character offset in the source of the heading's or block's element (parse5's source location). */
  sourceOffset?: number;
  /** Markdown: the 1-based source line where the heading or block starts. */
  sourceLine?: number;
}

/**
 * The location of a text offset: the last location whose `start` is at or before it, or undefined
 * (before the first location, or a document without locations).
 * @param locations sorted by `start` (as the readers build them).
 */
export function locationAt(locations: readonly DocumentLocation[] | undefined, offset: number): DocumentLocation | undefined {
  if (!locations || locations.length === 0) return undefined;
  let lo = 0;
  let hi = locations.length - 1;
  let found: DocumentLocation | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (locations[mid].start <= offset) {
      found = locations[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
