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
        if (isRecord(value) && Object.keys(value).length > 0) return { value, complete: false, rest };
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

/** Largest number read as an (out of range, clamped) score; larger numbers have no clear meaning. */
const MAX_CLAMPED_SCORE_INPUT = 999;

/**
 * Clamp a number to an integer relevance score 0-100.
 * Values in (0, 1) are read as fractions of 1 (0.85 -> 85): the model used a 0-1 scale.
 * Values above 100 and up to 999 are clamped to 100 (`150` -> 100), negatives to 0.
 * @returns the score, or null for NaN, infinities and values above 999 (meaning unclear).
 */
export function clampScore(value: number): number | null {
  if (!Number.isFinite(value) || value > MAX_CLAMPED_SCORE_INPUT) return null;
  const scaled = value > 0 && value < 1 ? value * 100 : value;
  return Math.min(100, Math.max(0, Math.round(scaled)));
}

/** Read `n` or `n/d` (d > 0, e.g. 8/10 -> 80, 75/100 -> 75) as a score. */
function scoreOf(numerator: string, denominator: string | undefined): number | null {
  const n = Number(numerator);
  if (denominator === undefined) return clampScore(n);
  const d = Number(denominator);
  if (!(d > 0) || d > 100) return null;
  return clampScore(d === 100 ? n : (n / d) * 100);
}

const NUMBER = String.raw`(-?\d+(?:\.\d+)?)`;
const MARKUP = String.raw`[\s*_\x60~]*`;
/**
 * A labelled score line: `Score: 70`, `**Score:** 90`, `**Score**: 90`, `Score：80` (full-width
 * colon), `Relevance score (0-100): 85`, `Rating = 8/10`, `分数：80`. The label must start the line
 * (after markdown), so a sentence such as "the final score was 3-1" inside evidence never matches.
 */
const SCORE_LINE = new RegExp(
  String.raw`^[\s>*_#\x60~-]*(?:(?:relevance|usefulness)\s+)?(?:score|relevance|usefulness|分数|评分|得分|相关性)` +
    `${MARKUP}(?:\\([^)\\n]*\\))?${MARKUP}[:：=]${MARKUP}${NUMBER}(?:\\s*/\\s*(\\d+(?:\\.\\d+)?))?`,
  'gim',
);
/** `"score": 80` or `'score': "80"` in JSON-like text that did not parse. */
const SCORE_FIELD = new RegExp(String.raw`["']score["']\s*:\s*["']?${NUMBER}(?:\s*/\s*(\d+(?:\.\d+)?))?`, 'gi');
/** A line that is only a fraction, e.g. `75/100` or `**8/10**`. */
const FRACTION_LINE = new RegExp(`^${MARKUP}${NUMBER}\\s*/\\s*(\\d+(?:\\.\\d+)?)${MARKUP}[.%]?${MARKUP}$`, 'gm');
/** A whole reply that is only a number, e.g. `150` or `85.` or `**90**`. */
const BARE_NUMBER = new RegExp(`^${MARKUP}${NUMBER}${MARKUP}%?[.]?${MARKUP}$`);

function lastMatchScore(text: string, pattern: RegExp): number | null {
  let score: number | null = null;
  // A fresh copy: `matchAll` starts at the pattern's `lastIndex`, which a `.test()` of the shared
  // global pattern elsewhere may have left past 0; parsing must depend on its input only.
  for (const match of text.matchAll(new RegExp(pattern.source, pattern.flags))) {
    const value = scoreOf(match[1], match[2]);
    if (value !== null) score = value;
  }
  return score;
}

/**
 * Read a relevance score from free text, leniently. In order: the last labelled score line
 * (`**Score:** 90`, `Score：80`, `score: 70`, `Score: 8/10`), a `"score": N` field, the last line
 * that is only a fraction (`75/100`), a reply that is only a number (`150`). Clamped to 0-100.
 * @param text a reply or part of one.
 * @returns an integer 0-100, or null when no score has a clear meaning (the caller re-asks).
 */
