/**
 * `LlmAgents`: the seeking agent and the reasoning agent of ExtAgents (../shared/PAPER.md, section
 * 2A) over two `ChatModel`s, one per role (heterogeneous deployment, paper section 4: e.g. a small
 * seeker model and a stronger reasoner model). Prompts are in prompts.ts, lenient parsing in parse.ts.
 *
 * Every loop here is bounded; per seek at most 3 model calls are made:
 * - an empty reply, or one cut off at the output-token limit (`stopReason` "max_tokens") before its
 *   JSON was complete, is retried ONCE (with a brevity reminder when it was cut off); if the retry
 *   is unusable too, the chunk yields no message (evidence null) and a warning;
 * - a reply with evidence but no relevance score with a clear meaning is followed by at most
 *   `MAX_SCORE_REASKS` (= 1) re-ask for the score alone; if that fails too the message is kept with
 *   `FALLBACK_SCORE` (50) and a warning.
 * The reasoning agent makes at most 2 calls: one retry of an empty or cut-off reply, or of an answer
 * that is not an answer (only "The answer is", the question restated, a phrase in a loop, the
 * prompt's own instructions: `junkAnswer`, `echoesPrompt`), with a reminder of what went wrong; an
 * unusable or junk retry counts as a refusal with a warning.
 *
 * Errors of the chat models (ModelThrottledError, ContextOverflowError, …) propagate unchanged:
 * Step Functions retries the transient ones by name, and the caller handles the others.
 */
import {
  CONTENT_FILTERED,
  type AgentModel,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type ReasonRequest,
  type ReasonResult,
  type SeekRequest,
  type SeekResult,
  type CheckRequest,
  type CheckResult,
  type FollowUpRequest,
  type FollowUpResult,
} from '../ports';
import { NO_ANSWER, type Message, type RoleUsage } from '../types';
import { lexicalPrior } from '../extractive/prior';
import {
  cutAt,
  foldedWords,
  isRefusal,
  junkAnswer,
  parseReasonReply,
  parseSeekReply,
  readScore,
  restatesQuestion,
  type ReasonParse,
  type SeekParse,
} from './parse';
import {
  brevityReminder,
  buildCheckPrompt,
  buildFollowUpPrompt,
  buildProseReasonPrompt,
  buildProseSeekPrompt,
  buildReasonPrompt,
  buildSeekPrompt,
  echoesPrompt,
  junkDescription,
  junkReminder,
  type JunkReason,
  type ReasonerReply,
  type SeekerReply,
  SCORE_REASK_PROMPT,
  unescapeUntrusted,
} from './prompts';
import {
  BUDGET_CHARS_PER_TOKEN,
  MAX_ANSWER_CHARS,
  MAX_CITED_SENTENCES,
  MAX_NOTE_CHARS,
  outputTokenBudget,
  reasonReplySchema,
  SCORE_REPLY,
  SEEK_REPLY,
  seekReplySchema,
} from './schemas';
import { splitSentences } from '../extractive/text';
import { citedText, MAX_UNIT_CHARS, numberedUnits, sentenceUnits, type SentenceUnit } from './sentences';

/** Output-token limits per call, in tokens of the model's tokenizer. */
export interface MaxOutputTokens {
  /** Seeking agent reply (sentence numbers + note + score). */
  seek: number;
  /** Reasoning agent reply (short answer + cited ids). */
  reason: number;
}

/**
 * Default output-token limits, derived from the reply schemas' bounds (shared/llm/schemas.ts
 * `outputTokenBudget`): a reply that follows its schema always fits, so a cut-off reply means a
 * model that ran on (counted as a warning), and a runaway costs at most this many tokens.
 * The reasoning agent's limit is that of a reply citing `MAX_CITED` ids of the longest form.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS: MaxOutputTokens = {
  seek: outputTokenBudget(SEEK_REPLY),
  reason: outputTokenBudget(reasonReplySchema([])),
};

/** Output-token limit of the score re-ask (the reply is `{"score": N}`). */
export const SCORE_REASK_MAX_TOKENS = outputTokenBudget(SCORE_REPLY);

/** Re-asks for a missing relevance score per seek (bounded: never a loop). */
export const MAX_SCORE_REASKS = 1;

/**
 * Relevance score kept when the seeking agent gave evidence but no readable score even after the
 * re-ask: the middle of the scale, so the message neither outranks scored evidence of high
 * relevance nor sinks below clearly irrelevant evidence.
 */
export const FALLBACK_SCORE = 50;

/** Most units cited through a note copied from the chunk, beyond the cited ids (see `LlmAgents.seek`). */
export const MAX_NOTE_UNITS = 2;

/**
 * Most tokens of a message's evidence built from cited sentences: `MAX_CITED_SENTENCES` +
 * `MAX_NOTE_UNITS` units of at
 * most `MAX_UNIT_CHARS` characters, the separators and a note of `MAX_NOTE_CHARS`, at the output
 * budgets' 2 characters a token (`BUDGET_CHARS_PER_TOKEN`, a low ratio). Budgets of the reasoning
 * and synchronization prompts (the cost estimate) count a message at most this (or the seeking
 * agent's output limit, for a free-form reply).
 */
