/**
 * What a host gives the `openai:` provider (SDK-free: the CLI's `--structured` reads the modes, the
 * Lambdas' adapter the key reader's type): the chat models' options, the structured-output modes,
 * and where the key comes from when it is read asynchronously.
 */

/** Options of an `openai:` provider's chat models (`OpenAiChatModel`, models/openai/openai.ts); unset values come from the environment (`openAiOptionsFromEnv`). */
export interface OpenAiOptions {
  /** API root including the version path, e.g. `http://127.0.0.1:8000/v1`. Env: OPENAI_BASE_URL. */
  baseUrl?: string;
  /** Bearer token; omitted from requests when empty. Env: OPENAI_API_KEY. */
  apiKey?: string;
  /**
   * Whole-request timeout in ms (connection, generation and body), default 120 000. A non-streaming
   * completion sends nothing until generation ends, so this must exceed the slowest expected
   * generation (about maxTokens / output tokens per second).
   */
  timeoutMs?: number;
  /** The fetch implementation (tests); default the global `fetch`. */
  fetch?: typeof fetch;
  /** Structured-output mode (models/openai/openai.ts, file comment); env OPENAI_STRUCTURED; default `auto`. */
  structured?: StructuredMode;
}

/** Structured-output modes of the OpenAI-compatible adapter (models/openai/openai.ts, file comment). */
export const STRUCTURED_MODES = ['auto', 'schema', 'json', 'off'] as const;
export type StructuredMode = (typeof STRUCTURED_MODES)[number];

/** Reads an `openai:` server's API key (Secrets Manager in the Lambdas: models/openai/openai-key.ts, cached for a few minutes, then read again). */
export type ApiKeyProvider = () => Promise<string>;

/** The `openai:` provider's dependencies (`ProviderDeps.openai`). */
export interface OpenAiDeps {
  /** Options of the chat models (base URL, key, timeout, structured mode); unset values come from OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_STRUCTURED. */
  options?: OpenAiOptions;
  /** Where the key comes from when `options.apiKey` is unset and it is read asynchronously (Secrets Manager in the Lambdas). */
  apiKey?: ApiKeyProvider;
}
