/**
 * The text a reader builds from a structured document (HTML, Markdown, DOCX): blocks (paragraphs,
 * headings, list items, table rows) separated by a blank line, white space inside a block collapsed
 * to single spaces (except preformatted text), and the document's locations — from each heading on,
 * the path of the headings above (`Introduction › History`) with where it starts in the source.
 * Offsets are UTF-16 code units of the built text, the same units as every citation.
 */
import type { DocumentLocation } from './types';

/** Most locations kept per document (a page of 10,000 headings keeps the first 10,000). */
export const MAX_LOCATIONS = 10_000;

/** Separator of the blocks of the built text. */
const BLOCK_SEPARATOR = '\n\n';

export class TextBlocks {
  private readonly blocks: string[] = [];
  private length = 0;
  private current = '';
  private readonly headings: string[] = [];
  private readonly locations: DocumentLocation[] = [];
  private pendingLocation: Omit<DocumentLocation, 'start'> | undefined;
  /** Where the next block starts in the source (`source`), until that block is pushed. */
  private nextSource: Pick<DocumentLocation, 'sourceOffset' | 'sourceLine'> | undefined;

  /**
   * Where the next block starts in the source (a character offset, a line), said before its text:
   * the block gets a location of its own, under the current heading path, so a citation inside it
   * names where to open the source. Ignored once the block has text (the first call of a block wins
   * no more: the innermost block element, called last before its text, does).
   */
  source(where: Pick<DocumentLocation, 'sourceOffset' | 'sourceLine'>): void {
    if (this.current === '' && (where.sourceOffset !== undefined || where.sourceLine !== undefined)) this.nextSource = where;
  }

  /** Inline text: white space collapsed, joined to the current block. */
  inline(text: string): void {
    const collapsed = text.replace(/\s+/g, ' ');
    if (collapsed === ' ' && (this.current === '' || this.current.endsWith(' ') || this.current.endsWith('\n'))) return;
    this.current += this.current === '' || this.current.endsWith('\n') ? collapsed.replace(/^ /, '') : collapsed;
  }

  /** Text kept as it is (preformatted code): its own block. */
  preformatted(text: string): void {
    this.flush();
    this.push(text.replace(/^\n+/, '').replace(/\s+$/, ''));
  }

  /** A line break inside the current block. */
  lineBreak(): void {
    this.current = `${this.current.replace(/ +$/, '')}\n`;
  }

  /** End the current block (a paragraph, a list item, a table row). */
  flush(): void {
    const text = this.current
      .replace(/[ \t]+\n/g, '\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    this.current = '';
    this.push(text);
  }

  private push(text: string): void {
    if (text.trim() === '') return;
    const start = this.blocks.length === 0 ? 0 : this.length + BLOCK_SEPARATOR.length;
    if (this.pendingLocation !== undefined) {
      // Past the limit, one last entry without a label: the text from there on has no known location
      // (better none than the last stored heading's).
      if (this.locations.length < MAX_LOCATIONS) this.locations.push({ start, ...this.pendingLocation });
      else if (this.locations.length === MAX_LOCATIONS) this.locations.push({ start, label: '' });
      this.pendingLocation = undefined;
    } else if (this.nextSource !== undefined && this.locations.length < MAX_LOCATIONS) {
      // A block with its source position: the same heading path, and where to open the source.
      this.locations.push({ start, label: this.headings.filter((h) => h !== '').join(' › '), ...this.nextSource });
    }
    this.nextSource = undefined;
    this.blocks.push(text);
    this.length = start + text.length;
  }

  /**
   * A heading of `level` (1-6): its own block, and from it on the location is the path of the
   * headings above it and itself.
   * @param source where the heading starts in the source (a character offset, a line), when known.
   */
  heading(level: number, text: string, source?: Pick<DocumentLocation, 'sourceOffset' | 'sourceLine'>): void {
    this.flush();
    const title = text.replace(/\s+/g, ' ').trim();
    if (title === '') return;
    this.headings.length = Math.max(0, Math.min(this.headings.length, level - 1));
    while (this.headings.length < level - 1) this.headings.push('');
    this.headings.push(title);
    this.pendingLocation = { label: this.headings.filter((h) => h !== '').join(' › '), ...source };
    this.current = title;
    this.flush();
  }

  /** The text and its locations (sorted by start). */
  result(): { text: string; locations: DocumentLocation[] } {
    this.flush();
    return { text: this.blocks.join(BLOCK_SEPARATOR), locations: this.locations };
  }
}
