/**
 * Cutting text without breaking a character, written once for every caller: the chunker
 * (shared/chunking.ts), the bounds of messages, answers, notes and error causes, the offline reader's
 * windows, the emulator's and the server's text windows, the eval's JSONL previews.
 *
 * - {@link codePointCut}: the largest offset <= max that is not inside a surrogate pair (a slice
 *   there never ends in a lone surrogate, which shows as U+FFFD);
 * - {@link graphemeBoundary}: the nearest extended grapheme cluster boundary (UAX #29), so a slice
 *   never cuts an emoji sequence or a letter from its marks either;
 * - {@link segmentCuts}: `Intl.Segmenter` boundaries in windows (it is super-linear on long inputs).
 *
 * Hand-written because no maintained library gives cluster boundaries at one offset in linear time
 * over a whole text; `Intl.Segmenter` (ICU) decides every boundary these functions return.
 */

/** Is a UTF-16 code unit the high (first) half of a surrogate pair? */
export const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
/** Is a UTF-16 code unit the low (second) half of a surrogate pair? */
export const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/**
 * The largest offset <= `max` in `text` that is not inside a surrogate pair: `text.slice(0, result)`
 * never ends with half a character's UTF-16 encoding.
 * @param max UTF-16 units; at least 0.
 * @returns `text.length` when `max` reaches it, else `max` or `max - 1`. Never throws.
 */
export function codePointCut(text: string, max: number): number {
  if (max >= text.length) return text.length;
  return max > 0 && isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
}

/**
 * Intl.Segmenter is super-linear on long inputs in V8 (measured: 16k-character windows segment 2M
 * characters in ~0.1 s, 256k-character windows take ~12 s), so text is segmented in windows.
 */
export const SEGMENT_WINDOW_CHARS = 16_384;
const MAX_SEGMENT_WINDOW_CHARS = 65_536;

/**
 * Offsets (relative to `text`, strictly increasing, inside (0, text.length)) where a segment that
 * `startsPiece` accepts begins; other segments stay with the piece before them (white space after a
 * sentence, punctuation and spaces after a word).
 *
 * Segmented in windows (see SEGMENT_WINDOW_CHARS). A window that does not reach the end drops its last
 * two segments' worth of decisions: boundaries up to the start of the second-to-last segment are kept
 * (decided with that whole segment as look-ahead) and the next window starts there. A window with a
 * single segment grows, up to MAX_SEGMENT_WINDOW_CHARS; a segment longer than that is cut at the
 * window end (moved off a surrogate pair), a forced boundary that only very long runs reach; with
 * `forcedCuts` false such a boundary is not returned (it is no sentence end: `refineToSentences`).
 */
export function segmentCuts(text: string, segmenter: Intl.Segmenter, startsPiece: (s: Intl.SegmentData) => boolean, forcedCuts = true): number[] {
  const cuts: number[] = [];
  const accept = (offset: number): void => {
    if (offset > 0 && offset < text.length && offset > (cuts.at(-1) ?? 0)) cuts.push(offset);
  };
  let base = 0;
  let size = SEGMENT_WINDOW_CHARS;
  while (base < text.length) {
    const end = Math.min(text.length, base + size);
    const segments = Array.from(segmenter.segment(text.slice(base, end)), (s) => ({ index: s.index, starts: startsPiece(s) }));
    if (end === text.length) {
      for (const s of segments) if (s.starts) accept(base + s.index);
      break;
    }
    if (segments.length >= 3) {
      const keepUpTo = segments[segments.length - 2].index;
      for (const s of segments) if (s.index <= keepUpTo && s.starts) accept(base + s.index);
      base += keepUpTo;
      size = SEGMENT_WINDOW_CHARS;
    } else if (size < MAX_SEGMENT_WINDOW_CHARS) {
      size *= 2;
    } else {
      // One or two segments across the largest window: keep their boundary if any, else force one.
      const second = segments[1];
      let next = second !== undefined ? base + second.index : end;
      if (second === undefined && isHighSurrogate(text.charCodeAt(next - 1))) next--;
      if (second === undefined ? forcedCuts : second.starts) accept(next);
      base = next;
      size = SEGMENT_WINDOW_CHARS;
    }
  }
  return cuts;
}

/** The code point that ends at `offset` (one or two UTF-16 units). */
function codePointBefore(text: string, offset: number): string {
  return offset >= 2 && isLowSurrogate(text.charCodeAt(offset - 1)) && isHighSurrogate(text.charCodeAt(offset - 2))
    ? text.slice(offset - 2, offset)
    : text.slice(offset - 1, offset);
}

/** Locale fixed for determinism; grapheme clusters do not depend on it (UAX #29 extended clusters). */
const graphemeSegmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * Code points that may continue the cluster before them, a superset of UAX #29 Extend, ZWJ and
 * SpacingMark: marks (\p{M}), format characters (\p{Cf}: ZWJ, ZWNJ, tags), emoji modifiers, and the
 * two SpacingMark letters U+0E33 and U+0EB3.
 */