export function parseScore(text: string): number | null {
  return (
    lastMatchScore(text, SCORE_LINE) ??
    lastMatchScore(text, SCORE_FIELD) ??
    lastMatchScore(text, FRACTION_LINE) ??
    (BARE_NUMBER.test(text.trim()) ? scoreOf(BARE_NUMBER.exec(text.trim())![1], undefined) : null)
  );
}

/** A JSON `score` field: a number, or a string such as "80", "80/100", "Score: 80". */
function scoreFromField(value: unknown): number | null {
  if (typeof value === 'number') return clampScore(value);
  if (typeof value !== 'string') return null;
  const parsed = parseScore(value);
  if (parsed !== null) return parsed;
  // "about 80" reads as 80; "8 out of 10" (two numbers) has no single clear value.
  const numbers = value.match(/-?\d+(?:\.\d+)?/g) ?? [];
  return numbers.length === 1 ? clampScore(Number(numbers[0])) : null;
}

// ---------------------------------------------------------------------------------------------
// Seeking agent replies
// ---------------------------------------------------------------------------------------------

/** Parsed reply of a seeking agent. */
export type SeekParse =
  | { kind: 'no_information' }
  | {
      kind: 'evidence';
      /** Extracted evidence, trimmed, non-empty. */
      evidence: string;
      /** Verbatim sentences the model quoted from the chunk (not yet located). */
      quotes: string[];
      /** Integer 0-100, or null when the reply has no score with a clear meaning (re-ask needed). */
      score: number | null;
      /** True when the reply was JSON cut off before its end (fields salvaged). */
      truncated: boolean;
    }
  /** Nothing usable: an empty reply, or JSON cut off before the evidence was complete. */
  | { kind: 'empty'; truncated: boolean };

