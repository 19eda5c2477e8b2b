/**
 * Text processing of the extractive reader: sentence segmentation with exact offsets, and content
 * terms (lower-cased, stop words removed, Porter2-stemmed) for lexical relevance.
 *
 * Libraries: `Intl.Segmenter` (built into Node, ICU/UAX #29 sentence boundaries), `stopword`
 * (English stop-word list) and `wink-porter2-stemmer` (the Snowball "English" stemmer).
 * Offsets are UTF-16 code-unit offsets, half-open `[start, end)`, as in shared/types.ts.
 */
import stemWord from 'wink-porter2-stemmer';
import { eng as ENGLISH_STOP_WORDS } from 'stopword';
import { codePointCut } from '../unicode';

/** One sentence of a text: its trimmed text and its `[start, end)` offsets in that text. */
export interface Sentence {
  /** Offset of the first non-space character (UTF-16 code units). */
  start: number;
  /** Offset just past the last non-space character. */
  end: number;
  /** `text.slice(start, end)`. */
  text: string;
}

/** One content term occurrence: the stem and the `[start, end)` offsets of its word. */
export interface TermOccurrence {
  term: string;
  start: number;
  end: number;
}

const SEGMENTER = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Window of text (characters) handed to `Intl.Segmenter` at once. V8's sentence iterator is
 * quadratic in the string length (measured: 1.5 s for one 217k-character address, 11 s for the
 * whole State of the Union corpus); segmenting a sliding window and restarting at the start of the
 * window's last (possibly cut) sentence gives the same boundaries in linear time (0.4 s).
 */
const SEGMENT_WINDOW_CHARS = 3000;

/**
 * A fragment that ends with a short capitalised abbreviation ("Mr.", "Gen.", "St.", "U.S.", "Jan.")
 * or a name's initial ("M." of "M. Night Shyamalan", each of "J. R. R. Tolkien") followed by a
 * capitalised word or a number is split by UAX #29 without locale suppressions (which V8 does not
 * apply); such fragments are joined to the next sentence when both lie on the same line. A sentence
 * that really ends with a lone capital ("… vitamin C.") is joined to the next one too: a unit of two
 * sentences costs a little precision, a name cut after its initial cost the answer (a seeking
 * agent's evidence ended "… directed by M." and the reasoning agent answered "M.").
 */