const MAY_EXTEND = /^[\p{M}\p{Cf}\u{1F3FB}-\u{1F3FF}\u0E33\u0EB3]$/u;
/**
 * Code points the next one may join whatever it is, a superset: Prepend (the \p{Cf} ones and the
 * letters named), ZWJ before a pictograph (\p{Cf}), and marks, which covers the Indic conjunct rule
 * (GB9c: a consonant after a virama, possibly followed by other marks, stays in the cluster).
 */
const MAY_HOLD = /^[\p{M}\p{Cf}\u0D4E\u{111C2}\u{111C3}\u{1193F}\u{11941}\u{11A3A}\u{11A84}-\u{11A89}\u{11D46}]$/u;

const isRegionalIndicator = (cp: number): boolean => cp >= 0x1f1e6 && cp <= 0x1f1ff;
const isHangulL = (cp: number): boolean => (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0xa960 && cp <= 0xa97c);
const isHangulVT = (cp: number): boolean => (cp >= 0x1160 && cp <= 0x11ff) || (cp >= 0xd7b0 && cp <= 0xd7fb);
const isHangulSyllable = (cp: number): boolean => cp >= 0xac00 && cp <= 0xd7a3;

/**
 * May the code points `before` and `after` belong to one grapheme cluster? False means a boundary
 * between them for certain (UAX #29 GB3-GB13 allow no join); true means "maybe": segment to know.
 */
function mayJoin(before: number, after: number): boolean {
  if (MAY_EXTEND.test(String.fromCodePoint(after)) || MAY_HOLD.test(String.fromCodePoint(before))) return true;
  if (before === 0x0d) return after === 0x0a;
  if (isRegionalIndicator(before)) return isRegionalIndicator(after);
  if (isHangulL(before)) return isHangulL(after) || isHangulVT(after) || isHangulSyllable(after);
  if (isHangulVT(before) || isHangulSyllable(before)) return isHangulVT(after);
  return false;
}

/**
 * The extended grapheme cluster boundaries of one text (UAX #29, as `Intl.Segmenter` with
 * `granularity: 'grapheme'` finds them), asked one offset at a time. Almost every offset is decided
 * from the two code points around it ({@link mayJoin}); the others lie in a run of "maybe" offsets
 * between two certain boundaries, which is segmented once (in windows: Intl.Segmenter is
 * super-linear on long inputs in V8, measured 46 s for 262k characters at grapheme granularity) and
 * cached, so asking every offset of a text costs linear time.
 */
export class GraphemeBoundaries {
  private run: { start: number; end: number; cuts: Set<number> } | undefined;

  constructor(private readonly text: string) {}

  /** Is `offset` (UTF-16 units) a cluster boundary? Text start and end are; inside a surrogate pair is not. */
  has(offset: number): boolean {
    const { text } = this;
    if (offset <= 0 || offset >= text.length) return true;
    if (isLowSurrogate(text.charCodeAt(offset)) && isHighSurrogate(text.charCodeAt(offset - 1))) return false;
    if (!this.maybeAt(offset)) return true;
    if (this.run === undefined || offset <= this.run.start || offset >= this.run.end) this.run = this.runAround(offset);
    return this.run.cuts.has(offset);
  }

  private maybeAt(offset: number): boolean {
    return mayJoin(codePointBefore(this.text, offset).codePointAt(0) ?? 0, this.text.codePointAt(offset) ?? 0);
  }

  /** The run of "maybe" offsets around `offset`, between two certain boundaries, segmented. */
  private runAround(offset: number): { start: number; end: number; cuts: Set<number> } {
    const { text } = this;
    let start = offset - codePointBefore(text, offset).length;
    while (start > 0 && this.maybeAt(start)) start -= codePointBefore(text, start).length;
    let end = offset + String.fromCodePoint(text.codePointAt(offset) ?? 0).length;
    while (end < text.length && this.maybeAt(end)) end += String.fromCodePoint(text.codePointAt(end) ?? 0).length;
    const cuts = new Set(segmentCuts(text.slice(start, end), graphemeSegmenter, () => true).map((cut) => start + cut));
    return { start, end, cuts };
  }
}

/**
 * The nearest extended grapheme cluster boundary (UAX #29, as chunk cuts use) at or before
 * (`'before'`) or at or after (`'after'`) `offset`, so that a slice of `text` cut there never splits a
 * character: no lone surrogate, no emoji sequence or letter cut from its marks.
 * @param offset UTF-16 units, clamped to `[0, text.length]`.
 * @returns a UTF-16 offset in `[0, text.length]`; `offset` itself when it is a boundary. Never throws.
 */
export function graphemeBoundary(text: string, offset: number, direction: 'before' | 'after'): number {
  let at = Number.isFinite(offset) ? Math.max(0, Math.min(text.length, Math.trunc(offset))) : 0;
  const clusters = new GraphemeBoundaries(text);
  const step = direction === 'before' ? -1 : 1;
  while (!clusters.has(at)) at += step;
  return at;
}

/** Offsets (relative to `text`) between code points; never inside a surrogate pair. */
export function codePointCuts(text: string): number[] {
  const cuts: number[] = [];
  let offset = 0;
  for (const codePoint of text) {
    offset += codePoint.length;
    if (offset < text.length) cuts.push(offset);
  }
  return cuts;
}
