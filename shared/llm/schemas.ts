/**
 * The reply schemas of every agent role, defined once: the contract that all providers share.
 *
 * - `llama:` models (models/llama/llama.ts) turn a schema into a JSON-schema grammar (node-llama-cpp's
 *   `createGrammarForJsonSchema`, via models/llama/grammar.ts `toGrammarSchema`), so a reply is valid by construction;
 * - OpenAI-compatible servers receive it as `response_format: {type: "json_schema", json_schema:
 *   {name, strict: true, schema}}` (https://platform.openai.com/docs/guides/structured-outputs);
 * - Bedrock receives it as the `inputSchema` of one tool with a forced `toolChoice`
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html);
 * - a provider without structured output gets the same format in prose (shared/llm/prompts.ts) and
 *   the lenient parser (shared/llm/parse.ts) reads the reply.
 *
 * Every string carries `maxLength` (characters) and every array `maxItems`, so a constrained reply
 * closes within its output budget unless its text runs under 2 characters a token (digit runs,
 * Chinese; the caller retries once): `outputTokenBudget` derives the output-token limit of a
 * call from those bounds, instead of a flat limit. The schemas use the JSON Schema subset that all
 * three mechanisms accept: objects whose properties are all required with `additionalProperties:
 * false` (OpenAI strict mode), strings, booleans, integers with `minimum`/`maximum`, `enum`, arrays.
 */

import { MAX_UNITS } from './sentences';

/** A JSON Schema object (the subset described in the file comment). */
export type JsonSchema = {
  readonly type?: 'object' | 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'null';
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: false;
  readonly items?: JsonSchema;
  readonly maxItems?: number;
  readonly minItems?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly enum?: readonly (string | number | boolean)[];
  readonly description?: string;
};

/** A named reply schema: `name` is what OpenAI's `json_schema.name` and Bedrock's tool name carry (`^[a-zA-Z0-9_-]{1,64}$`). */
export interface ReplySchema {
  readonly name: string;
  readonly description: string;
  readonly schema: JsonSchema;
}

/** Most quotes in one seeking agent reply (the free-quote form a prose reply may still use; shared/llm/parse.ts). */
export const MAX_QUOTES = 3;
/** Longest evidence of one seeking agent reply in the free form (characters). */
export const MAX_EVIDENCE_REPLY_CHARS = 480;
/** Longest quote of one seeking agent reply in the free form (characters). */
export const MAX_QUOTE_REPLY_CHARS = 200;
/** Most sentence ids one seeking agent reply cites. */
export const MAX_CITED_SENTENCES = 4;
/**
 * Longest note of one seeking agent reply (characters): what the cited sentences do not say verbatim
 * (a bridge fact, a resolved pronoun). Bounded, and shown after the sentences in the evidence.
 */
export const MAX_NOTE_CHARS = 200;
/** Longest answer of the reasoning agent (characters). */
export const MAX_ANSWER_CHARS = 160;
/** Most message ids the reasoning agent cites. */
export const MAX_CITED = 8;
/** Longest message id as written by the prompts (`r<round>-c<chunk>`), characters. */
export const MAX_MESSAGE_ID_CHARS = 24;

/**
 * The relevance levels a seeking agent may give, on the 0-100 scale messages keep: a coarse scale
 * with one-line anchors in the prompt (shared/llm/prompts.ts `SCORE_RUBRIC`), since fine 0-100
 * scores from small models are noise (paper, Limitations: rating reliability).
 */
export const SCORE_LEVELS = [0, 25, 50, 75, 100] as const;