export const MAX_CITED_EVIDENCE_TOKENS = Math.ceil(
  ((MAX_CITED_SENTENCES + MAX_NOTE_UNITS) * (MAX_UNIT_CHARS + 3) + 7 + MAX_NOTE_CHARS) / BUDGET_CHARS_PER_TOKEN,
);

/** Shortest quote (characters, after trimming) that is located in the chunk; shorter ones match by chance. */
export const MIN_QUOTE_CHARS = 8;

/** Construction options of `LlmAgents`. */
export interface LlmAgentsOptions {
  /** Chat model of the seeking agents. */
  seeker: ChatModel;
  /** Chat model of the reasoning agent (may be the same object as `seeker`). */
  reasoner: ChatModel;
  /** Output-token limits (tokens); defaults `DEFAULT_MAX_OUTPUT_TOKENS`. */
  maxOutputTokens?: Partial<MaxOutputTokens>;
  /** Sampling temperature of every call; default 0 (the most deterministic the model allows). */
  temperature?: number;
  /**
   * How the reasoning agent replies (shared/llm/prompts.ts `REASONER_REPLIES`): `json` (default) or
   * `prose` (the answer alone, cited messages found by `citedByOverlap`).
   */
  reasonerReply?: ReasonerReply;
  /**
   * How the seeking agent replies (shared/llm/prompts.ts `SEEKER_REPLIES`): `json` (default: cited
   * sentence ids, a note and a relevance level) or `prose` (the words that answer, located in the
   * chunk: `LlmAgents.seek`).
   */
  seekerReply?: SeekerReply;
  /**
   * A prose seek also cites the lead sentence of each cited sentence's paragraph (its first unit: the
   * title line and the sentence that names the subject, `paragraphLeads`), so that a quote such as
   * "She was born in Dundee." reads alone. Default false (docs/EVAL.md, "Evidence readable alone").
   */
  proseLeads?: boolean;
}

/**
 * The lead unit of each cited unit's paragraph, when not cited already: the first unit after the last
 * blank line (or the text's start) before it, the sentence that names a paragraph's subject (a title
 * line joins it: `sentenceUnits`). A unit that starts its paragraph is its own lead.
 * @returns unit ids, ascending, none of them in `ids`.
 */
export function paragraphLeads(text: string, units: readonly SentenceUnit[], ids: readonly number[]): number[] {
  const leads = new Set<number>();
  for (const id of ids) {
    const unit = units[id - 1];
    if (unit === undefined) continue;
    let paragraphStart = 0;
    for (const blank of text.slice(0, unit.start).matchAll(/\n[^\S\n]*\n/g)) paragraphStart = blank.index + blank[0].length;
    const lead = units.find((u) => u.end > paragraphStart);
    if (lead !== undefined && !ids.includes(lead.id)) leads.add(lead.id);
  }
  return [...leads].sort((a, b) => a - b);
}

/** Output-token limit of the follow-up question (one short question). */
export const FOLLOW_UP_MAX_TOKENS = 48;

/** Output-token limit of the sufficiency check's reply (yes or no). */
export const CHECK_MAX_TOKENS = 4;

/** Most characters of a follow-up question kept (a longer reply is cut at a word). */
export const MAX_FOLLOW_UP_CHARS = 200;

/** Output-token limit of a prose seek (a word or a short phrase; a reply that runs on is cut to its first line). */
export const PROSE_SEEK_MAX_TOKENS = 48;

/**
 * Relevance scores of a prose seek: the answer's words found verbatim in one or more sentences of the
 * chunk (`located`), or only by word overlap (`overlap`). The pool's `hybrid` ranking averages them
 * with the lexical prior of the cited sentences (shared/ranking.ts), which then orders the candidates.
 * `question`: the answer is not in the chunk (a yes or no counts as `overlap`), so the sentence that
 * shares most of the question's words is cited instead (`unitsAboutQuestion`).
 */
export const PROSE_SEEK_SCORES = { located: 100, overlap: 50, question: 25 } as const;

/** A yes-or-no answer (of a comparison question), which no sentence holds as words. */
const YES_NO = /^(yes|no)\b/i;

/**
 * The unit of a chunk sharing most of the question's weighted content words (`lexicalPrior` of the
 * question, at least 50), for a prose seek whose answer is not in the chunk (a yes or no).
 * @returns one unit id, or none.
 */
export function unitsAboutQuestion(text: string, units: readonly SentenceUnit[], question: string): number[] {
  const best = bestUnitFor(text, units, question);
  return best.prior >= 50 ? [best.id] : [];
}

/** The unit whose words cover most of `query`'s weighted content words (`lexicalPrior`), the first of equals; prior 0 when none shares any. */
function bestUnitFor(text: string, units: readonly SentenceUnit[], query: string): { id: number; prior: number } {
  let best = { id: 0, prior: 0 };
  for (const u of units) {
    const prior = lexicalPrior(query, text.slice(u.start, u.end));
    if (prior > best.prior) best = { id: u.id, prior };
  }
  return best;
}

/** Sentences a prose seek cites at most: those holding the answer, in chunk order. */
export const PROSE_SEEK_MAX_UNITS = 2;

/**
 * The units of a chunk that hold a prose seeker's answer: those that contain it (white space, case,
 * typographic quotes and dashes folded: `locateQuotes`), else the unit whose words overlap the
 * answer's content words most (`lexicalPrior` of the answer, at least half of them).
 * @returns unit ids in chunk order (at most `PROSE_SEEK_MAX_UNITS`) and how they were found; none
 *   when the answer is not in the chunk (an answer the model did not read there).
 */
