/**
 * A run's request — its question, run id and options — parsed once, at the entry that received it
 * (the CLI, the library's `ask`, the engine's `runLocal` for in-process callers), into a typed value
 * that the layers below take instead of parsing again (issue 25, "validate once"). The workflow's
 * own input (Prepare, `PrepareEventSchema`) is parsed again by Prepare: on AWS it is another process
 * that receives JSON, so its schema is the execution's contract, not a repeat of the entry's check.
 *
 * The options kept here are the ones the caller gave (validated, not filled): the model's own
 * defaults (a `llama:` model's context, models/context.ts) apply to those left unset, and that
 * fitting, with the check that the chunks fit the model's context, is one function of its own
 * (`fitRunRequest`, models/context.ts).
 */
import { parseRunOptions, type RunOptions, type RunOptionsInput } from './config';
import { InvalidInputError, InvalidRunOptionsError } from './errors';
import { QuestionSchema, RunIdSchema } from './pipeline/state';
import { issueMessages } from './validation';

declare const PARSED: unique symbol;

/** A run request whose question, run id and options passed `parseRunRequest` (a nominal type: only it makes one). */
export interface ParsedRunRequest {
  /** The question, trimmed; 1 to `MAX_QUESTION_CHARS` characters, not only whitespace. */
  readonly question: string;
  /** The run id (1-80 characters of A-Z a-z 0-9 . _ -), or absent for a generated one. */
  readonly runId?: string;
  /** The options the caller gave, each valid and the cross-field rules kept; unset ones stay unset. */
  readonly options: RunOptionsInput;
  /** `options` with the schema's defaults for those unset (not the model's: see `fitted`). */
  readonly filled: RunOptions;
  /**
   * The options filled with the model's defaults and checked against its context
   * (`fitRunRequest`, models/context.ts), with the context they were fitted to (tokens; absent for
   * a model without a known context). Absent until fitted.
   */
  readonly fitted?: { readonly contextTokens: number | undefined; readonly options: RunOptions };
  readonly [PARSED]: true;
}

/** How an entry names the three fields in its errors (the CLI's flags, the library's properties). */
export interface RunRequestNames {
  question: string;
  runId: string;
}

/** The library's and the engine's names: the request's properties. */
export const PROPERTY_NAMES: RunRequestNames = { question: 'question', runId: 'runId' };

/**
 * Parse a run request once (see the module's comment).
 * @param input the question, the run id (optional) and the options (optional) as the caller gave them.
 * @param names how the entry names the question and run id in its errors.
 * @throws InvalidInputError naming the question or the run id; InvalidRunOptionsError naming each
 *   invalid option (ranges, unknown fields, the coverage options' cross-field rules).
 */
export function parseRunRequest(input: { question: unknown; runId?: unknown; options?: unknown }, names: RunRequestNames = PROPERTY_NAMES): ParsedRunRequest {
  const question = QuestionSchema.safeParse(input.question);
  if (!question.success) throw new InvalidInputError(`${names.question}: ${issueMessages(question.error)}`);
  if (input.runId !== undefined) {
    const runId = RunIdSchema.safeParse(input.runId);
    if (!runId.success) throw new InvalidInputError(`${names.runId}: ${issueMessages(runId.error)}`);
  }
  const options = (input.options ?? {}) as RunOptionsInput;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidRunOptionsError('Invalid run options: not an object');
  const filled = parseRunOptions(options); // every field and rule, with the schema's defaults for those unset
  return {
    question: question.data,
    ...(input.runId !== undefined && { runId: input.runId as string }),
    options: { ...options },
    filled,
  } as ParsedRunRequest;
}

/**
 * The same request with its options fitted (`fitRunRequest` of models/context.ts is the one caller).
 * @param contextTokens the context the options were fitted to, tokens (absent: no known context).
 */
export function withFittedOptions(request: ParsedRunRequest, contextTokens: number | undefined, options: RunOptions): ParsedRunRequest {
  return { ...request, fitted: { contextTokens, options } };
}