function object(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

const SCORE: JsonSchema = { type: 'integer', enum: [...SCORE_LEVELS], description: 'relevance level: 0, 25, 50, 75 or 100' };

/**
 * The seeking agent's reply over a chunk shown as numbered sentences (shared/llm/sentences.ts):
 * `sentences`, the ids (1..`unitCount`) of 1 to `MAX_CITED_SENTENCES` supporting sentences (at
 * least one, the closest, even when nothing is relevant: given the choice, the test model cited no
 * sentence in every chunk of a HotpotQA question and the pool stayed empty; irrelevance is the
 * score's to say, and the ranking's to act on); `note`, up to `MAX_NOTE_CHARS` characters of what the
 * sentences do not say verbatim (may be empty); `score`, one of `SCORE_LEVELS` (0 when nothing
 * relevant). Field order is generation order: the sentences are chosen first, the score last.
 * The ids are a bounded integer (OpenAI json_schema, the Bedrock tool schema) and an enum of the
 * ids in a `llama:` grammar (models/llama/grammar.ts), so a constrained model can only cite real ids.
 * @param unitCount the chunk's number of units (at least 1).
 */
export function seekReplySchema(unitCount: number): ReplySchema {
  return {
    name: 'seek_reply',
    description: 'The ids of the chunk sentences that help answer the query, a short note, and a relevance level.',
    schema: object({
      sentences: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_CITED_SENTENCES,
        items: { type: 'integer', minimum: 1, maximum: Math.max(1, Math.floor(unitCount)) },
      },
      note: { type: 'string', maxLength: MAX_NOTE_CHARS, description: 'what the sentences do not say verbatim; empty if nothing' },
      score: SCORE,
    }),
  };
}

/** The widest seek reply (a chunk of `MAX_UNITS` units): what output budgets and the cost estimate assume. */
export const SEEK_REPLY: ReplySchema = seekReplySchema(MAX_UNITS);

/** The score re-ask's reply: `{"score": N}`, N one of `SCORE_LEVELS`. */
export const SCORE_REPLY: ReplySchema = {
  name: 'score_reply',
  description: 'The relevance level (0, 25, 50, 75 or 100) of the evidence just given.',
  schema: object({ score: SCORE }),
};

/**
 * The reasoning agent's reply of one KAR step: `answer` ("NO ANSWER" when not answerable), `cited`
 * message ids, then `answerable`. With the ids of the request's messages, `cited` is an enum of
 * exactly those ids, so a constrained model cannot cite a message it was not given.
 *
 * Field order is generation order, chosen by measurement with the test model (docs/EVAL.md,
 * "Fidelity"): the answer is written before the answerability verdict, so the verdict judges an
 * answer already drafted from the messages instead of deciding before reading them closely.
 * A best-effort answer (`force`) has no `answerable` field at all: it cannot refuse.
 * @param messageIds the ids of the messages of the step (may be empty: any short string then).
 * @param options.force the best-effort answer after the last round.
 */
export function reasonReplySchema(messageIds: readonly string[], options: { force?: boolean } = {}): ReplySchema {
  const id: JsonSchema = messageIds.length > 0 ? { type: 'string', enum: [...new Set(messageIds)] } : { type: 'string', maxLength: MAX_MESSAGE_ID_CHARS };
  const answer: JsonSchema = { type: 'string', maxLength: MAX_ANSWER_CHARS };
  const cited: JsonSchema = { type: 'array', maxItems: MAX_CITED, items: id };
  if (options.force) {
    return {
      name: 'reason_reply',
      description: 'The best short answer the messages support, and the ids of the messages it relies on.',
      schema: object({ answer, cited }),
    };
  }
  return {
    name: 'reason_reply',
    description:
      'The short answer (NO ANSWER when the messages do not allow one), the ids of the messages it relies on, and whether the messages answer the question.',
    schema: object({ answer, cited, answerable: { type: 'boolean' } }),
  };
}

/** Longest survey title (characters). */
export const MAX_TITLE_CHARS = 120;
/** Longest section heading (characters). */
export const MAX_HEADING_CHARS = 80;
/** Longest section scope line (characters). */
export const MAX_SCOPE_CHARS = 200;

