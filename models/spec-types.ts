/**
 * The parsed model spec's type, apart from its parser (models/spec.ts), so the port and the providers'
 * traits can name it without importing the parser (which imports their parsers).
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
