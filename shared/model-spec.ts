/**
 * The parsed model spec's type, apart from its parser (models/spec.ts, where each kind's provider
 * parses what follows its colon): the library's public surface names these types, and its
 * declarations may not reach the providers; the port and the providers' traits name it without
 * importing the parser.
 */

/** A parsed model spec. */
export type ModelSpec =
  | { kind: 'extractive' }
  | { kind: 'bedrock'; seekerModelId: string; reasonerModelId: string }
  | { kind: 'openai'; seekerModelId: string; reasonerModelId: string }
  /**
   * `seekerModelId` / `reasonerModelId` are GGUF file paths as given (relative to the working
   * directory); `contextTokens` the context size per sequence (`?ctx=`), tokens of the model's
   * tokenizer, absent for the provider's default.
   */
  | { kind: 'llama'; seekerModelId: string; reasonerModelId: string; contextTokens?: number };

/** A model spec as text (to parse) or already parsed: functions along one command take either, so the text is parsed once. */
export type ModelSpecInput = string | ModelSpec;