/**
 * The survey outline reply: `covered` (false = show more messages: KAR doubles k), `title`,
 * up to `maxSections` sections of `heading` and one-line `scope`.
 * @param maxSections 1 or more.
 */
export function outlineReplySchema(maxSections: number): ReplySchema {
  return {
    name: 'outline_reply',
    description: 'Whether the messages cover the topic, and the survey outline.',
    schema: object({
      covered: { type: 'boolean' },
      title: { type: 'string', maxLength: MAX_TITLE_CHARS },
      sections: {
        type: 'array',
        maxItems: Math.max(1, Math.floor(maxSections)),
        items: object({ heading: { type: 'string', maxLength: MAX_HEADING_CHARS }, scope: { type: 'string', maxLength: MAX_SCOPE_CHARS } }),
      },
    }),
  };
}

/** Most paragraphs of one survey section reply. */
export const MAX_SECTION_PARAGRAPHS = 4;
/** Characters allowed per target word of a section (generous: English averages about 6 with the space and citations). */
export const SECTION_CHARS_PER_WORD = 9;

/**
 * The survey section writer's reply: Markdown paragraphs citing sources as `[id]`.
 * @param targetWords the section's target length in words; bounds the characters of the paragraphs.
 */
export function sectionReplySchema(targetWords: number): ReplySchema {
  const chars = Math.max(400, Math.ceil(targetWords * SECTION_CHARS_PER_WORD));
  return {
    name: 'section_reply',
    description: 'The paragraphs of one survey section, each sentence followed by its source ids in square brackets.',
    schema: object({
      paragraphs: {
        type: 'array',
        maxItems: MAX_SECTION_PARAGRAPHS,
        // Each paragraph up to a third of the section: 4 of them allow 4/3 of the target length.
        items: { type: 'string', maxLength: Math.ceil(chars / 3) },
      },
    }),
  };
}

/** Characters of reply text counted as one output token by `outputTokenBudget` (a low ratio: English averages about 4). */
export const BUDGET_CHARS_PER_TOKEN = 2;
/** Output tokens added by `outputTokenBudget` for the end-of-turn token and whitespace. */
export const BUDGET_OVERHEAD_TOKENS = 16;

/**
 * Longest JSON text (characters) a reply that follows `schema` can have, from its `maxLength`,
 * `maxItems` and `enum` bounds (quotes, commas, key names and a little whitespace included;
 * escapes inside strings counted once). An unbounded string or array counts as 1,000 characters.
 */
export function maxReplyChars(schema: JsonSchema): number {
  if (schema.enum) return Math.max(...schema.enum.map((v) => JSON.stringify(v).length));
  switch (schema.type) {
    case 'string':
      return (schema.maxLength ?? 1000) + 2;
    case 'integer':
    case 'number':
      return schema.maximum !== undefined && schema.minimum !== undefined ? Math.max(String(schema.maximum).length, String(schema.minimum).length) : 20;
    case 'boolean':
      return 5;
    case 'null':
      return 4;
    case 'array':
      return schema.items ? 2 + (schema.maxItems ?? 20) * (maxReplyChars(schema.items) + 2) : 1000;
    case 'object': {
      const entries = Object.entries(schema.properties ?? {});
      return 4 + entries.reduce((sum, [key, value]) => sum + key.length + 6 + maxReplyChars(value), 0);
    }
    default:
      return 1000;
  }
}

/**
 * The output-token limit of a call whose reply follows `schema`: its longest JSON text at
 * `BUDGET_CHARS_PER_TOKEN` characters a token, plus `BUDGET_OVERHEAD_TOKENS`. A constrained reply
 * closes within it; a reply that still reaches it is counted as cut off.
 * @returns tokens.
 */
export function outputTokenBudget(schema: ReplySchema): number {
  return Math.ceil(maxReplyChars(schema.schema) / BUDGET_CHARS_PER_TOKEN) + BUDGET_OVERHEAD_TOKENS;
}