export function unitsHoldingAnswer(
  text: string,
  units: readonly SentenceUnit[],
  answer: string,
): { ids: number[]; how: 'located' | 'overlap' | 'question' | 'none' } {
  const needle = answer.trim().replace(/[.。]$/, '');
  if (needle === '') return { ids: [], how: 'none' };
  // Short answers ("1986", "Laie") are searched as they are; locateQuotes needs MIN_QUOTE_CHARS.
  const spans: Array<{ start: number; end: number }> = [];
  if (needle.length < MIN_QUOTE_CHARS) {
    const lower = text.toLowerCase();
    const n = needle.toLowerCase();
    for (let at = lower.indexOf(n); at !== -1; at = lower.indexOf(n, at + 1)) spans.push({ start: at, end: at + n.length });
  } else spans.push(...locateQuotes(text, [needle]));
  const located = units.filter((u) => spans.some((s) => u.start < s.end && u.end > s.start)).map((u) => u.id);
  if (located.length > 0) return { ids: located.slice(0, PROSE_SEEK_MAX_UNITS), how: 'located' };
  const best = bestUnitFor(text, units, needle);
  return best.prior >= 50 ? { ids: [best.id], how: 'overlap' } : { ids: [], how: 'none' };
}

/**
 * The messages a prose answer relies on, found from its words: the messages whose evidence holds
 * any of the answer's content terms (`lexicalPrior` of the answer in the evidence, > 0), most
 * overlap first; when none does (a "yes", a number in other words), every message given, since the
 * answer was read from them all.
 * @param answer the reasoning agent's answer; @param messages the messages it was given, best first.
 * @returns message ids, each once.
 */
export function citedByOverlap(answer: string, messages: readonly Message[]): string[] {
  const overlap = messages.map((m) => ({ id: m.id, prior: lexicalPrior(answer, m.evidence) })).filter((m) => m.prior > 0);
  if (overlap.length === 0) return messages.map((m) => m.id);
  return overlap.sort((a, b) => b.prior - a.prior).map((m) => m.id);
}

/** Usage accumulator of one role over the calls made; `ms` is the wall time of the call. */
function addUsage(usage: RoleUsage, response: ChatResponse, ms: number): void {
  usage.calls += 1;
  usage.inputTokens += response.inputTokens;
  usage.outputTokens += response.outputTokens;
  // Waits for a throttling server are not model time: counted apart.
  const waited = Math.min(ms, response.throttleWaitMs ?? 0);
  usage.modelMs = (usage.modelMs ?? 0) + ms - waited;
  if (waited > 0) usage.throttleWaitMs = (usage.throttleWaitMs ?? 0) + waited;
  if (response.cacheReadInputTokens) usage.cacheReadInputTokens = (usage.cacheReadInputTokens ?? 0) + response.cacheReadInputTokens;
  if (response.cacheWriteInputTokens) usage.cacheWriteInputTokens = (usage.cacheWriteInputTokens ?? 0) + response.cacheWriteInputTokens;
}

/**
 * One timed model call: usage (with model time) added, the adapter's own warnings appended.
 * @throws the chat model's typed errors unchanged.
 */
async function timedCall(model: ChatModel, request: ChatRequest, usage: RoleUsage, warnings: string[]): Promise<ChatResponse> {
  const started = performance.now();
  const response = await model.complete(request);
  addUsage(usage, response, performance.now() - started);
  if (response.warnings) warnings.push(...response.warnings);
  return response;
}

/**
 * The warning of a reply the provider's content filter withheld (`CONTENT_FILTERED`), or undefined for
 * any other reply. Its text is the filter's canned message: never an answer, never evidence.
 */
function filteredWarning(response: ChatResponse, who: string, outcome: string): string | undefined {
  if (response.stopReason !== CONTENT_FILTERED) return undefined;
  return `the provider's content filter (${response.filteredBy ?? CONTENT_FILTERED}) withheld the ${who}'s reply; ${outcome}`;
}

/** True when the reply stopped at the output-token limit. */
function cutOff(response: ChatResponse): boolean {
  return response.stopReason === 'max_tokens';
}

/**
 * A seek reply is unusable when it is empty, has nothing parseable, or was cut off at the
 * output-token limit while its content was incomplete (truncated JSON, or plain text, whose end
 * cannot be told). A complete JSON object that happens to end at the limit is usable.
 */
function seekUnusable(parsed: SeekParse, response: ChatResponse): boolean {
  if (parsed.kind === 'empty') return true;
  if (!cutOff(response)) return false;
  if (parsed.kind === 'no_information') return false;
  return parsed.truncated || !response.text.includes('}');
}

/** The first non-empty line of a reply, trimmed ('' when there is none). */
function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((line) => line.trim())
      .find((line) => line !== '') ?? ''
  );
}

/** Same rule for the reasoning agent. */
function reasonUnusable(parsed: ReasonParse, response: ChatResponse, prose = false): boolean {
  if (parsed.kind === 'empty') return true;
  // A prose reply has no end to wait for: one cut off at the limit is an answer (cut to MAX_ANSWER_CHARS).
  if (prose) return false;
  if (!cutOff(response)) return false;
  return parsed.truncated || !response.text.includes('}');
}