const ABBREVIATION_END =
  /(?:^|[\s(])(?:Mr|Mrs|Ms|Dr|St|Gen|Gov|Col|Capt|Lt|Sen|Rep|Hon|Jr|Sr|No|Messrs|Adm|Maj|Sgt|Prof|Rev|Mt|Ft|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|[A-Z](?:\.[A-Z])*)\.$/;

/**
 * A line that starts a list item: a bullet (`- `, `* `, `• `, `– `) or a number or letter with `.`
 * or `)` (`1. `, `2) `, `(a) `, `b) `, `iv. `), then a space.
 */
export const LIST_ITEM_START = /^[^\S\n]*(?:[-–—•*·▪◦‣][^\S\n]|\(?(?:\d{1,3}|[a-zA-Z]|[ivx]{1,4}|[IVX]{1,4})[.)][^\S\n])/u;

/**
 * Longest sentence (UTF-16 units) that joining lines may make: past it, a line break ends the
 * sentence even inside a paragraph, so that text with one item a line and no punctuation (a list,
 * a table, a poem) never reads as one very long sentence.
 */
export const MAX_JOINED_SENTENCE_CHARS = 300;

/** Sentence-final punctuation, possibly followed by closing quotes or brackets, at the end of a text. */
const SENTENCE_END = /[.!?…。！？‼⁇⁈⁉][\p{Pf}\p{Pe}"']*$/u;
/** A paragraph break in white space: a blank line (two line ends, spaces between) or U+2029. */
const PARAGRAPH_BREAK = /\n[^\S\n]*\n|\u2029/;
/** A line end in white space (LF, CR, U+2028; a U+2029 is a paragraph break). */
const LINE_BREAK = /[\n\r\u2028]/;

/**
 * Split `text` into sentences (UAX #29 via `Intl.Segmenter`), trimmed, with exact offsets:
 * for every result `s`, `text.slice(s.start, s.end) === s.text`. Whitespace-only segments are
 * dropped. Linear in the text length. Never throws.
 *
 * Line breaks: UAX #29 ends a sentence at every line end; here a line end inside a paragraph (wrapped
 * text, an HTML `<br>`, a PDF line) ends a sentence only when
 * - the white space holds a blank line (a paragraph ends), or
 * - the line before ends with sentence punctuation (`.`, `!`, `?`, `…`, then closing quotes or
 *   brackets), or
 * - the next line starts a list item ({@link LIST_ITEM_START}), or
 * - joining would make the sentence longer than {@link MAX_JOINED_SENTENCE_CHARS} (a list, a table or a
 *   poem without punctuation, one item a line);
 * otherwise the two lines are one sentence (its text keeps the line end).
 */
export function splitSentences(text: string): Sentence[] {
  const raw: Array<[number, number]> = [];
  let position = 0;
  while (position < text.length) {
    let window = SEGMENT_WINDOW_CHARS;
    for (;;) {
      const end = Math.min(text.length, position + window);
      const segments = Array.from(SEGMENTER.segment(text.slice(position, end)));
      if (end === text.length) {
        for (const s of segments) raw.push([position + s.index, position + s.index + s.segment.length]);
        position = text.length;
        break;
      }
      if (segments.length >= 2) {
        const last = segments[segments.length - 1];
        for (const s of segments.slice(0, -1)) raw.push([position + s.index, position + s.index + s.segment.length]);
        position += last.index;
        break;
      }
      window *= 2;
    }
  }
  const sentences: Sentence[] = [];
  for (const [rawStart, rawEnd] of raw) {
    let start = rawStart;
    let end = rawEnd;
    while (start < end && isSpace(text.charCodeAt(start))) start++;
    while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
    if (start === end) continue;
    const previous = sentences[sentences.length - 1];
    const gap = previous === undefined ? '' : text.slice(previous.end, start);
    const joinsLine =
      previous !== undefined &&
      LINE_BREAK.test(gap) &&
      !PARAGRAPH_BREAK.test(gap) &&
      !SENTENCE_END.test(previous.text) &&
      end - previous.start <= MAX_JOINED_SENTENCE_CHARS &&
      !LIST_ITEM_START.test(text.slice(start, Math.min(end, start + 16)));
    if (previous !== undefined && (joinsLine || (ABBREVIATION_END.test(previous.text) && !gap.includes('\n')))) {
      previous.end = end;
      previous.text = text.slice(previous.start, end);
      continue;
    }
    sentences.push({ start, end, text: text.slice(start, end) });
  }
  return sentences;
}

/**
 * Longest sentence (UTF-16 units) `boundedSentences` returns: about two ordinary English sentences.
 * The seeking agent's numbered units (shared/llm/sentences.ts `MAX_UNIT_CHARS`) and the offline
 * reader's sentences (shared/extractive/relevance.ts `analyzeText`) are both cut to it, so neither an
 * answer nor a message's evidence drags a whole page along.
 */
export const MAX_SENTENCE_CHARS = 400;

/**
 * `splitSentences` with every sentence longer than `maxChars` cut into windows of at most `maxChars`:
 * after the last line break, else clause mark (`，、；：,;:`), else space past the window's first
 * quarter, else at the limit (never inside a surrogate pair); each window trimmed, none empty, no text
 * other than white space lost. Offsets exact as in `splitSentences`. Never throws.
 * @param maxChars window length in UTF-16 units (>= 4).
 */
export function boundedSentences(text: string, maxChars: number = MAX_SENTENCE_CHARS): Sentence[] {
  const bounded: Sentence[] = [];
  for (const sentence of splitSentences(text)) {
    let start = sentence.start;
    const end = sentence.end;
    if (end - start <= maxChars) {
      bounded.push(sentence);
      continue;
    }
    while (end - start > maxChars) {
      const cut = cutPoint(text, start, start + maxChars);
      const pieceEnd = trimEndAt(text, start, cut);
      if (pieceEnd > start) bounded.push({ start, end: pieceEnd, text: text.slice(start, pieceEnd) });
      start = trimStartAt(text, cut, end);
    }
    if (end > start) bounded.push({ start, end, text: text.slice(start, end) });
  }
  return bounded;
}

const SPACE = /\s/;
/** Marks after which a long CJK or Latin clause may be cut: comma, semicolon, colon, enumeration comma. */
const CLAUSE_MARK = /[，、；：,;:]/;

/** Where to cut `[from, limit)`: after the last line break, else clause mark, else space past its first quarter; else at `limit` (never inside a surrogate pair). */
function cutPoint(text: string, from: number, limit: number): number {
  const floor = from + Math.floor((limit - from) / 4);
  const last = (test: (ch: string) => boolean): number => {
    for (let i = limit - 1; i > floor; i--) if (test(text[i])) return i + 1;
    return -1;
  };
  // A clause mark before a plain space: a window then ends with a clause, not in mid-phrase ("… was | 4417").
  for (const found of [last((ch) => ch === '\n'), last((ch) => CLAUSE_MARK.test(ch)), last((ch) => SPACE.test(ch))]) {
    if (found > from) return found;
  }
  return codePointCut(text, limit);
}

function trimEndAt(text: string, start: number, end: number): number {
  let e = end;
  while (e > start && SPACE.test(text[e - 1])) e--;
  return e;
}

function trimStartAt(text: string, start: number, end: number): number {
  let s = start;
  while (s < end && SPACE.test(text[s])) s++;
  return s;
}

function isSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 160 || code === 0x2028 || code === 0x2029;
}

/**
 * Stop words: the `stopword` package's English list, plus interrogatives, auxiliaries and negations
 * it lacks (a question's "whose", "does", "when" carry no topic).
 */
const STOP_WORDS: ReadonlySet<string> = new Set([
  ...ENGLISH_STOP_WORDS,
  'whose',
  'whom',
  'when',
  'why',
  'does',
  'done',
  'doing',
  'its',
  'upon',
  'shall',
  'will',
  'may',
  'not',
  'no',
  'nor',
  'yet',
  'so',
  'us',
  'one',
  'ones',
  'which',
  'what',
  'who',
  'whether',
  'either',
  'neither',
  'per',
  'via',
  'let',
  'thus',
  'hence',
  'also',
  'however',
  'therefore',
  'whereas',
  'been',
  'being',
  'became',
  'become',
]);

/** Word -> term (or null for a stop word) cache; bounded, words are few (tens of thousands). */
const termCache = new Map<string, string | null>();
const TERM_CACHE_LIMIT = 200_000;

/**
 * The longest word that gets a term, characters. The Porter2 stemmer's regular expressions take time
 * quadratic in a word's length (a 50,000-letter "word" took a minute); the longest words of English
 * have about 45 letters, so a longer run of letters (a data blob, a base64 string) is no word.
 */
export const MAX_WORD_CHARS = 64;

/**
 * The stem of one word, or null when it is a stop word, too short to carry meaning, or longer than
 * {@link MAX_WORD_CHARS}: lower-cased, possessive "'s" removed, dots removed ("U.S" -> "us"),
 * Porter2-stemmed. Numbers are kept as they are ("2001", "25.5"); number words two..ninety become
 * digits ("four" -> "4").
 */
export function termOf(word: string): string | null {
  if (word.length > MAX_WORD_CHARS) return null;
  const cached = termCache.get(word);
  if (cached !== undefined) return cached;
  const term = computeTerm(word);
  if (termCache.size < TERM_CACHE_LIMIT) termCache.set(word, term);
  return term;
}

/**
 * Cardinal number words as digits, so that "four years" matches "4-year" (hand-written: a few
 * words; a number-parsing library would be more than this needs). Their background weight is that
 * of the word (shared/extractive/weights.ts maps SUBTLEX words through the same function).
 */
const NUMBER_WORDS: ReadonlyMap<string, string> = new Map([
  // "one" is mostly a pronoun ("one of the"): it stays a stop word.
  ['two', '2'],
  ['three', '3'],
  ['four', '4'],
  ['five', '5'],
  ['six', '6'],
  ['seven', '7'],
  ['eight', '8'],
  ['nine', '9'],
  ['ten', '10'],
  ['eleven', '11'],
  ['twelve', '12'],
  ['thirteen', '13'],
  ['fourteen', '14'],
  ['fifteen', '15'],
  ['sixteen', '16'],
  ['seventeen', '17'],
  ['eighteen', '18'],
  ['nineteen', '19'],
  ['twenty', '20'],
  ['thirty', '30'],
  ['forty', '40'],
  ['fifty', '50'],
  ['sixty', '60'],
  ['seventy', '70'],
  ['eighty', '80'],
  ['ninety', '90'],
]);

function computeTerm(word: string): string | null {
  // A number keeps its decimal point ("25.5"); other words lose dots and apostrophes ("U.S" -> "us").
  if (/^[\p{N}.]+$/u.test(word)) return word;
  const lower = word
    .toLowerCase()
    .replace(/['’]s$/u, '')
    .replace(/['’.]/gu, '');
  const number = NUMBER_WORDS.get(lower);
  if (number !== undefined) return number;
  if (lower.length === 0 || STOP_WORDS.has(lower)) return null;
  if (/^\p{N}+$/u.test(lower)) return lower;
  if (lower.length === 1) return null;
  return stemWord(lower);
}

/**
 * Content-term occurrences of `text`, in text order, with the offsets of their words in `text`.
 * A word is a run of letters and digits, with inner apostrophes or dots ("nation's", "U.S");
 * hyphens and other punctuation split words. Never throws.
 */
export function termOccurrences(text: string): TermOccurrence[] {
  // A hand-written scan instead of `text.matchAll(WORD)`: the same words, without a match object per
  // word (the regex iterator was a third of the seeking agent's time on 8000-token chunks).
  const out: TermOccurrence[] = [];
  const length = text.length;
  let i = 0;
  while (i < length) {
    if (!isWordCode(text, i)) {
      i++;
      continue;
    }
    const start = i;
    for (;;) {
      while (i < length && isWordCode(text, i)) i++;
      // Inner apostrophe or dot followed by a word character continues the word ("nation's", "U.S").
      const c = text.charCodeAt(i);
      if ((c === 39 || c === 0x2019 || c === 46) && i + 1 < length && isWordCode(text, i + 1)) {
        i++;
        continue;
      }
      break;
    }
    const term = termOf(text.slice(start, i));
    if (term !== null) out.push({ term, start, end: i });
  }
  return out;
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** Is the UTF-16 unit at `i` part of a word (a letter or digit; surrogate pairs count as letters)? */
function isWordCode(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
  if (c >= 0xd800 && c <= 0xdfff) return true;
  return LETTER_OR_DIGIT.test(text[i]);
}

/** The content terms of `text` in order (with repeats). */
export function contentTerms(text: string): string[] {
  return termOccurrences(text).map((o) => o.term);
}

/**
 * True when the word at `[start, end)` of `text` is written as a name or number: it has a digit, or
 * it is capitalised and does not start its sentence (which starts at `sentenceStart`).
 */
export function isNameOrNumber(text: string, start: number, end: number, sentenceStart: number): boolean {
  const first = text.charCodeAt(start);
  if (start > sentenceStart && first >= 65 && first <= 90) return true;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) return true;
  }
  return start > sentenceStart && first > 127 && /\p{Lu}/u.test(text.charAt(start));
}

/** A run of CJK ideographs, kana or hangul (text with no spaces between words). */
export const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

/**
 * The CJK character bigrams of a text in order, with repeats (a run of one character is its own
 * term): the terms of Chinese, Japanese and Korean text, which `contentTerms` reads as one word
 * per run (the approach of Lucene's CJK analyzer; no dictionary needed).
 */
export function cjkBigramOccurrences(text: string): string[] {
  const grams: string[] = [];
  for (const run of text.match(CJK_RUN) ?? []) {
    const chars = Array.from(run);
    if (chars.length === 1) grams.push(chars[0]);
    for (let i = 0; i + 1 < chars.length; i++) grams.push(chars[i] + chars[i + 1]);
  }
  return grams;
}

/**
 * The terms a lexical retriever indexes: the content terms of the text outside CJK runs
 * (`contentTerms`) and the CJK character bigrams (`cjkBigramOccurrences`), with repeats.
 */
export function retrievalTerms(text: string): string[] {
  return [...contentTerms(text.replace(CJK_RUN, ' ')), ...cjkBigramOccurrences(text)];
}