/** "NO INFORMATION", "No relevant information.", "none" and similar statements of nothing found. */
const NO_INFORMATION_TEXT =
  /^[\s*_"'\x60]*(?:(?:there\s+is|there's|(?:the|this|my)\s+chunk\s+(?:contains|has))\s+)?(?:no(?:\s+(?:new|relevant|useful))*[\s_-]*information(?:\s+(?:found|available|relevant to the (?:query|question)))?(?:\s+(?:in|from)\s+(?:the|this|my)\s+chunk)?|none|n\/a)[\s*_"'\x60.!]*$/i;

/** True for an explicit boolean-ish true: true, "true", "yes", 1. */
function truthy(value: unknown): boolean {
  return value === true || value === 1 || (typeof value === 'string' && /^(true|yes)$/i.test(value.trim()));
}

function stringsOf(value: unknown): string[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  return items.filter((item): item is string => typeof item === 'string').map((item) => item.trim()).filter((item) => item.length > 0);
}

/** Leading labels of plain-text evidence ("Evidence:", "**Extracted information:**"). */
const EVIDENCE_LABEL = /^[\s*_#>]*(?:extracted\s+)?(?:evidence|information|relevant information)[\s*_]*[:：][\s*_]*/i;
/** A "Quotes:" label line of plain-text replies; the bullet lines under it are quotes. */
const QUOTES_LABEL = /^[\s*_#>-]*(?:quotes?|supporting quotes?)[\s*_]*[:：][\s*_]*(.*)$/i;

/**
 * Parse plain-text (non-JSON) seek replies: a score line anywhere, optional "Evidence:" label, an
 * optional "Quotes:" section of bullet lines; everything else is the evidence.
 */
function parsePlainSeek(text: string): SeekParse {
  const score = parseScore(text);
  const evidenceLines: string[] = [];
  const quotes: string[] = [];
  let inQuotes = false;
  const scoreLine = new RegExp(SCORE_LINE.source, SCORE_LINE.flags.replace('g', ''));
  const fractionLine = new RegExp(FRACTION_LINE.source, FRACTION_LINE.flags.replace('g', ''));
  for (const line of text.split('\n')) {
    if (scoreLine.test(line) || fractionLine.test(line)) {
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
  const evidence = evidenceLines.join('\n').trim().replace(EVIDENCE_LABEL, '').trim();
  if (evidence === '' || (BARE_NUMBER.test(text.trim()) && score !== null)) return { kind: 'empty', truncated: false };
  if (NO_INFORMATION_TEXT.test(evidence)) return { kind: 'no_information' };
  return { kind: 'evidence', evidence, quotes, score, truncated: false };
}

/** Remove wrapping quotation marks: "…", “…”, '…'. */
function stripQuoteMarks(text: string): string {
  return text.trim().replace(/^["“”'‘’]+/, '').replace(/["“”'‘’]+$/, '').trim();
}

/**
 * Parse a seeking agent's reply (format asked in prompts.ts:
 * `{"evidence", "quotes", "score"}` or `{"no_information": true}`), leniently:
 * JSON in prose or a ```json fence; truncated JSON (complete fields only); the exact marker
 * "NO INFORMATION" (the official ExtAgents code's); plain text with a score line.
 * The score is read from the JSON field, else from the prose around the JSON.
 * @param text the raw reply.
 * @returns `no_information`, `evidence` (score null = re-ask needed) or `empty` (nothing usable).
 */
export function parseSeekReply(text: string): SeekParse {
  const trimmed = text.trim();
  if (trimmed === '') return { kind: 'empty', truncated: false };
  if (NO_INFORMATION_TEXT.test(trimmed)) return { kind: 'no_information' };

  const json = extractJsonObject(trimmed);
  if (json && !json.complete && Object.keys(json.value).length === 0) return { kind: 'empty', truncated: true };
  const known = json && ['evidence', 'quotes', 'score', 'no_information'].some((key) => key in json.value);
  if (!json || !known) return parsePlainSeek(trimmed);

  const { value, complete, rest } = json;
  if (truthy(value.no_information)) return { kind: 'no_information' };
  const evidence = stringsOf(value.evidence).join('\n');
  if (evidence === '') {
    // Complete JSON with empty or missing evidence says "nothing here"; a cut-off one says nothing.
    return complete ? { kind: 'no_information' } : { kind: 'empty', truncated: true };
  }
  if (NO_INFORMATION_TEXT.test(evidence)) return { kind: 'no_information' };
  const score = scoreFromField(value.score) ?? (rest ? parseScore(rest) : null);
  return { kind: 'evidence', evidence, quotes: stringsOf(value.quotes).map(stripQuoteMarks).filter(Boolean), score, truncated: !complete };
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

/**
 * The exact refusal marker on its own: `NO ANSWER`, tolerant only of case, markdown emphasis,
 * quotation marks and a final period. "Casino info" or "Reno information desk" are answers.
 */
const NO_ANSWER_MARKER = /^[\s*_"'\x60]*no[\s_]answer[\s*_"'\x60.]*$/i;

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
 * `{"answerable": bool, "answer": "...", "cited": [...]}`), leniently: JSON in prose or a fence,
 * truncated JSON (complete fields only), or plain text ("Answer: …", citations as `[r1-c12]`).
 * Refusal is ONLY the structured `answerable: false`, an answer equal to the marker, or the exact
 * marker NO ANSWER on its own: never a substring match.
 * @param text the raw reply.
 * @returns the answer or refusal, or `empty` when nothing usable was found.
 */
export function parseReasonReply(text: string): ReasonParse {
  const trimmed = text.trim();
  if (trimmed === '') return { kind: 'empty', truncated: false };
  if (NO_ANSWER_MARKER.test(trimmed)) return refusal(false);

  const json = extractJsonObject(trimmed);
  if (json && !json.complete && Object.keys(json.value).length === 0) return { kind: 'empty', truncated: true };
  if (json && ['answerable', 'answer', 'cited'].some((key) => key in json.value)) {
    const { value, complete } = json;
    const answerable = answerableOf(value.answerable);
    const rawAnswer = value.answer;
    const answer = typeof rawAnswer === 'string' ? rawAnswer.trim() : typeof rawAnswer === 'number' ? String(rawAnswer) : '';
    if (answerable === false || NO_ANSWER_MARKER.test(answer)) return refusal(!complete);
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
  if (NO_ANSWER_MARKER.test(answer)) return refusal(false);
  return { kind: 'answer', answerable: true, answer, cited, truncated: false };
}