/**
 * Fold a character for tolerant quote matching: lower case (when that keeps one UTF-16 code unit),
 * typographic quotes and dashes to ASCII. One code unit in, one out, so offsets map back 1:1.
 */
function foldChar(ch: string): string {
  if (/[‘’‚‛′]/.test(ch)) return "'";
  if (/[“”„‟″]/.test(ch)) return '"';
  if (/[‐‑‒–—―−]/.test(ch)) return '-';
  const lower = ch.toLowerCase();
  return lower.length === 1 ? lower : ch;
}

/**
 * Whitespace/case-normalised view of a text: runs of whitespace become one space, characters are
 * folded by `foldChar`. `origin[i]` is the offset in the original text of normalised character i.
 */
function normalise(text: string): { norm: string; origin: number[] } {
  let norm = '';
  const origin: number[] = [];
  let inSpace = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (/\s/.test(ch)) {
      if (!inSpace) {
        norm += ' ';
        origin.push(i);
      }
      inSpace = true;
      continue;
    }
    inSpace = false;
    norm += foldChar(ch);
    origin.push(i);
  }
  return { norm, origin };
}

/** Normalise a quote the same way, trimmed (so its first and last characters are not whitespace). */
function normaliseQuote(quote: string): string {
  return normalise(quote.trim()).norm.trim();
}

/**
 * Locate the seeking agent's quotes in the chunk text: exact match first, then a whitespace- and
 * case-insensitive match (typographic quotes and dashes folded). A quote elided with "..." or "…"
 * is located part by part, and one copied with the numbered view's `[n]` markers is also tried
 * without them. Quotes (or parts) shorter than `MIN_QUOTE_CHARS` or not found are skipped.
 * @param text the chunk text.
 * @param quotes sentences the model said it copied verbatim.
 * @returns spans `[start, end)` as UTF-16 offsets into `text`, sorted, overlapping spans merged.
 */
export function locateQuotes(text: string, quotes: string[]): Array<{ start: number; end: number }> {
  let normalisedText: { norm: string; origin: number[] } | undefined;
  const spans: Array<{ start: number; end: number }> = [];
  const locate = (piece: string): { start: number; end: number } | null => {
    const exact = text.indexOf(piece);
    if (exact !== -1) return { start: exact, end: exact + piece.length };
    const needle = normaliseQuote(piece);
    if (needle.length < MIN_QUOTE_CHARS) return null;
    normalisedText ??= normalise(text);
    const at = normalisedText.norm.indexOf(needle);
    if (at === -1) return null;
    return { start: normalisedText.origin[at], end: normalisedText.origin[at + needle.length - 1] + 1 };
  };
  for (const quote of quotes) {
    // A quote copied from the numbered view of the chunk may carry its `[n]` markers: try it without.
    const unmarked = quote.replace(/\[\d{1,4}\]\s*/g, '');
    for (const candidate of new Set([quote, unescapeUntrusted(quote), unmarked, unescapeUntrusted(unmarked)])) {
      const pieces = candidate
        .split(/\s*(?:\.\.\.|…)\s*/)
        .map((piece) => piece.trim())
        .filter((piece) => piece.length >= MIN_QUOTE_CHARS);
      const found = pieces.map(locate).filter((span): span is { start: number; end: number } => span !== null);
      if (found.length > 0) {
        spans.push(...found);
        break;
      }
    }
  }
  spans.sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: Array<{ start: number; end: number }> = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ ...span });
  }
  return merged;
}

/**
 * The two LLM agent roles of ExtAgents over chat models (see the file comment for the call bounds).
 * Implements the `AgentModel` port of shared/ports.ts.
 */
export class LlmAgents implements AgentModel {
  readonly description: string;
  private readonly seeker: ChatModel;
  private readonly reasoner: ChatModel;
  private readonly maxTokens: MaxOutputTokens;
  private readonly temperature: number;
  private readonly reasonerReply: ReasonerReply;
  private readonly seekerReply: SeekerReply;

  /**
   * @param options chat models per role, optional output-token limits (tokens) and temperature.
   */
  constructor(private readonly options: LlmAgentsOptions) {
    this.seeker = options.seeker;
    this.reasoner = options.reasoner;
    this.maxTokens = { ...DEFAULT_MAX_OUTPUT_TOKENS, ...options.maxOutputTokens };
    this.temperature = options.temperature ?? 0;
    this.reasonerReply = options.reasonerReply ?? 'json';
    this.seekerReply = options.seekerReply ?? 'json';
    this.description =
      this.seeker.modelId === this.reasoner.modelId
        ? `LLM agents (${this.seeker.modelId} for both roles)`
        : `LLM agents (seeking agents: ${this.seeker.modelId}; reasoning agent: ${this.reasoner.modelId})`;
  }

  /** The same agents with the seeking agents' chat model wrapped (the batch path: `ProviderDeps.wrapSeeker`). */
  withSeeker(wrap: (chat: ChatModel) => ChatModel): LlmAgents {
    return new LlmAgents({ ...this.options, seeker: wrap(this.options.seeker) });
  }

