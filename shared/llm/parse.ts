/**
 * Lenient parsing of the agents' replies (prompts in shared/llm/prompts.ts). Models, small ones
 * especially, do not always follow the requested JSON: they wrap it in prose or a ```json fence,
 * get cut off at the output-token limit, or write `**Score:** 90` instead. These pure functions
 * extract what has a clear meaning and report when it has none, so the caller can re-ask once.
 *
 * Libraries: `partial-json` salvages truncated JSON (only the fields that are complete: strings and
 * numbers cut in the middle are dropped). The scanning around it (finding the object in prose,
 * escaping raw control characters inside strings, which JSON.parse and partial-json both reject) is
 * hand-written because it is specific to LLM replies and a few lines long.
 */
import { Allow, parse as parsePartialJson } from 'partial-json';
import { NO_ANSWER } from '../types';
import { contentTerms } from '../extractive/text';
import { codePointCut } from '../unicode';

// ---------------------------------------------------------------------------------------------
// JSON extraction
// ---------------------------------------------------------------------------------------------

/** A JSON object found in a reply. */
export interface ExtractedJson {
  value: Record<string, unknown>;
  /** False when the object was cut off (salvaged with partial-json: only complete fields kept). */
  complete: boolean;
  /** The reply text outside the object (prose before and after), for lenient fallbacks. */
  rest: string;
}

/**
 * Scan a JSON object starting at `start` (a `{`), string-aware. Raw control characters inside
 * strings (models write literal newlines) are escaped so JSON.parse accepts them.
 * @returns the object text (escaped), the end offset (exclusive) and whether it was closed.
 */
