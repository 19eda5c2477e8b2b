/**
 * Numbered sentences of a chunk: the units a seeking agent cites by id (issue "evidence that
 * survives a small model"). The chunk is shown to the model one unit per line, each line led by its
 * id (`[1] …`, `[2] …`); the reply names ids, and the message's evidence and quotes are the cited
 * units' own text and offsets. Citations are then exact by construction, in every language and for
 * every provider: nothing depends on the model copying text.
 *
 * A unit is a sentence (UAX #29 via `splitSentences`, shared/extractive/text.ts), or a line where
 * text has no sentence punctuation (a line break in a chunk ends a unit there); a heading line (at
 * most 80 characters, no sentence mark at its end) joins the sentence after it; a unit is cut where it
 * is longer than {@link MAX_UNIT_CHARS} (at a line break, else a space, else a clause mark such as
 * `，`, else anywhere that is not inside a surrogate pair), so one cited id never drags a page along.
 *
 * Offsets are UTF-16 code units into the chunk text, half-open `[start, end)`; every unit is trimmed
 * and non-empty, units are in text order and never overlap. Pure functions; never throw.
 */
import { boundedSentences, MAX_SENTENCE_CHARS } from '../extractive/text';

/** One citable unit of a chunk: its 1-based id and its `[start, end)` offsets in the chunk text. */
export interface SentenceUnit {
  id: number;
  start: number;
  end: number;
}

/**
 * Longest unit (characters). About two ordinary English sentences; a longer sentence is cut (see
 * the file comment), so that evidence built from a few cited ids stays short.
 */
export const MAX_UNIT_CHARS = MAX_SENTENCE_CHARS;

/**
 * Most units a chunk is shown with. A chunk of 8,000 tokens of prose has about 300-400 sentences;
 * a chunk with more (thousands of short lines) has its consecutive units joined up to a larger bound
 * (`packUnits`: 800, 1,600, … characters, the smallest that fits), so a reply schema's id range
 * (1..count) stays small enough for every provider's schema limits and every unit stays bounded.
 */
export const MAX_UNITS = 2000;

/**
 * Tokens the id markers add to a chunk's prompt, per unit, at most: `[123] ` and the line break that
 * replaces the space between two sentences (o200k: 3 tokens for ids below 1,000, 4 up to
 * `MAX_UNITS`). Budgets use it through {@link numberedChunkTokens}; {@link numberedUnits} keeps a
 * chunk's units within it.
 */
export const MARKER_TOKENS_PER_UNIT = 4;

/** Tokens of one id marker below id 1,000 (`[1] ` … `[999] ` with its line break; o200k, measured). */
const SHORT_MARKER_TOKENS = 3;
/** Ids with a short marker: 1 … 999. */
const SHORT_MARKER_IDS = 999;

/**
 * Most share of a chunk's tokens the id markers add, for budgets made before the chunk is seen (the
 * context check of a chunk size, the cost estimate): English prose averages about 25-30 tokens a
 * sentence, so 4 marker tokens a sentence are 13-16%; a chunk of shorter sentences or lines has
 * its units joined until the markers fit this share ({@link numberedUnits}).
 */
export const MARKER_TOKEN_SHARE = 0.2;

/**
 * Units a numbered chunk may keep whatever its size ({@link numberedUnits}): a chunk under 120 tokens
 * keeps up to this many, so its markers may take more than the share, at most
 * `MIN_NUMBERED_UNITS × MARKER_TOKENS_PER_UNIT` (32) tokens; the cost estimate adds that much per chunk.
 */
export const MIN_NUMBERED_UNITS = 8;

/**
 * Tokens of a chunk of `chunkTokens` once numbered, at most (`MARKER_TOKEN_SHARE`, kept by
 * {@link numberedUnits}; a chunk under 120 tokens may take up to 32 marker tokens, which the cost
 * estimate adds per chunk: `MIN_NUMBERED_UNITS`).
 * @param chunkTokens tokens of corpus text (o200k).
 * @returns tokens (o200k), rounded up.
 */
export function numberedChunkTokens(chunkTokens: number): number {
  return Math.ceil(chunkTokens * (1 + MARKER_TOKEN_SHARE));
}

/**
 * The citable units of a chunk text, in order (see the file comment).
 * @param text the chunk text.
 * @returns units with ids 1..n; empty for a text of white space only.
 */
export function sentenceUnits(text: string): SentenceUnit[] {
  // A line break inside a sentence (wrapped text, a list, a table) is not cut unless the sentence is
  // too long: the window cuts at line breaks first.
  const pieces: Array<[number, number]> = boundedSentences(text, MAX_UNIT_CHARS).map((b) => [b.start, b.end]);
  const units: SentenceUnit[] = [];
  for (let i = 0; i < pieces.length; i++) {
    let [start, end] = pieces[i];
    if (end <= start) continue;
    // A heading or title line (short, no sentence mark at its end) is no evidence alone: it joins the
    // sentence after it, which it names ("Alû" + "Alû is a demon of …"), when both stay within the cap.
    while (i + 1 < pieces.length && isHeading(text, start, end) && pieces[i + 1][1] - start <= MAX_UNIT_CHARS) {
      end = pieces[i + 1][1];
      i++;
    }
    units.push({ id: units.length + 1, start, end });
  }
  return units.length <= MAX_UNITS ? units : packUnits(text, units);
}