  /**
   * Seeking agent: one chunk, one round. One model call for evidence and relevance score; at most
   * one retry of an unusable reply and at most one score re-ask (3 calls at most).
   * @returns evidence (null = no information, or an unusable reply: see `warnings`), score 0-100
   *   (0 when evidence is null), spans of located quotes (chunk-text offsets), usage summed over the
   *   calls made, warnings.
   * @throws the chat model's typed errors (ModelThrottledError, ContextOverflowError, …) unchanged.
   */
  async seek(request: SeekRequest): Promise<SeekResult> {
    if (this.seekerReply === 'prose') return this.seekProse(request);
    const usage: RoleUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };
    const warnings: string[] = [];
    const units = numberedUnits(request.chunk.text, request.chunk.tokens);
    const prompt = buildSeekPrompt(request, units);
    const call = (chat: ChatRequest): Promise<ChatResponse> => timedCall(this.seeker, chat, usage, warnings);
    const base: ChatRequest = {
      role: 'seeker',
      system: prompt.system,
      messages: [{ role: 'user', text: prompt.user }],
      maxTokens: this.maxTokens.seek,
      temperature: this.temperature,
      schema: seekReplySchema(units.length),
      ...(prompt.cacheable && { cacheable: prompt.cacheable }),
    };

    const noMessage = (): SeekResult => ({ evidence: null, score: 0, spans: [], usage, warnings });
    const chunkOutcome = `chunk ${request.chunk.index} yields no message`;
    let response = await call(base);
    let filtered = filteredWarning(response, 'seeking agent', chunkOutcome);
    if (filtered !== undefined) {
      warnings.push(filtered);
      return noMessage();
    }
    const parse = (r: ChatResponse): SeekParse => {
      const p = parseSeekReply(r.text, { chunkText: request.chunk.text });
      if (p.kind !== 'no_information' && p.idWarning !== undefined) warnings.push(p.idWarning);
      return p;
    };
    let parsed = parse(response);
    if (seekUnusable(parsed, response)) {
      const wasCutOff = cutOff(response);
      if (wasCutOff) warnings.push(`seeking agent reply cut off at the output limit (${this.maxTokens.seek} tokens); retried once`);
      const retry = wasCutOff
        ? {
            ...base,
            messages: [{ role: 'user' as const, text: prompt.user + brevityReminder(this.maxTokens.seek) }],
            ...(prompt.cacheable && { cacheable: { prefix: prompt.cacheable.prefix, suffix: prompt.cacheable.suffix + brevityReminder(this.maxTokens.seek) } }),
          }
        : base;
      response = await call(retry);
      filtered = filteredWarning(response, 'seeking agent', chunkOutcome);
      if (filtered !== undefined) {
        warnings.push(filtered);
        return noMessage();
      }
      parsed = parse(response);
      if (seekUnusable(parsed, response)) {
        warnings.push(
          `seeking agent reply ${cutOff(response) ? `cut off at the output limit (${this.maxTokens.seek} tokens)` : 'empty or unreadable'} ` +
            'twice; the chunk yields no message',
        );
        return { evidence: null, score: 0, spans: [], usage, warnings };
      }
    }
    if (parsed.kind !== 'evidence') return { evidence: null, score: 0, spans: [], usage, warnings };
    if (parsed.truncated) warnings.push('seeking agent reply was truncated JSON; complete fields salvaged');

    const evidence = this.evidenceOf(request, units, parsed, warnings);
    if (evidence === null) return { evidence: null, score: 0, spans: [], usage, warnings };