function scanObject(text: string, start: number): { json: string; end: number; closed: boolean } {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let out = '';
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      else if (ch < ' ') {
        out += ch === '\n' ? '\\n' : ch === '\t' ? '\\t' : ch === '\r' ? '\\r' : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
        continue;
      }
      out += ch;
      continue;
    }
    out += ch;
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return { json: out, end: i + 1, closed: true };
    }
  }
  return { json: out, end: text.length, closed: false };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Find the JSON object of a reply: inside a ```json fence if there is one, otherwise the first `{`
 * that starts a parseable object (prose before and after is allowed). A reply cut off inside the
 * object is salvaged: complete fields only.
 * @param text the raw reply.
 * @returns the object, or null when the reply holds no JSON object.
 */
export function extractJsonObject(text: string): ExtractedJson | null {
  const fence = /```(?:json|JSON)?[ \t]*\r?\n?([\s\S]*?)(?:```|$)/.exec(text);
  const candidates: Array<{ body: string; offset: number }> = [];
  if (fence) candidates.push({ body: fence[1], offset: fence.index + fence[0].indexOf(fence[1]) });
  candidates.push({ body: text, offset: 0 });
  for (const { body, offset } of candidates) {
    for (let start = body.indexOf('{'); start !== -1; start = body.indexOf('{', start + 1)) {
      const scanned = scanObject(body, start);
      // Keep line structure: a score line after the object must still start a line.
      const rest = (text.slice(0, offset + start).trimEnd() + '\n' + text.slice(offset + scanned.end).trimStart()).trim();
      if (scanned.closed) {
        try {
          const value: unknown = JSON.parse(scanned.json);
          if (isRecord(value)) return { value, complete: true, rest };
        } catch {
          // Not valid JSON as a whole (e.g. `{a}` in prose): try partial parsing, then the next `{`.
        }
      }
      try {
        // Allow only partial objects and arrays: a string or number cut at the end is dropped.
        const value: unknown = parsePartialJson(scanned.json, Allow.OBJ | Allow.ARR);
        // A closed object that only partial-json reads (a bare NaN or Infinity as a value) is whole:
        // nothing was cut off, so it is not reported as truncated.
        if (isRecord(value) && Object.keys(value).length > 0) return { value, complete: scanned.closed, rest };
        // An object cut off inside its first field (`{"evidence": "Ada wo`): JSON, but nothing complete.
        if (isRecord(value) && !scanned.closed && /^\{\s*"/.test(scanned.json)) return { value, complete: false, rest };
      } catch {
        // Malformed beyond salvage: try the next `{`.
      }
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Relevance score
// ---------------------------------------------------------------------------------------------

/**
 * A relevance score as read from a reply: the integer 0-100, or null when there is none with a clear
 * meaning; `warning` says what was done when the model's number was out of range (clamped) or not a
 * number (`NaN`, `Infinity`: no score), for the run's warnings.
 */
export interface ScoreReading {
  score: number | null;
  warning?: string;
}

const outOfRange = (raw: string, score: number): ScoreReading => ({ score, warning: `relevance score ${raw} out of 0-100; clamped to ${score}` });
const notANumber = (raw: string): ScoreReading => ({ score: null, warning: `relevance score ${raw} is not a number` });

/**
 * Read a number as an integer relevance score 0-100.
 * - Values in (0, 1) are fractions of 1 (0.85 -> 85): the model used a 0-1 scale.
 * - Other values in [0, 100] are rounded.
 * - Finite values out of range are clamped with a warning (`-5` -> 0, `250` and `1e9` -> 100).
 * - NaN and the infinities give no score, with a warning.
 * @param value the number; @param raw how the reply wrote it (for the warning), default `String(value)`.
 */
export function readScoreValue(value: number, raw: string = String(value)): ScoreReading {
  if (!Number.isFinite(value)) return notANumber(raw);
  if (value > 0 && value < 1) return { score: Math.round(value * 100) };
  const rounded = Math.round(value);
  if (rounded < 0) return outOfRange(raw, 0);
  if (rounded > 100) return outOfRange(raw, 100);
  return { score: rounded };
}

/** {@link readScoreValue} without the warning: the score, or null for NaN and the infinities. */
export function clampScore(value: number): number | null {
  return readScoreValue(value).score;
}

/** Read `n` or `n/d` (0 < d <= 100, e.g. 8/10 -> 80, 75/100 -> 75) as a score; null for another denominator. */
function scoreOf(numerator: string, denominator: string | undefined): ScoreReading | null {
  const n = numberOf(numerator);
  if (denominator === undefined) return readScoreValue(n, numerator);
  const d = Number(denominator);
  if (!(d > 0) || d > 100) return null;
  return readScoreValue(d === 100 ? n : (n / d) * 100, `${numerator}/${denominator}`);
}

/** `Number` that also reads the spellings models use for non-numbers (`nan`, `inf`, `-Infinity`). */
function numberOf(text: string): number {
  if (/^[-+]?(?:nan)$/i.test(text)) return Number.NaN;
  if (/^[-+]?inf(?:inity)?$/i.test(text)) return text.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  return Number(text);
}

/**
 * A number as models write scores: sign, digits, decimals and an exponent (`1e9`, `2.5e2`), or a
 * non-number (`NaN`, `Infinity`), never followed by a letter, digit or `.digit` (so `1889abc` or
 * `3.5.1` is not a score). The exponent matters: without it `1e9` read as 1.
 */
const NUMBER = String.raw`([-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:NaN|nan|Infinity|infinity|inf))(?![\w]|\.\d)`;
const MARKUP = String.raw`[\s*_\x60~]*`;
const DENOMINATOR = String.raw`(?:\s*/\s*(\d+(?:\.\d+)?))?`;
/**
 * A labelled score line: `Score: 70`, `**Score:** 90`, `**Score**: 90`, `Score：80` (full-width
 * colon), `Relevance score (0-100): 85`, `Rating = 8/10`, `分数：80`. The label must start the line
 * (after markdown), so a sentence such as "the final score was 3-1" inside evidence never matches.
 */
const SCORE_LINE_SOURCE =
  String.raw`^[\s>*_#\x60~-]*(?:(?:relevance|usefulness)\s+)?(?:score|relevance|usefulness|分数|评分|得分|相关性)` +
  `${MARKUP}(?:\\([^)\\n]*\\))?${MARKUP}[:：=]${MARKUP}${NUMBER}${DENOMINATOR}`;
/** `"score": 80` or `'score': "80"` in JSON-like text that did not parse. */
const SCORE_FIELD_SOURCE = String.raw`["']score["']\s*:\s*["']?${NUMBER}${DENOMINATOR}`;
/** A line that is only a fraction, e.g. `75/100` or `**8/10**`. */
const FRACTION_LINE_SOURCE = `^${MARKUP}${NUMBER}\\s*/\\s*(\\d+(?:\\.\\d+)?)${MARKUP}[.%]?${MARKUP}$`;
/** A whole reply that is only a number, e.g. `150` or `85.` or `**90**`. */
const BARE_NUMBER = new RegExp(`^${MARKUP}${NUMBER}${MARKUP}%?[.]?${MARKUP}$`);
/** One-line (non-global, so stateless) forms of the line patterns, for classifying single lines. */
const SCORE_LINE_ONE = new RegExp(SCORE_LINE_SOURCE, 'i');
const FRACTION_LINE_ONE = new RegExp(FRACTION_LINE_SOURCE);

/** The last match of a pattern that reads as a score (patterns built fresh: parsing keeps no state). */
function lastMatchScore(text: string, source: string, flags: string): ScoreReading | null {
  let reading: ScoreReading | null = null;
  for (const match of text.matchAll(new RegExp(source, flags))) {
    const value = scoreOf(match[1], match[2]);
    if (value !== null) reading = value;
  }
  return reading;
}

/**
 * Read a relevance score from free text, leniently, with what was done to it. In order: the last
 * labelled score line (`**Score:** 90`, `Score：80`, `score: 70`, `Score: 8/10`), a `"score": N`
 * field, the last line that is only a fraction (`75/100`), a reply that is only a number (`150`).
 * Out-of-range numbers are clamped and non-numbers give no score, each with a warning
 * ({@link readScoreValue}). A pure function of `text`.
 * @returns the reading; `score` null when no score has a clear meaning (the caller re-asks).
 */
export function readScore(text: string): ScoreReading {
  const bare = BARE_NUMBER.exec(text.trim());
  return (
    lastMatchScore(text, SCORE_LINE_SOURCE, 'gim') ??
    lastMatchScore(text, SCORE_FIELD_SOURCE, 'gi') ??
    lastMatchScore(text, FRACTION_LINE_SOURCE, 'gm') ??
    (bare ? scoreOf(bare[1], undefined) : null) ?? { score: null }
  );
}

/**
 * {@link readScore} without the warning.
 * @returns an integer 0-100, or null when no score has a clear meaning (the caller re-asks).
 */
export function parseScore(text: string): number | null {
  return readScore(text).score;
}

/** A JSON `score` field: a number, or a string such as "80", "80/100", "Score: 80", "NaN". */
function scoreFromField(value: unknown): ScoreReading | null {
  if (typeof value === 'number') return readScoreValue(value);
  if (typeof value !== 'string') return null;
  const parsed = readScore(value);
  if (parsed.score !== null || parsed.warning !== undefined) return parsed;
  // "about 80" reads as 80; "8 out of 10" (two numbers) has no single clear value.
  const numbers = value.match(/-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g) ?? [];
  return numbers.length === 1 ? readScoreValue(Number(numbers[0]), numbers[0]) : null;
}

// ---------------------------------------------------------------------------------------------
// Refusals: one vocabulary for both agent roles
// ---------------------------------------------------------------------------------------------

/**
 * The refusal vocabulary shared by the seeking agent ("nothing relevant here") and the reasoning
 * agent ("cannot answer"): the markers NO INFORMATION and NO ANSWER and their common phrasings
 * ("No relevant information found in the chunk.", "There is no answer", "none", "n/a", "not
 * applicable", "unknown", "not mentioned", "cannot be determined"), tolerant of case, markdown
 * emphasis, quotation marks and final punctuation. Matched against a whole value only — a whole
 * reply, or a whole structured field (`evidence`, `answer`) — never as a substring of free text:
 * "Casino info" and "None of the three bridges survived." are not refusals.
 */
const REFUSAL =
  /^[\s*_"'\x60(]*(?:(?:there\s+is|there's|(?:the|this|my)\s+(?:chunk|text|passage|context|evidence)\s+(?:contains|has|gives|provides))\s+)?(?:(?:no(?:\s+(?:new|relevant|useful|sufficient|enough))*[\s_-]*(?:information|answer|evidence)(?:\s+(?:is\s+)?(?:found|available|given|provided|relevant\s+to\s+the\s+(?:query|question)))?(?:\s+(?:in|from)\s+(?:the|this|my)\s+(?:chunk|text|passage|context|evidence|messages))?)|none|n\/a|not\s+applicable|unknown|not\s+(?:found|mentioned|stated|given|available)|(?:it\s+)?cannot\s+be\s+(?:determined|answered))[\s*_"'\x60.!)]*$/i;

/**
 * Is this whole value a refusal of either role (see {@link REFUSAL})?
 * @param value a whole reply or a whole structured field, never a fragment of prose.
 */
export function isRefusal(value: string): boolean {
  return REFUSAL.test(value.trim());
}

// ---------------------------------------------------------------------------------------------
// Seeking agent replies
// ---------------------------------------------------------------------------------------------

/** Parsed reply of a seeking agent. */
export type SeekParse =
  | { kind: 'no_information' }
  | {
      kind: 'evidence';
      /**
       * Ids of the chunk's numbered sentences the reply cites (shared/llm/sentences.ts), in reply
       * order, distinct; not yet checked against the chunk's units. The evidence of the message is
       * built from them (shared/llm/agents.ts).
       */
      sentences: number[];
      /** The reply's note: what the cited sentences do not say verbatim (trimmed; may be empty). */
      note: string;
      /**
       * Free-form evidence, for a reply in the free form (`evidence`/`quotes`, or prose without
       * sentence ids); empty when the reply cites sentence ids.
       */
      evidence: string;
      /** Verbatim sentences the model quoted from the chunk in the free form (not yet located). */
      quotes: string[];
      /** Integer 0-100, or null when the reply has no score with a clear meaning (re-ask needed). */
      score: number | null;
      /** Set when the model's score was clamped or not a number (see {@link ScoreReading}). */
      scoreWarning?: string;
      /** True when the reply was JSON cut off before its end (fields salvaged). */
      truncated: boolean;
      /** Set when sentence ids were not read (not whole numbers of at least 1), naming them as written. */
      idWarning?: string;
    }
  /**
   * Nothing usable: an empty reply, JSON cut off before the evidence was complete, or a reply citing
   * only ids that are not sentence numbers (`idWarning` names them).
   */
  | { kind: 'empty'; truncated: boolean; idWarning?: string };

/** Options of {@link parseSeekReply}. */
export interface SeekParseOptions {
  /**
   * The chunk the seeking agent read. A plain-text line that looks like a score line but is copied
   * from the chunk (`Score: 100` in a match report) is evidence, never the model's score.
   */
  chunkText?: string;
}

/** True for an explicit boolean-ish true: true, "true", "yes", 1. */
function truthy(value: unknown): boolean {
  return value === true || value === 1 || (typeof value === 'string' && /^(true|yes)$/i.test(value.trim()));
}

function stringsOf(value: unknown): string[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  return items
    .filter((item): item is string => typeof item === 'string')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/** Leading labels of plain-text evidence ("Evidence:", "**Extracted information:**"). */
const EVIDENCE_LABEL = /^[\s*_#>]*(?:extracted\s+)?(?:evidence|information|relevant information)[\s*_]*[:：][\s*_]*/i;
/** A "Quotes:" label line of plain-text replies; the bullet lines under it are quotes. */
const QUOTES_LABEL = /^[\s*_#>-]*(?:quotes?|supporting quotes?)[\s*_]*[:：][\s*_]*(.*)$/i;

const normalizeSpace = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * Is this score-looking line copied from the chunk? Its text without leading markup, bullets and
 * quotation marks occurs in the chunk (spaces normalized).
 */
function copiedFromChunk(line: string, chunk: string | undefined): boolean {
  if (chunk === undefined) return false;
  const core = normalizeSpace(line.replace(/^[\s>*_#\x60~•-]*["“”'‘’]?/, '').replace(/["“”'‘’]?[\s*_\x60~]*$/, ''));
  return core.length > 0 && chunk.includes(core);
}

/**
 * Parse plain-text (non-JSON) seek replies: the model's score line anywhere, an optional "Evidence:"
 * label, an optional "Quotes:" section of bullet lines; everything else is the evidence. A score line
 * copied from the chunk is evidence, and never scores.
 */
function parsePlainSeek(text: string, chunk: string | undefined): SeekParse {
  const evidenceLines: string[] = [];
  const scoreLines: string[] = [];
  const quotes: string[] = [];
  const sentences: number[] = [];
  const dropped: string[] = [];
  const notes: string[] = [];
  let inQuotes = false;
  for (const line of text.split('\n')) {
    if ((SCORE_LINE_ONE.test(line) || FRACTION_LINE_ONE.test(line)) && !copiedFromChunk(line, chunk)) {
      scoreLines.push(line);
      inQuotes = false;
      continue;
    }
    const cited = SENTENCES_LINE.exec(line) ?? SENTENCES_MID_LINE.exec(line);
    if (cited && !copiedFromChunk(line, chunk)) {
      const reading = readIds(cited[1]);
      sentences.push(...reading.ids);
      dropped.push(...reading.dropped);
      // Words before a label in mid-line ("The answer is in Sentences: 2, 5") are the model's note.
      const before = line.slice(0, cited.index).trim();
      if (cited.index > 0 && before !== '') notes.push(before);
      inQuotes = false;
      continue;
    }
    const note = NOTE_LINE.exec(line);
    if (note && !copiedFromChunk(line, chunk)) {
      if (note[1].trim()) notes.push(note[1].trim());
      inQuotes = false;
      continue;
    }
    const label = QUOTES_LABEL.exec(line);
    if (label) {
      inQuotes = true;
      if (label[1].trim()) quotes.push(...stringsOf(stripQuoteMarks(label[1])));
      continue;
    }
    if (inQuotes && /^\s*(?:[-*•]|\d+[.)])\s+/.test(line)) {
      quotes.push(...stringsOf(stripQuoteMarks(line.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, ''))));
      continue;
    }
    if (line.trim() === '') inQuotes = false;
    evidenceLines.push(line);
  }
  // The model's own score lines first; else a score field or bare number outside the chunk's text.
  const reading = scoreLines.length > 0 ? readScore(scoreLines.join('\n')) : readScore(evidenceLines.filter((l) => !copiedFromChunk(l, chunk)).join('\n'));
  const ids = [...new Set(sentences)];
  const note = notes.join(' ');
  const idWarning = idWarningOf(dropped);
  if (ids.length > 0)
    return {
      kind: 'evidence',
      sentences: ids,
      note: isRefusal(note) ? '' : note,
      evidence: '',
      quotes,
      ...scoreFields(reading),
      truncated: false,
      ...(idWarning !== undefined && { idWarning }),
    };
  // A "Sentences:" line whose every item was unreadable cites nothing: not the rest as evidence.
  if (idWarning !== undefined) return { kind: 'empty', truncated: false, idWarning };
  const evidence = evidenceLines.join('\n').trim().replace(EVIDENCE_LABEL, '').trim();
  if (evidence === '' || (BARE_NUMBER.test(text.trim()) && reading.score !== null)) return { kind: 'empty', truncated: false };
  if (isRefusal(evidence)) return { kind: 'no_information' };
  return { kind: 'evidence', sentences: [], note: '', evidence, quotes, ...scoreFields(reading), truncated: false };
}

function scoreFields(reading: ScoreReading): { score: number | null; scoreWarning?: string } {
  return { score: reading.score, ...(reading.warning !== undefined && { scoreWarning: reading.warning }) };
}

/** Remove wrapping quotation marks: "…", “…”, '…'. */
function stripQuoteMarks(text: string): string {
  return text
    .trim()
    .replace(/^["“”'‘’]+/, '')
    .replace(/["“”'‘’]+$/, '')
    .trim();
}

/** Sentence ids a range ("2-4", "2 to 4") cites at most; a wider range is read as its two ends, with a warning. */
export const MAX_ID_RANGE = 8;

/** Sentence ids read from a reply, and what was written where an id was expected but is not one. */
export interface IdReading {
  /** Whole numbers >= 1, distinct, in reply order (ranges expanded). */
  ids: number[];
  /** Items dropped, as written ("0", "-1", "2.5", "1e3", "0x2", "9007199254740993"), and wide ranges read as their ends. */
  dropped: string[];
}

/**
 * Sentence ids in a JSON `sentences` value or a "Sentences:" line: integers, numeric strings ("3",
 * "[3]", "s3", "#3"), one string listing them ("2, 5", "2 and 5"), ranges ("2-4", "2–4", "2 to 4":
 * every id between, at most `MAX_ID_RANGE`), nested lists (flattened). Everything else that looks like
 * a number (zero, negative, fractional, exponent or hex forms, past the safe integers) is dropped and
 * reported in `dropped`, never read as another id. A pure function.
 */
export function readIds(value: unknown): IdReading {
  const ids: number[] = [];
  const dropped: string[] = [];
  const visit = (item: unknown, depth: number): void => {
    if (Array.isArray(item)) {
      if (depth < 4) for (const inner of item) visit(inner, depth + 1);
      else dropped.push(JSON.stringify(item));
    } else if (typeof item === 'number') {
      if (Number.isSafeInteger(item) && item >= 1) ids.push(item);
      else dropped.push(String(item));
    } else if (typeof item === 'string') readIdText(item, ids, dropped);
  };
  visit(value, 0);
  return { ids: [...new Set(ids)], dropped };
}

/** The ids of one string (see `readIds`): tokens between separators; words without digits are skipped. */
function readIdText(text: string, ids: number[], dropped: string[]): void {
  const ranged = text.replace(/(?<![\w.])(\d+)\s*(?:-|–|—|\.\.|to)\s*(\d+)(?![\w.])/gi, ' $1..$2 ');
  for (const raw of ranged.split(/[\s,;、，；()[\]{}"']+|\band\b|和|及/i)) {
    const token = raw.replace(/^(?:s|#|id|sentence)(?=\d)/i, '');
    if (token === '' || !/\d/.test(token)) continue;
    const range = /^(\d+)\.\.(\d+)$/.exec(token);
    if (range) {
      const [from, to] = [Number(range[1]), Number(range[2])];
      if (from >= 1 && to >= from && to - from < MAX_ID_RANGE) for (let id = from; id <= to; id++) ids.push(id);
      else {
        dropped.push(`${range[1]}-${range[2]}`);
        for (const end of [from, to]) if (Number.isSafeInteger(end) && end >= 1) ids.push(end);
      }
    } else if (/^\d+$/.test(token) && Number.isSafeInteger(Number(token)) && Number(token) >= 1) ids.push(Number(token));
    else dropped.push(token);
  }
}

/** The warning of ids `readIds` dropped, or undefined when none was. */
function idWarningOf(dropped: readonly string[]): string | undefined {
  if (dropped.length === 0) return undefined;
  return `seeking agent wrote ${dropped.length === 1 ? 'an item that is not a sentence number' : 'items that are not sentence numbers'}, not read as ids: ${dropped
    .slice(0, 8)
    .map((d) => JSON.stringify(cutAt(d, 24)))
    .join(', ')}${dropped.length > 8 ? ` and ${dropped.length - 8} more` : ''}`;
}

/**
 * A "Sentences: 2, 5" line of a plain-text reply (also "Sentence ids:", "Selected sentences:",
 * "句子："); group 1 is the rest of the line.
 */
const SENTENCES_LINE = /^[\s*_#>-]*(?:(?:selected|cited|relevant|supporting)\s+)?(?:sentences?|sentence\s+(?:ids?|numbers?)|句子|句)[\s*_]*[:：][\s*_]*(.*)$/i;
/**
 * A sentence-ids label in mid-line ("The answer is in Sentences: 2, 5"), followed by ids only (digits,
 * separators, ranges, "s"/"#" prefixes); group 1 is the ids.
 */
const SENTENCES_MID_LINE =
  /\b(?:sentences?|sentence\s+(?:ids?|numbers?))[\s*_]*[:：][\s*_]*((?:[\s,;[\]()#s.\-–—]|\d|\band\b|\bto\b)*\d(?:[\s,;[\]()#s.\-–—]|\d|\band\b|\bto\b)*)$/i;
/** A "Note: …" line of a plain-text reply. */
const NOTE_LINE = /^[\s*_#>-]*(?:note|备注|说明)[\s*_]*[:：][\s*_]*(.*)$/i;

/**
 * Parse a seeking agent's reply, leniently. The format asked (prompts.ts) is
 * `{"sentences": [ids], "note": "...", "score": N}`; also read: the free form
 * `{"evidence", "quotes", "score"}` (a provider that ignores the format), `{"no_information": true}`,
 * JSON in prose or a ```json fence, truncated JSON (complete fields only), a refusal
 * ({@link isRefusal}: "NO INFORMATION", the official ExtAgents code's marker, and the rest of the
 * shared vocabulary) as the whole reply or the whole evidence field, and plain text with a
 * "Sentences: 2, 5" line, a "Note:" line and a score line (else the text is free-form evidence).
 * "No information" is a reply citing no sentence and giving no free-form evidence (a note alone is
 * not evidence). The score is read from the JSON field, else from the prose around the JSON (never
 * from the evidence); out-of-range scores are clamped and non-numbers give none, with `scoreWarning`.
 * A pure function of its arguments.
 * @param text the raw reply; @param options.chunkText the chunk read (see {@link SeekParseOptions}).
 * @returns `no_information`, `evidence` (score null = re-ask needed) or `empty` (nothing usable).
 */
export function parseSeekReply(text: string, options: SeekParseOptions = {}): SeekParse {
  const trimmed = text.trim();
  if (trimmed === '') return { kind: 'empty', truncated: false };
  if (isRefusal(trimmed)) return { kind: 'no_information' };

  const json = extractJsonObject(trimmed);
  if (json && !json.complete && Object.keys(json.value).length === 0) return { kind: 'empty', truncated: true };
  const known = json && ['sentences', 'note', 'evidence', 'quotes', 'score', 'no_information'].some((key) => key in json.value);
  if (!json || !known) return parsePlainSeek(trimmed, options.chunkText);

  const { value, complete, rest } = json;
  if (truthy(value.no_information)) return { kind: 'no_information' };
  const { ids: sentences, dropped } = readIds(value.sentences);
  const idWarning = idWarningOf(dropped);
  const note = stringsOf(value.note).join(' ');
  const evidence = stringsOf(value.evidence).join('\n');
  // Ids that are all unreadable are a reply to ask again, not "nothing here".
  if (sentences.length === 0 && idWarning !== undefined && evidence === '') return { kind: 'empty', truncated: !complete, idWarning };
  if (sentences.length === 0 && evidence === '') {
    // Complete JSON citing nothing says "nothing here"; a cut-off one says nothing.
    return complete || 'score' in value ? { kind: 'no_information' } : { kind: 'empty', truncated: true };
  }
  if (sentences.length === 0 && isRefusal(evidence)) return { kind: 'no_information' };
  const reading = scoreFromField(value.score) ?? (rest ? readScore(rest) : { score: null });
  return {
    kind: 'evidence',
    sentences,
    note: isRefusal(note) ? '' : note,
    evidence: isRefusal(evidence) ? '' : evidence,
    quotes: stringsOf(value.quotes).map(stripQuoteMarks).filter(Boolean),
    ...scoreFields(reading),
    truncated: !complete,
    ...(idWarning !== undefined && { idWarning }),
  };
}

/**
 * The first `max` characters of `text` (UTF-16 code units), never splitting a surrogate pair, with
 * an ellipsis "…" in place of the last kept character when anything was cut. For model-written text
 * that a reply bound should have kept short (an answer, a note): stored and shown bounded.
 * @param max at least 1.
 */
export function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, codePointCut(text, max - 1)).trimEnd() + '…';
}

// ---------------------------------------------------------------------------------------------
// Reasoning agent replies
// ---------------------------------------------------------------------------------------------

/** Parsed reply of the reasoning agent. */
export type ReasonParse =
  | {
      kind: 'answer';
      /** False only for the structured refusal (`answerable: false`) or the exact marker NO ANSWER. */
      answerable: boolean;
      /** The answer; exactly "NO ANSWER" when not answerable. */
      answer: string;
      /** Message ids the reply cites, in order, deduplicated (not yet filtered to the ids given). */
      cited: string[];
      /** True when the reply was JSON cut off before its end (fields salvaged). */
      truncated: boolean;
    }
  /** Nothing usable: an empty reply, or JSON cut off before the answer was complete. */
  | { kind: 'empty'; truncated: boolean };

/** Message ids as the prompts label them: `r<round>-c<chunk>`. */
const MESSAGE_ID = /\br\d+-c\d+\b/g;

function idsIn(text: string): string[] {
  return [...new Set(text.match(MESSAGE_ID) ?? [])];
}

function refusal(truncated: boolean): ReasonParse {
  return { kind: 'answer', answerable: false, answer: NO_ANSWER, cited: [], truncated };
}

/** `answerable` as given: booleans, "true"/"false", "yes"/"no"; undefined when absent or unclear. */
function answerableOf(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    if (/^(true|yes)$/i.test(value.trim())) return true;
    if (/^(false|no)$/i.test(value.trim())) return false;
  }
  return undefined;
}

/** Leading answer labels of plain-text replies ("Answer:", "**Final answer:**"). */
const ANSWER_LABEL = /^[\s*_#>]*(?:final\s+)?answer[\s*_]*[:：][\s*_]*(.*)$/im;
/** A citations line of plain-text replies ("Cited: r1-c2, r1-c5"). */
const CITED_LINE = /^[\s*_#>-]*(?:cited|citations?|sources?|references?)[\s*_]*[:：].*$/gim;

/** Remove `[r1-c12]` and `(r1-c12)` citation tags from an answer text. */
function withoutIdTags(text: string): string {
  return text
    .replace(/\s*[[(](?:\s*r\d+-c\d+\s*[,;]?)+[\])]/g, '')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/**
 * Parse the reasoning agent's reply (format asked in prompts.ts:
 * `{"answer": "...", "cited": [...], "answerable": bool}`), leniently: JSON in prose or a fence,
 * truncated JSON (complete fields only), or plain text ("Answer: …", citations as `[r1-c12]`).
 * Refusal is ONLY the structured `answerable: false`, or a whole reply or whole answer field in the
 * refusal vocabulary the seeking agent shares ({@link isRefusal}: NO ANSWER, "none", "n/a", …):
 * never a substring match. A pure function of its input.
 * @param text the raw reply.
 * @returns the answer or refusal, or `empty` when nothing usable was found.
 */
export function parseReasonReply(text: string): ReasonParse {
  const trimmed = text.trim();
  if (trimmed === '') return { kind: 'empty', truncated: false };
  if (isRefusal(trimmed)) return refusal(false);

  const json = extractJsonObject(trimmed);
  if (json && !json.complete && Object.keys(json.value).length === 0) return { kind: 'empty', truncated: true };
  if (json && ['answerable', 'answer', 'cited'].some((key) => key in json.value)) {
    const { value, complete } = json;
    const answerable = answerableOf(value.answerable);
    const rawAnswer = value.answer;
    const answer = typeof rawAnswer === 'string' ? rawAnswer.trim() : typeof rawAnswer === 'number' ? String(rawAnswer) : '';
    if (answerable === false || isRefusal(answer)) return refusal(!complete);
    if (answer === '') return { kind: 'empty', truncated: !complete };
    const cited = [...new Set([...stringsOf(value.cited).flatMap((c) => idsIn(c)), ...idsIn(answer)])];
    return { kind: 'answer', answerable: true, answer: withoutIdTags(answer) || answer, cited, truncated: !complete };
  }

  // Plain text: the "Answer:" line if any, else the whole reply without citation lines.
  const cited = idsIn(trimmed);
  const labelled = ANSWER_LABEL.exec(trimmed);
  const afterLabel = labelled ? trimmed.slice(labelled.index + labelled[0].length - labelled[1].length) : trimmed;
  const answer = withoutIdTags(afterLabel.replace(CITED_LINE, '').trim());
  if (answer === '') return { kind: 'empty', truncated: false };
  if (isRefusal(answer)) return refusal(false);
  return { kind: 'answer', answerable: true, answer, cited, truncated: false };
}

/**
 * Words of a question that offer its answer as a choice among named candidates: "A or B", "either",
 * "whether", "which of A and B", "between", "both", and Chinese 还是 / 或者 / 或是. The answer to such
 * a question is one of its own words, so `restatesQuestion` never counts it.
 */
export const OFFERS_CHOICE = /\b(?:or|either|whether|both|between|which\s+of|which\s+one)\b|还是|或者|或是/i;
/** A run of CJK ideographs, kana or hangul (text compared without word boundaries). */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * True when an answer adds nothing to its question: every content term of the answer (stemmed,
 * stop words dropped: shared/extractive/text.ts `contentTerms`) is a term of the question (for
 * CJK text: the answer, spaces and punctuation removed, stands in the question as it is), and the
 * question offers no choice (`OFFERS_CHOICE`). A small reasoning agent given only a multi-hop
 * question's first hop answers with the entity the question already names ("VIVA Media" for "VIVA
 * Media AG changed its name in 2004. What does their new acronym stand for?"); that is the
 * evidence falling short, so knowledge-accumulating reasoning counts it as a refusal and reads more
 * messages (paper 2B; docs/EVAL.md, "The curve"). An answer with no content term ("yes", "no", a
 * stop word) is never a restatement. A pure function.
 * @param answer the parsed answer (not a refusal); @param question the run's question.
 */
export function restatesQuestion(answer: string, question: string): boolean {
  if (OFFERS_CHOICE.test(question)) return false;
  if (CJK.test(answer)) {
    const fold = (t: string): string => (t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join('');
    const folded = fold(answer);
    return folded !== '' && fold(question).includes(folded);
  }
  const terms = contentTerms(answer);
  if (terms.length === 0) return false;
  const asked = new Set(contentTerms(question));
  return terms.every((t) => asked.has(t));
}

/** A reply that is only an answer's preamble: "The answer is", "Answer:", "The final answer is:". */
const PREAMBLE_ONLY = /^(?:the\s+)?(?:final\s+)?answer(?:\s+is)?(?:\s+that)?[\s:：.,…-]*$/i;

/** Letters and digits folded for comparing an answer with its question (case, spaces, punctuation ignored). */
export function foldedWords(text: string): string {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

/**
 * Why an answer of the reasoning agent is not an answer, or undefined when it may be one. A small
 * model fills the answer field with text that answers nothing; each case below is a shape, not a
 * content judgment, so it holds for any question and language:
 * - `preamble`: only "The answer is" (or "Answer:"), nothing after it;
 * - `question`: the question itself, restated (case, spaces and punctuation ignored);
 * - `loop`: a phrase repeated until the output ran out ("No, no, no, …", "the answer is that the
 *   answer is that …"): at least 9 words, and at most a third of its 3-word sequences distinct;
 * - `markup`: nothing but markup tags and punctuation (`<messages>`: the prompt's own delimiter).
 * (An answer that repeats the prompt's own instructions is found by `echoesPrompt` in prompts.ts.)
 * A pure function.
 * @param answer the parsed answer (not a refusal); @param question the run's question.
 */
export function junkAnswer(answer: string, question: string): 'preamble' | 'question' | 'loop' | 'markup' | undefined {
  const trimmed = answer.trim();
  if (PREAMBLE_ONLY.test(trimmed)) return 'preamble';
  if (/<[^<>]*>/.test(trimmed) && foldedWords(trimmed.replace(/<[^<>]*>/g, ' ')) === '') return 'markup';
  const words = foldedWords(trimmed);
  if (words !== '' && words === foldedWords(question)) return 'question';
  const list = words.split(' ');
  if (list.length >= 9) {
    const shingles = list.slice(0, -2).map((w, i) => `${w} ${list[i + 1]} ${list[i + 2]}`);
    if (new Set(shingles).size * 3 <= shingles.length) return 'loop';
  }
  return undefined;
}