/**
 * The units a seeking agent sees numbered (`renderNumbered`): the chunk's `sentenceUnits`, joined
 * further where their id markers would cost more than `MARKER_TOKEN_SHARE` of the chunk's tokens
 * (many one-word sentences or short lines, where the markers alone added 66-95%), so that every
 * budget made before the chunk is seen (the chunk-size check, `numberedChunkTokens`; the cost
 * estimate's "at most") holds for every text: as many units as markers fit in
 * `MARKER_TOKEN_SHARE` of the chunk's tokens (3 tokens a marker below id 1,000, 4 above), or
 * `MIN_NUMBERED_UNITS` for a chunk under about 120 tokens (a small chunk keeps its sentences apart;
 * its prompt is far from any window). Joined units are consecutive
 * and bounded as in `packUnits`; prose of ordinary sentences (25-30 tokens each) is left as it is.
 * The prompt and the reading of the reply's ids both use this function, so the ids always name the
 * same spans.
 * @param text the chunk text.
 * @param tokens the chunk's tokens (o200k; `Chunk.tokens`).
 * @returns units with ids 1..n, n <= `MAX_UNITS`: the markers add at most max(32, 0.2 × tokens)
 *   tokens.
 */
export function numberedUnits(text: string, tokens: number): SentenceUnit[] {
  const units = sentenceUnits(text);
  const allowance = Math.floor(MARKER_TOKEN_SHARE * tokens);
  const short = SHORT_MARKER_TOKENS * SHORT_MARKER_IDS;
  const fitting =
    allowance <= short ? Math.floor(allowance / SHORT_MARKER_TOKENS) : SHORT_MARKER_IDS + Math.floor((allowance - short) / MARKER_TOKENS_PER_UNIT);
  const budget = Math.min(MAX_UNITS, Math.max(MIN_NUMBERED_UNITS, fitting));
  return units.length <= budget ? units : packUnits(text, units, budget);
}

/**
 * Units of a chunk with more than `maxUnits` of them (thousands of short lines: a log, a word list):
 * consecutive units joined, each at most `cap` characters, the cap starting at `MAX_UNIT_CHARS` and
 * doubled until `maxUnits` ids cover the chunk. Every unit stays bounded (by the smallest such cap)
 * and the chunk is covered in full; no unit takes "the rest of the chunk".
 */
function packUnits(text: string, units: readonly SentenceUnit[], maxUnits = MAX_UNITS): SentenceUnit[] {
  for (let cap = MAX_UNIT_CHARS; ; cap *= 2) {
    const packed: SentenceUnit[] = [];
    for (const u of units) {
      const last = packed[packed.length - 1];
      if (last !== undefined && u.end - last.start <= cap) last.end = u.end;
      else packed.push({ id: packed.length + 1, start: u.start, end: u.end });
    }
    if (packed.length <= maxUnits) return packed;
  }
}

/** Longest line (characters) taken for a heading by `sentenceUnits`. */
const MAX_HEADING_CHARS = 80;
/** A sentence mark ending a line: then it is a sentence, not a heading. */
const SENTENCE_END = /[.!?。！？…]["'”’)\]]*$/u;

/** Is `[start, end)` a heading: short, followed by a line break, without a sentence mark at its end? */
function isHeading(text: string, start: number, end: number): boolean {
  if (end - start > MAX_HEADING_CHARS || SENTENCE_END.test(text.slice(start, end))) return false;
  const after = text.slice(end, end + 3);
  return /^[ \t]*\r?\n/.test(after);
}

/**
 * The chunk as the seeking agent reads it: one unit per line, `[id] text`, white space inside a unit
 * collapsed to one space (so a unit never spans lines). Not escaped: the prompt escapes it.
 * @param text the chunk text; @param units its `sentenceUnits`.
 */
export function renderNumbered(text: string, units: readonly SentenceUnit[]): string {
  return units.map((u) => `[${u.id}] ${text.slice(u.start, u.end).replace(/\s+/g, ' ')}`).join('\n');
}

/**
 * The evidence text of cited units: their text verbatim (white space collapsed), in chunk order,
 * joined by a space when adjacent and by " … " when units lie between them.
 * @param ids cited ids (any order, repeats allowed; ids outside the units are ignored).
 * @returns the text and the cited units (sorted, distinct).
 */
export function citedText(text: string, units: readonly SentenceUnit[], ids: readonly number[]): { text: string; units: SentenceUnit[] } {
  const cited = [...new Set(ids)]
    .filter((id) => Number.isInteger(id) && id >= 1 && id <= units.length)
    .sort((a, b) => a - b)
    .map((id) => units[id - 1]);
  let out = '';
  cited.forEach((unit, i) => {
    if (i > 0) out += unit.id === cited[i - 1].id + 1 ? ' ' : ' … ';
    out += text.slice(unit.start, unit.end).replace(/\s+/g, ' ');
  });
  return { text: out, units: cited };
}