    let score = parsed.score;
    if (parsed.scoreWarning !== undefined) warnings.push(parsed.scoreWarning);
    for (let reask = 0; score === null && reask < MAX_SCORE_REASKS; reask++) {
      const answer = await call({
        ...base,
        messages: [
          { role: 'user', text: prompt.user },
          { role: 'assistant', text: response.text.trim() },
          { role: 'user', text: SCORE_REASK_PROMPT },
        ],
        maxTokens: Math.min(SCORE_REASK_MAX_TOKENS, this.maxTokens.seek),
        schema: SCORE_REPLY,
      });
      const reask = filteredWarning(answer, 'seeking agent', 'its score re-ask is not read');
      if (reask !== undefined) {
        warnings.push(reask);
        break;
      }
      const reading = readScore(answer.text);
      if (reading.warning !== undefined) warnings.push(`score re-ask: ${reading.warning}`);
      score = reading.score;
    }
    if (score === null) {
      score = FALLBACK_SCORE;
      warnings.push(`relevance score missing or not a number after ${MAX_SCORE_REASKS} re-ask; fallback score ${FALLBACK_SCORE} used`);
    }
    return { evidence: evidence.text, score, spans: evidence.spans, usage, warnings };
  }

  /**
   * The prose seeking agent (`seekerReply: 'prose'`): one plain call (the passage, the known evidence
   * in rounds >= 2, the question, "Answer:"), read as its first line, at most one retry of an empty
   * reply. "NONE" (or another refusal) is no information. The evidence is the chunk's sentences that
   * hold the answer (`unitsHoldingAnswer`) and the one most about the question (`unitsAboutQuestion`),
   * verbatim with exact offsets, in chunk order, scored by how the answer was found
   * (`PROSE_SEEK_SCORES`); an answer found nowhere in the chunk yields no message, with a warning
   * (the model did not read it there).
   * @returns as `seek`.
   * @throws the chat model's typed errors unchanged.
   */
  private async seekProse(request: SeekRequest): Promise<SeekResult> {
    const usage: RoleUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };
    const warnings: string[] = [];
    const none = (): SeekResult => ({ evidence: null, score: 0, spans: [], usage, warnings });
    const text = request.chunk.text;
    const prompt = buildProseSeekPrompt(request);
    // The question the prompt asks: a round >= 2 follow-up, when the run gives one, else the run's.
    const asked = request.round >= 2 && request.followUp !== undefined ? request.followUp : request.question;
    const chat: ChatRequest = {
      role: 'seeker',
      system: prompt.system,
      messages: [{ role: 'user', text: prompt.user }],
      ...(prompt.cacheable && { cacheable: prompt.cacheable }),
      maxTokens: Math.min(PROSE_SEEK_MAX_TOKENS, this.maxTokens.seek),
      temperature: this.temperature,
    };
    const chunkOutcome = `chunk ${request.chunk.index} yields no message`;
    let response = await timedCall(this.seeker, chat, usage, warnings);
    if (firstLine(response.text) === '' && response.stopReason !== CONTENT_FILTERED) response = await timedCall(this.seeker, chat, usage, warnings);
    const filtered = filteredWarning(response, 'seeking agent', chunkOutcome);
    if (filtered !== undefined) {
      warnings.push(filtered);
      return none();
    }
    const answer = firstLine(response.text);
    if (answer === '') {
      warnings.push('seeking agent reply empty twice; the chunk yields no message');
      return none();
    }
    if (isRefusal(answer) || /^none\b/i.test(answer)) return none();
    const units = sentenceUnits(text);
    let found: { ids: number[]; how: keyof typeof PROSE_SEEK_SCORES | 'none' } = unitsHoldingAnswer(text, units, answer);
    if (found.how === 'none') {
      // A yes or no (a comparison), or words the chunk does not hold: the sentence of the chunk that
      // shares most of the question's words, if it shares at least half of them (a weak message).
      const best = unitsAboutQuestion(text, units, asked);
      if (best.length === 0) {
        warnings.push(
          `seeking agent answered ${JSON.stringify(cutAt(answer, 80))}, which is not in its chunk, and no sentence is about the question; no message`,
        );
        return none();
      }
      found = { ids: best, how: YES_NO.test(answer) ? 'overlap' : 'question' };
    }
    const how = found.how === 'none' ? 'question' : found.how;
    // With the sentence that holds the answer, the one most about the question (when another): what
    // links the answer to the question (a two-step question's first step, often in the same paragraph).
    const ids = how === 'question' ? found.ids : [...new Set([...found.ids.slice(0, PROSE_SEEK_MAX_UNITS - 1), ...unitsAboutQuestion(text, units, asked)])];
    const cited = citedText(text, units, this.options.proseLeads ? [...ids, ...paragraphLeads(text, units, ids)] : ids);
    return { evidence: cited.text, score: PROSE_SEEK_SCORES[how], spans: cited.units.map((u) => ({ start: u.start, end: u.end })), usage, warnings };
  }

  /**
   * The evidence of a usable seek reply and its spans in the chunk:
   * - cited sentence ids: the cited units' own text (verbatim, in chunk order) and exact offsets,
   *   then the note on a line of its own (`Note: …`), bounded to `MAX_NOTE_CHARS`, dropped when it
   *   repeats our prompt text (`echoesPrompt`); ids beyond the chunk's units are dropped, at most
   *   `MAX_CITED_SENTENCES` are kept, each with a warning;
   * - otherwise the free form of a provider that ignored the format: the evidence as written and the
   *   quotes located in the chunk (`locateQuotes`; may be none).
   * @returns null when nothing citable is left (every id out of range): the chunk yields no message.
   */
  private evidenceOf(
    request: SeekRequest,
    units: ReturnType<typeof sentenceUnits>,
    parsed: Extract<SeekParse, { kind: 'evidence' }>,
    warnings: string[],
  ): { text: string; spans: Array<{ start: number; end: number }> } | null {
    const text = request.chunk.text;
    if (parsed.sentences.length === 0) {
      return { text: parsed.evidence, spans: locateQuotes(text, parsed.quotes) };
    }
    const inRange = parsed.sentences.filter((id) => id <= units.length);
    if (inRange.length < parsed.sentences.length) {
      warnings.push(
        `seeking agent cited sentence ids beyond the chunk's ${units.length}, dropped: ${parsed.sentences.filter((id) => id > units.length).join(', ')}`,
      );
    }
    if (inRange.length > MAX_CITED_SENTENCES) warnings.push(`seeking agent cited ${inRange.length} sentences; the first ${MAX_CITED_SENTENCES} kept`);
    let note = parsed.note.trim();
    // A note copied from the chunk is corpus text: the units it covers are cited (exact offsets) and
    // the note itself is not kept. Small models often copy the sentence they mean into the note.
    const { ids: noteIds, whole } = this.unitsOfCopiedNote(text, units, note);
    const ids = [...new Set(inRange.slice(0, MAX_CITED_SENTENCES))];
    let allNoteUnitsCited = true;
    for (const id of noteIds) {
      if (ids.includes(id)) continue;
      if (ids.length < MAX_CITED_SENTENCES + MAX_NOTE_UNITS) ids.push(id);
      else allNoteUnitsCited = false;
    }
    const cited = citedText(text, units, ids);
    if (cited.units.length === 0) return null;
    // The note goes only when the units cited say all of it; beyond the cap it stays as written.
    if (whole && allNoteUnitsCited) note = '';
    if (note.length > MAX_NOTE_CHARS) {
      warnings.push(`seeking agent note of ${note.length} characters cut to ${MAX_NOTE_CHARS}`);
      note = cutAt(note, MAX_NOTE_CHARS);
    }
    if (note !== '' && echoesPrompt(note, `${request.question}\n${text}`)) {
      warnings.push("seeking agent note repeats the prompt's own text; dropped");
      note = '';
    }
    return {
      text: note === '' ? cited.text : `${cited.text}\nNote: ${note}`,
      spans: cited.units.map((u) => ({ start: u.start, end: u.end })),
    };
  }

  /**
   * The units a note copied from the chunk covers: each sentence of the note (the last one may be
   * cut by the note's bound) is located in the chunk as a quote (`locateQuotes`: exact, then white
   * space and case folded), and every unit it overlaps is cited. `whole` is true when every sentence
   * of at least `MIN_QUOTE_CHARS` was located (the note says nothing the units do not).
   */
  private unitsOfCopiedNote(text: string, units: ReturnType<typeof sentenceUnits>, note: string): { ids: number[]; whole: boolean } {
    const pieces = splitSentences(note)
      .map((s) => s.text)
      .filter((p) => p.length >= MIN_QUOTE_CHARS);
    if (pieces.length === 0) return { ids: [], whole: false };
    let located = 0;
    const ids: number[] = [];
    for (const piece of pieces) {
      const spans = locateQuotes(text, [piece]);
      if (spans.length === 0) continue;
      located += 1;
      for (const span of spans) for (const u of units) if (u.start < span.end && u.end > span.start && !ids.includes(u.id)) ids.push(u.id);
    }
    return { ids, whole: located === pieces.length };
  }

  /**
   * Reasoning agent: one knowledge-accumulating reasoning step over the given top-k messages. With
   * no messages it refuses without a model call. At most 2 model calls (one retry of an unusable reply
   * or a junk answer, see the file comment).
   * @returns the answer, or the structured refusal (`answerable: false`, answer "NO ANSWER");
   *   `citedMessageIds` only ever contains ids of the request's messages; usage over the calls made.
   * @throws the chat model's typed errors unchanged.
   */
  async reason(request: ReasonRequest): Promise<ReasonResult> {
    const usage: RoleUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };
    const warnings: string[] = [];
    const refuse = (): ReasonResult => ({ answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings });
    if (request.messages.length === 0) {
      warnings.push('reasoning agent given no messages; refused without a model call');
      return refuse();
    }
    const prose = this.reasonerReply === 'prose';
    const prompt = prose ? buildProseReasonPrompt(request) : buildReasonPrompt(request);
    const base: ChatRequest = {
      role: 'reasoner',
      system: prompt.system,
      messages: [{ role: 'user', text: prompt.user }],
      maxTokens: this.maxTokens.reason,
      temperature: this.temperature,
      ...(!prose && {
        schema: reasonReplySchema(
          request.messages.map((m) => m.id),
          { force: request.force },
        ),
      }),
    };
    // Text the answer may share with the prompt without echoing it: the question and the messages.
    const source = [request.question, ...request.messages.map((m) => m.evidence)].join('\n');
    const junkOf = (p: ReasonParse): JunkReason | undefined =>
      p.kind === 'answer' && p.answerable ? (junkAnswer(p.answer, request.question) ?? (echoesPrompt(p.answer, source) ? 'prompt' : undefined)) : undefined;
    // A prose answer is its first line, as a plain prompt's is read (later lines are the model running on).
    const read = (r: ChatResponse): ReasonParse => parseReasonReply(prose ? firstLine(r.text) : r.text);
    const filteredRefusal = (r: ChatResponse): ReasonResult | undefined => {
      const warning = filteredWarning(r, 'reasoning agent', 'counted as a refusal');
      if (warning === undefined) return undefined;
      warnings.push(warning);
      return { ...refuse(), filtered: true };
    };
    let response = await timedCall(this.reasoner, base, usage, warnings);
    const filteredFirst = filteredRefusal(response);
    if (filteredFirst !== undefined) return filteredFirst;
    let parsed = read(response);
    const unusable = reasonUnusable(parsed, response, prose);
    const junk = unusable ? undefined : junkOf(parsed);
    if (unusable || junk !== undefined) {
      const reminder = junk !== undefined ? junkReminder(junk) : cutOff(response) ? brevityReminder(this.maxTokens.reason) : '';
      const retry = reminder === '' ? base : { ...base, messages: [{ role: 'user' as const, text: prompt.user + reminder }] };
      response = await timedCall(this.reasoner, retry, usage, warnings);
      const filteredRetry = filteredRefusal(response);
      if (filteredRetry !== undefined) return filteredRetry;
      parsed = read(response);
      if (reasonUnusable(parsed, response, prose)) {
        warnings.push('reasoning agent reply empty, unreadable or cut off twice; counted as a refusal');
        return refuse();
      }
      const again = junkOf(parsed);
      if (again !== undefined) {
        warnings.push(
          `reasoning agent's answer ${junkDescription(again)}${junk !== undefined ? ` (first reply: ${junkDescription(junk)})` : ''}; counted as a refusal`,
        );
        return refuse();
      }
    }
    if (parsed.kind !== 'answer') return refuse();
    if (parsed.truncated) warnings.push('reasoning agent reply was truncated JSON; complete fields salvaged');
    if (!parsed.answerable) {
      if (request.force) warnings.push('reasoning agent refused although a best-effort answer was requested');
      return refuse();
    }
    // An answer that only restates the question is the evidence falling short (a multi-hop question's
    // first hop read alone): a refusal, so KAR reads more. A best-effort answer keeps it.
    if (!request.force && restatesQuestion(parsed.answer, request.question)) {
      warnings.push(`reasoning agent's answer ${JSON.stringify(cutAt(parsed.answer, 80))} only restates words of the question; counted as a refusal`);
      return refuse();
    }
    const given = new Set(request.messages.map((m) => m.id));
    const cited = prose && parsed.cited.length === 0 ? citedByOverlap(parsed.answer, request.messages) : parsed.cited.filter((id) => given.has(id));
    const unknown = parsed.cited.filter((id) => !given.has(id));
    if (unknown.length > 0) warnings.push(`reasoning agent cited ids it was not given, dropped: ${unknown.join(', ')}`);
    let answer = parsed.answer;
    if (answer.length > MAX_ANSWER_CHARS) {
      warnings.push(`reasoning agent answer of ${answer.length} characters cut to ${MAX_ANSWER_CHARS} (MAX_ANSWER_CHARS)`);
      answer = cutAt(answer, MAX_ANSWER_CHARS);
    } else if (answer.length === MAX_ANSWER_CHARS) {
      warnings.push(`reasoning agent answer reached the ${MAX_ANSWER_CHARS}-character bound of its reply (MAX_ANSWER_CHARS); it may be cut off`);
    }
    return { answerable: true, answer, citedMessageIds: cited, usage, warnings };
  }

  /**
   * The follow-up question of a round that ended without an answer (run option
   * `synchronization: 'follow-up'`): one call over the last KAR step's messages (`buildFollowUpPrompt`),
   * the reply's first line, "Follow-up question:" and quotes stripped, at most `MAX_FOLLOW_UP_CHARS`.
   * @returns null (with a warning) when the reply is empty, a refusal, withheld by a content filter,
   *   an echo of our prompt, or the run's question again: plain synchronization then.
   * @throws the chat model's typed errors unchanged.
   */
  async followUp(request: FollowUpRequest): Promise<FollowUpResult> {
    const usage: RoleUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };
    const warnings: string[] = [];
    const none = (why: string): FollowUpResult => {
      warnings.push(`no follow-up question: ${why}; plain synchronization`);
      return { followUp: null, usage, warnings };
    };
    if (request.messages.length === 0) return none('no message was read');
    const prompt = buildFollowUpPrompt(request);
    const response = await timedCall(
      this.reasoner,
      {
        role: 'reasoner',
        system: prompt.system,
        messages: [{ role: 'user', text: prompt.user }],
        maxTokens: FOLLOW_UP_MAX_TOKENS,
        temperature: this.temperature,
      },
      usage,
      warnings,
    );
    const filtered = filteredWarning(response, 'reasoning agent', 'no follow-up question');
    if (filtered !== undefined) {
      warnings.push(filtered);
      return { followUp: null, usage, warnings };
    }
    const line = firstLine(response.text)
      .replace(/^(?:follow[- ]?up(?:\s+question)?|question)\s*[:：]\s*/i, '')
      .replace(/^["'“”‘’]+|["'“”‘’]+$/gu, '')
      .trim();
    if (line === '' || isRefusal(line)) return none('the reply was empty or a refusal');
    if (echoesPrompt(line, request.messages.map((m) => m.evidence).join('\n'))) return none('the reply repeated the prompt');
    if (foldedWords(line) === foldedWords(request.question)) return none('the reply was the question itself');
    return { followUp: cutAt(line, MAX_FOLLOW_UP_CHARS), usage, warnings };
  }

  /**
   * The sufficiency check of an answer (run option `karStop: 'checked'`): one call over the cited
   * messages (`buildCheckPrompt`); the reply's first word read as yes or no.
   * @returns `unknown` (with a warning) for a reply that is neither, or one a content filter withheld.
   * @throws the chat model's typed errors unchanged.
   */
  async checkAnswer(request: CheckRequest): Promise<CheckResult> {
    const usage: RoleUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };
    const warnings: string[] = [];
    const prompt = buildCheckPrompt(request);
    const response = await timedCall(
      this.reasoner,
      { role: 'reasoner', system: prompt.system, messages: [{ role: 'user', text: prompt.user }], maxTokens: CHECK_MAX_TOKENS, temperature: this.temperature },
      usage,
      warnings,
    );
    const filtered = filteredWarning(response, 'reasoning agent', 'the answer not checked');
    if (filtered !== undefined) return { verdict: 'unknown', usage, warnings: [...warnings, filtered] };
    const word = /^[\s"'*]*(yes|no)\b/i.exec(firstLine(response.text))?.[1]?.toLowerCase();
    if (word === 'yes' || word === 'no') return { verdict: word, usage, warnings };
    warnings.push(`sufficiency check replied ${JSON.stringify(cutAt(firstLine(response.text), 80))}, neither yes nor no; the answer not held against it`);
    return { verdict: 'unknown', usage, warnings };
  }
}
