/**
 * OpenAI-compatible Chat Completions adapter of the `ChatModel` port (shared/ports.ts), for the models
 * researchers host themselves: vLLM (`vllm serve`), Ollama (`/v1`), llama.cpp `llama-server`, and
 * any other server of that API (including api.openai.com). Uses Node's global `fetch` (Node 18+); no
 * SDK.
 *
 * Request: `POST {baseUrl}/chat/completions` with JSON `{model, messages: [{role: "system"|"user"|
 * "assistant", content}], max_tokens, temperature?, stream: false}` and, when a key is configured,
 * `Authorization: Bearer <key>` (local servers usually need none). A request with a reply schema
 * (shared/llm/schemas.ts) also carries `response_format` (see "Structured output" below).
 * Response: `choices[0].message.content`, `choices[0].finish_reason` ("stop" -> "end_turn",
 * "length" -> "max_tokens", other values passed through) and `usage.prompt_tokens` /
 * `usage.completion_tokens` (0 when the server reports none).
 * Sources: https://platform.openai.com/docs/api-reference/chat/create ,
 * https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html ,
 * https://github.com/ollama/ollama/blob/main/docs/openai.md ,
 * https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md
 *
 * `baseUrl` is the API root that `/chat/completions` is appended to, INCLUDING the version path, as
 * with the OpenAI SDK's OPENAI_BASE_URL: `http://127.0.0.1:8000/v1` (vLLM), `http://127.0.0.1:11434/v1`
 * (Ollama), `http://127.0.0.1:8080/v1` (llama.cpp), `https://api.openai.com/v1`.
 *
 * Structured output (`structured`, env OPENAI_STRUCTURED: `auto` | `schema` | `json` | `off`):
 * - `schema`: `response_format: {type: "json_schema", json_schema: {name, strict: true, schema}}`
 *   (OpenAI, vLLM, llama.cpp's server, Ollama and LM Studio constrain decoding to it);
 * - `json`: `response_format: {type: "json_object"}` (any JSON object);
 * - `off`: no `response_format` (the prompt states the format; the lenient parser reads the reply);
 * - `auto` (default): the best the server accepts, detected once per loaded model set (`StructuredModeDetections`), base URL and model:
 *   one call probes (the calls made meanwhile wait for its outcome, so a server is never asked
 *   twice): start with `schema`; a 400/422 rejection that names `response_format` (or `json_schema`)
 *   falls back to `json`, then to `off`, re-sending the same request at once (never a failed call
 *   because of it); a server that ignores the schema (a complete reply that is not JSON) falls back
 *   to `off`. The outcome is said once, in one warning on the probing call's reply (and so in the
 *   run's warnings), however many steps it took; a probe that fails otherwise settles nothing.
 * Sources: https://platform.openai.com/docs/guides/structured-outputs ,
 * https://docs.vllm.ai/en/latest/features/structured_outputs.html
 *
 * Errors are mapped onto shared/errors.ts at this boundary (`mapOpenAiHttpError`,
 * `mapOpenAiFetchError`); this adapter never retries by itself: the typed transient errors are retried
 * by the workflow (Step Functions Retry by error name) or by the caller, exactly like the Bedrock
 * adapter's throttling errors. A 429's `Retry-After` is kept on the error (`retryAfterSecondsOf`).
 */
import { z } from 'zod';
import {
  ConfigurationError,
  ContextOverflowError,
  type ExtAgentsError,
  ModelConfigurationError,
  ModelError,
  ModelThrottledError,
  ModelTimeoutError,
  ModelUnavailableError,
} from '../../shared/errors';
import { abortedCallError, sayThrottleWait, callSignal } from '../call-signal';
import { gateFor } from '../adaptive-gate';
import { CONTENT_FILTERED, type ChatModel, type ChatRequest, type ChatResponse, type StopReason } from '../../shared/ports';
import { STRUCTURED_MODES, type OpenAiOptions, type StructuredMode } from './options';

// The options and modes are declared in models/openai/options.ts (SDK-free: what a host gives the provider).
export { STRUCTURED_MODES, type OpenAiOptions, type StructuredMode } from './options';

/** Resolved configuration: base URL without trailing slash, optional key, timeout. */
export interface OpenAiConfig {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  fetch: typeof fetch;
  structured: StructuredMode;
}

/** Default whole-request timeout, ms. */
export const OPENAI_DEFAULT_TIMEOUT_MS = 120_000;

/**
 * The API root when none is set: OpenAI's own API, as the OpenAI SDK, LangChain and LlamaIndex
 * default to. It needs a key ({@link openAiOptionsFromEnv}).
 */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * Resolve options against the environment: explicit options win, then OPENAI_BASE_URL and
 * OPENAI_API_KEY. Without a base URL the model is OpenAI's API ({@link OPENAI_DEFAULT_BASE_URL}),
 * and then a key is required: a run never sends a corpus to a public endpoint without one, so a
 * self-hosted model's user who forgot OPENAI_BASE_URL is stopped here, not by a 401 after the
 * first request (the deployed stack always sets OPENAI_BASE_URL, from the CDK context `openaiBaseUrl`).
 * @throws ConfigurationError naming OPENAI_API_KEY when neither a base URL nor a key is given;
 *   naming OPENAI_BASE_URL when it is not an http(s) URL; for a timeout that is not a positive number.
 */
export function openAiOptionsFromEnv(options: OpenAiOptions = {}, env: NodeJS.ProcessEnv = process.env): OpenAiConfig {
  const apiKey = (options.apiKey ?? env.OPENAI_API_KEY ?? '').trim();
  const given = (options.baseUrl ?? env.OPENAI_BASE_URL ?? '').trim();
  if (given === '' && apiKey === '') {
    throw new ConfigurationError(
      `OpenAI-compatible model: no OPENAI_API_KEY. Without OPENAI_BASE_URL the model is OpenAI's API (${OPENAI_DEFAULT_BASE_URL}), which needs one: ` +
        'set OPENAI_API_KEY, or OPENAI_BASE_URL for your own server (e.g. http://127.0.0.1:8000/v1 for vLLM, ' +
        'http://127.0.0.1:11434/v1 for Ollama, http://127.0.0.1:8080/v1 for llama.cpp)',
    );
  }
  const baseUrl = given === '' ? OPENAI_DEFAULT_BASE_URL : given;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (error) {
    throw new ConfigurationError(`OPENAI_BASE_URL "${baseUrl}" is not a URL`, { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigurationError(`OPENAI_BASE_URL "${baseUrl}" must be an http:// or https:// URL`);
  }
  const timeoutMs = options.timeoutMs ?? OPENAI_DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new ConfigurationError(`OpenAI timeout must be a positive number of ms (got ${timeoutMs})`);
  const structured = (options.structured ?? (env.OPENAI_STRUCTURED?.trim() || 'auto')) as StructuredMode;
  if (!(STRUCTURED_MODES as readonly string[]).includes(structured)) {
    throw new ConfigurationError(`OPENAI_STRUCTURED / --structured must be one of ${STRUCTURED_MODES.join(', ')} (got "${structured}")`);
  }
  return {
    structured,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    ...(apiKey === '' ? {} : { apiKey }),
    timeoutMs,
    fetch: options.fetch ?? fetch,
  };
}

/** The throttle waits of one `complete` call (its warning). */
interface ThrottleNotes {
  throttled: number;
  waitedMs: number;
}

/** First backoff after a 429 without `Retry-After`, ms (full jitter: a random wait up to it). */
export const THROTTLE_BACKOFF_MS = 250;
/** Longest backoff after a 429 without `Retry-After`, ms. */
export const THROTTLE_BACKOFF_MAX_MS = 10_000;
/**
 * Most a call waits for throttled replies before it gives the 429 back as a ModelThrottledError (then
 * the workflow's Retry takes over), ms: a minute, well within a seek Lambda's timeout.
 */
export const THROTTLE_BUDGET_MS = 60_000;

/** Wait `ms`, ending early when `signal` aborts. */
function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** A ModelThrottledError with the server's `Retry-After`, when it sent one. The error's name stays "ModelThrottledError" (the workflow retries on it). */
export type ThrottledWithRetryAfter = ModelThrottledError & { retryAfterSeconds?: number };

/**
 * The `Retry-After` delay a throttling error carries, in seconds (fractional allowed), or undefined.
 */
export function retryAfterSecondsOf(error: unknown): number | undefined {
  if (!(error instanceof ModelThrottledError)) return undefined;
  const value = (error as ThrottledWithRetryAfter).retryAfterSeconds;
  return typeof value === 'number' ? value : undefined;
}

/**
 * Parse an HTTP `Retry-After` value (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date.
 * @param now the current time, ms since the epoch (tests).
 * @returns seconds to wait (>= 0), or undefined when absent or unparseable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Number(text);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.round((date - now) / 1000));
}

/** Wording of context-length rejections (vLLM, OpenAI, llama.cpp, Ollama, TGI). */
const CONTEXT_TOO_LONG =
  /context[_\s-]?length|maximum context|context (?:size|window)|exceed_context_size|too many (?:input )?tokens|prompt is too long|input (?:is )?too long|input length exceeds|exceeds? the (?:maximum|available) (?:context|input)/i;

/** One string field of a server's reply, or nothing when it is absent or not a string (servers differ). */
const lenientString = z
  .unknown()
  .transform((v) => (typeof v === 'string' ? v : undefined))
  .optional();

/** An error object as servers send it: OpenAI's `{message, type, code}`, each field optional. */
const ErrorObjectSchema = z.object({ message: lenientString, code: lenientString, type: lenientString });
/** An error body: `{error: {…}}`, `{error: "text"}`, or the error object itself. */
const ErrorBodySchema = z.union([z.object({ error: z.string() }), z.object({ error: ErrorObjectSchema }), ErrorObjectSchema]);

/** The `error` object servers return (OpenAI style `{error: {message, type, code}}`, or a plain string). */
function errorDetail(body: string): { message: string; code?: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { message: body }; // Not JSON: the body is the message.
  }
  const parsed = ErrorBodySchema.safeParse(json);
  if (!parsed.success) return { message: body };
  const err = 'error' in parsed.data ? parsed.data.error : parsed.data;
  if (typeof err === 'string') return { message: err };
  const code = err.code ?? err.type;
  return { message: err.message ?? body, ...(code ? { code } : {}) };
}

/**
 * Map a non-2xx response to a typed error (the body's message included, cut to 500 characters):
 *
 * | HTTP status | typed error | retried by the workflow |
 * |---|---|---|
 * | 429 (`Retry-After` kept in the message and `retryAfterSeconds`) | ModelThrottledError | yes |
 * | 429 with code `insufficient_quota` (OpenAI: billing, not load) | ModelConfigurationError | no |
 * | 500-599 | ModelUnavailableError | yes |
 * | 408 | ModelTimeoutError | yes |
 * | 400 / 413 / 422 whose message is about the context length | ContextOverflowError | no |
 * | 401, 403, 404 (bad key, no access, unknown model or wrong base URL) | ModelConfigurationError | no |
 * | any other 4xx (other 400) | ModelError | no |
 *
 * @param status HTTP status; `body` the response text; `retryAfter` the `Retry-After` header.
 */
export function mapOpenAiHttpError(status: number, body: string, retryAfter: string | null, modelId: string, baseUrl: string): ExtAgentsError {
  const where = `OpenAI-compatible chat completions (${baseUrl}, model ${modelId})`;
  const { message, code } = errorDetail(body);
  const detail = `HTTP ${status}${code ? ` ${code}` : ''}: ${message.length > 500 ? `${message.slice(0, 500)}…` : message}`;
  if (status === 429) {
    if (code === 'insufficient_quota') return new ModelConfigurationError(`${where}: quota exhausted (billing). ${detail}`);
    const seconds = parseRetryAfter(retryAfter);
    const error: ThrottledWithRetryAfter = new ModelThrottledError(
      `${where} throttled${seconds === undefined ? '' : ` (Retry-After: ${seconds} s)`}. ${detail}`,
    );
    if (seconds !== undefined) error.retryAfterSeconds = seconds;
    return error;
  }
  if (status >= 500) return new ModelUnavailableError(`${where} server error. ${detail}`);
  if (status === 408) return new ModelTimeoutError(`${where} timed out. ${detail}`);
  if ((status === 400 || status === 413 || status === 422) && (CONTEXT_TOO_LONG.test(message) || CONTEXT_TOO_LONG.test(code ?? ''))) {
    return new ContextOverflowError(`${where}: input exceeds the model's context window. ${detail}`);
  }
  if (status === 401 || status === 403) return new ModelConfigurationError(`${where}: not authorized (check OPENAI_API_KEY). ${detail}`);
  if (status === 404)
    return new ModelConfigurationError(`${where}: not found (check the model name and that OPENAI_BASE_URL ends with the API version, e.g. /v1). ${detail}`);
  return new ModelError(`${where} rejected the request. ${detail}`);
}

/** True for a URL whose host is this machine (localhost, 127.0.0.0/8, ::1). */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** Node network error codes that mean a timeout, and other transient network failures. */
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ECONNABORTED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const own = (error as { code?: unknown }).code;
  if (typeof own === 'string') return own;
  return codeOf((error as { cause?: unknown }).cause);
}

/**
 * Map what `fetch` (or reading the body) threw: the abort of our timeout signal (`TimeoutError`) and
 * socket timeouts -> ModelTimeoutError; a refused connection to a loopback server (nothing listens:
 * not retried) -> ModelConfigurationError naming the URL; any other network failure (connection
 * refused or reset, DNS) -> ModelUnavailableError (retried). Always with `cause`.
 */
export function mapOpenAiFetchError(error: unknown, modelId: string, baseUrl: string, timeoutMs: number): ExtAgentsError {
  const where = `OpenAI-compatible chat completions (${baseUrl}, model ${modelId})`;
  const name = typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined;
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'TimeoutError' || name === 'AbortError' || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new ModelTimeoutError(`${where} timed out after ${timeoutMs} ms${code ? ` (${code})` : ''}`, { cause: error });
  }
  // Nothing listens on this machine at that port: no retry brings a server up, so the run stops now.
  if (code === 'ECONNREFUSED' && isLoopbackUrl(baseUrl)) {
    return new ModelConfigurationError(
      `${where}: connection refused: no server listens at ${baseUrl}; start the OpenAI-compatible server (llama.cpp's llama-server, Ollama, vLLM) or set OPENAI_BASE_URL to where it listens`,
      { cause: error },
    );
  }
  return new ModelUnavailableError(`${where} network error: ${message}${code ? ` (${code})` : ''}`, { cause: error });
}

/** Map an OpenAI `finish_reason` onto the port's `stopReason` vocabulary. */
export function stopReasonOf(finishReason: unknown): { stopReason: StopReason; providerStopReason?: string } {
  if (finishReason === 'stop') return { stopReason: 'end_turn' };
  if (finishReason === 'length') return { stopReason: 'max_tokens' };
  if (finishReason === 'content_filter') return { stopReason: CONTENT_FILTERED };
  return { stopReason: 'other', providerStopReason: typeof finishReason === 'string' ? finishReason : 'unknown' };
}

/**
 * A chat completion as servers send it (OpenAI's API reference, "The chat completion object"): only
 * what the adapter reads, each field lenient. The message content is a string, null (no text), or
 * (some servers) a list of `{type: "text", text}` parts, whose texts are joined.
 */
const ChatCompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.union([
            z.string(),
            z.null().transform(() => ''),
            z.array(z.object({ text: lenientString }).catch({ text: undefined })).transform((parts) => parts.map((p) => p.text ?? '').join('')),
          ]),
        }),
        finish_reason: z.unknown().optional(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.unknown(), completion_tokens: z.unknown() }).partial().optional(),
});

/** True when the text (trimmed, optionally in a ```json fence) is one JSON object. */
function isJsonObjectText(text: string): boolean {
  const body = text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  try {
    const value = JSON.parse(body) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

function nonNegativeInt(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

/**
 * True when a 400/413/422 response rejects the structured-output request itself (it names
 * `response_format`, `json_schema` or a JSON-schema feature), not the prompt.
 */
export function rejectsResponseFormat(status: number, body: string): boolean {
  return (status === 400 || status === 422) && /response[_\s-]?format|json[_\s-]?schema|json_object|structured output|grammar/i.test(body);
}

/** A structured mode other than `auto`. */
type FixedMode = Exclude<StructuredMode, 'auto'>;

/**
 * The `auto` detection of one server and model (key: base URL and model name), shared by every
 * call of the process: `mode` once a call settled it; meanwhile `probe`, the one call detecting it,
 * which the others await; `start`, the mode the next probe starts with (lowered by rejections a
 * failed probe saw); `rejected`, what those rejections were, for the one warning of the outcome.
 */
export interface Detection {
  mode?: FixedMode;
  probe?: Promise<unknown>;
  start: FixedMode;
  rejected: string[];
}

/**
 * The `auto` detections of a set of chat models, by base URL and model name: the state of one
 * loaded model set (models/openai/index.ts gives its seeking and reasoning models one instance, so
 * a server is probed once per set), or of one `OpenAiChatModel` built alone. Instance state, not the
 * module's: two loaded sets never share what one of them detected.
 */
export class StructuredModeDetections {
  private readonly byServer = new Map<string, Detection>();

  /** The detection of one base URL and model name (created, unsettled, on first use). */
  of(baseUrl: string, modelId: string): Detection {
    const key = `${baseUrl}\n${modelId}`;
    let detection = this.byServer.get(key);
    if (!detection) this.byServer.set(key, (detection = { start: 'schema', rejected: [] }));
    return detection;
  }
}

/** The next weaker mode of `auto` fallback. */
function weaker(mode: FixedMode): FixedMode {
  return mode === 'schema' ? 'json' : 'off';
}

/** `response_format` of a mode for a request, or undefined (no schema, or `off`). */
export function responseFormatOf(mode: Exclude<StructuredMode, 'auto'>, request: ChatRequest): Record<string, unknown> | undefined {
  if (!request.schema || mode === 'off') return undefined;
  if (mode === 'json') return { type: 'json_object' };
  return { type: 'json_schema', json_schema: { name: request.schema.name, strict: true, schema: request.schema.schema } };
}

/** `ChatModel` over an OpenAI-compatible `/chat/completions` endpoint, one model name. */
export class OpenAiChatModel implements ChatModel {
  private readonly config: OpenAiConfig;

  /**
   * @param modelId the server's model name, e.g. `meta-llama/Llama-3.1-8B-Instruct` (vLLM),
   *   `llama3.1:8b` (Ollama); llama.cpp ignores it.
   * @param options base URL, key, timeout; unset ones from OPENAI_BASE_URL / OPENAI_API_KEY.
   * @param detections where `auto`'s detected mode is kept (shared by the models of one loaded
   *   set); default this model's own.
   * @throws ConfigurationError for an empty model name or a missing / invalid base URL.
   */
  constructor(
    readonly modelId: string,
    options: OpenAiOptions = {},
    private readonly detections: StructuredModeDetections = new StructuredModeDetections(),
  ) {
    if (modelId.trim() === '') throw new ConfigurationError('OpenAiChatModel needs a non-empty model name');
    this.config = openAiOptionsFromEnv(options);
  }

  /** The resolved base URL (without trailing slash). */
  get baseUrl(): string {
    return this.config.baseUrl;
  }

  /**
   * One non-streaming chat completion.
   * @param request system text (sent as a leading system message when not blank), user/assistant
   *   turns, output-token limit (`max_tokens`), temperature.
   * @returns the reply text, `stopReason` ("end_turn", "max_tokens", or the server's value) and the
   *   token usage reported by the server (0 when absent).
   * @throws the typed errors of `mapOpenAiHttpError` / `mapOpenAiFetchError`; ModelError for a 2xx
   *   reply that is not a chat completion (not JSON, no choices, no text content).
   */
  async complete(request: ChatRequest): Promise<ChatResponse> {
    const notes: ThrottleNotes = { throttled: 0, waitedMs: 0 };
    const reply = await this.completeRouted(request, notes);
    if (notes.throttled === 0) return reply;
    const said = `OpenAI-compatible server ${this.config.baseUrl} (model ${this.modelId}) throttled this call ${notes.throttled} time(s) (HTTP 429); waited ${(notes.waitedMs / 1000).toFixed(1)} s in all (its Retry-After when given) with fewer calls at once (now at most ${gateFor(this.config.baseUrl).limit}), then it answered`;
    return { ...reply, throttleWaitMs: notes.waitedMs, warnings: [...(reply.warnings ?? []), said] };
  }

  /** `complete` by the structured mode (detection, settled or forced), its throttle waits counted in `notes`. */
  private async completeRouted(request: ChatRequest, notes: ThrottleNotes): Promise<ChatResponse> {
    if (this.config.structured !== 'auto') return this.completeIn(this.config.structured, request, notes);
    // A request without a schema sends no response_format: nothing to detect.
    if (!request.schema) return this.completeIn('off', request, notes);
    const detection = this.detections.of(this.config.baseUrl, this.modelId);
    for (;;) {
      if (detection.mode !== undefined) return this.completeSettled(detection, request, notes);
      if (detection.probe === undefined) break;
      // Another call is detecting: wait for its outcome (settled, or failed: then probe again).
      await detection.probe.catch(() => undefined);
    }
    const probe = this.probe(detection, request, notes);
    detection.probe = probe;
    try {
      return await probe;
    } finally {
      detection.probe = undefined;
    }
  }

  /**
   * The one call detecting a server's mode (`auto`): from `detection.start` down (json_schema →
   * json_object → prose) while the server rejects response_format, then settles the mode that
   * answered (prose when the reply ignored the schema) with one warning naming the whole fallback.
   * A call that fails otherwise settles nothing (the next call probes again, from the lowest mode
   * not yet rejected).
   */
  private async probe(detection: Detection, request: ChatRequest, notes: ThrottleNotes): Promise<ChatResponse> {
    for (;;) {
      const mode = detection.start;
      const responseFormat = responseFormatOf(mode, request);
      const { status, text, retryAfter } = await this.send(request, responseFormat, notes);
      if (status < 200 || status >= 300) {
        if (responseFormat && rejectsResponseFormat(status, text)) {
          detection.rejected.push(`${mode === 'schema' ? 'json_schema' : 'json_object'} (HTTP ${status})`);
          detection.start = weaker(mode);
          continue;
        }
        throw mapOpenAiHttpError(status, text, retryAfter, this.modelId, this.config.baseUrl);
      }
      const reply = this.parseReply(text);
      reply.structured = mode === 'schema' ? 'schema' : mode === 'json' ? 'json' : 'prose';
      let settled = mode;
      const said: string[] = [];
      if (detection.rejected.length > 0) said.push(`rejected response_format ${detection.rejected.join(' and ')}`);
      if (responseFormat && reply.stopReason === 'end_turn' && !isJsonObjectText(reply.text)) {
        // A server that accepted response_format but did not constrain the reply ignores it.
        settled = 'off';
        reply.structured = 'prose';
        said.push(`ignored response_format ${mode === 'schema' ? 'json_schema' : 'json_object'} (the reply is not JSON)`);
      }
      detection.mode = settled;
      if (said.length === 0) return reply;
      const outcome = settled === 'json' ? 'json_object replies' : 'prose replies';
      return {
        ...reply,
        warnings: [`OpenAI-compatible server ${this.config.baseUrl} (model ${this.modelId}) ${said.join(', then ')}; ${outcome} from now on`],
      };
    }
  }

  /**
   * A call in the settled mode (`auto`). Should the server still reject or ignore it, the mode goes
   * down one step, said by the one call that lowered it (calls that used the same mode meanwhile
   * follow without a warning).
   */
  private async completeSettled(detection: Detection, request: ChatRequest, notes: ThrottleNotes): Promise<ChatResponse> {
    const mode = detection.mode ?? 'off';
    const responseFormat = responseFormatOf(mode, request);
    const { status, text, retryAfter } = await this.send(request, responseFormat, notes);
    const lower = (next: FixedMode, what: string): string[] => {
      if (detection.mode !== mode) return []; // another call lowered it already
      detection.mode = next;
      return [
        `OpenAI-compatible server ${this.config.baseUrl} (model ${this.modelId}) ${what}; ${next === 'json' ? 'json_object replies' : 'prose replies'} from now on`,
      ];
    };
    if (status < 200 || status >= 300) {
      if (responseFormat && rejectsResponseFormat(status, text)) {
        const warnings = lower(weaker(mode), `rejected response_format ${mode === 'schema' ? 'json_schema' : 'json_object'} (HTTP ${status})`);
        const reply = await this.completeSettled(detection, request, notes);
        return warnings.length > 0 ? { ...reply, warnings: [...warnings, ...(reply.warnings ?? [])] } : reply;
      }
      throw mapOpenAiHttpError(status, text, retryAfter, this.modelId, this.config.baseUrl);
    }
    const reply = this.parseReply(text);
    reply.structured = mode === 'schema' ? 'schema' : mode === 'json' ? 'json' : 'prose';
    if (responseFormat && reply.stopReason === 'end_turn' && !isJsonObjectText(reply.text)) {
      reply.structured = 'prose';
      const warnings = lower('off', `ignored response_format ${mode === 'schema' ? 'json_schema' : 'json_object'} (the reply is not JSON)`);
      return warnings.length > 0 ? { ...reply, warnings } : reply;
    }
    return reply;
  }

  /** A call in a forced mode (`schema`, `json`, `off`): never falls back. */
  private async completeIn(mode: FixedMode, request: ChatRequest, notes: ThrottleNotes): Promise<ChatResponse> {
    const responseFormat = responseFormatOf(mode, request);
    const { status, text, retryAfter } = await this.send(request, responseFormat, notes);
    if (status < 200 || status >= 300) throw mapOpenAiHttpError(status, text, retryAfter, this.modelId, this.config.baseUrl);
    const reply = this.parseReply(text);
    if (request.schema) reply.structured = mode === 'schema' ? 'schema' : mode === 'json' ? 'json' : 'prose';
    return reply;
  }

  /**
   * The request, sent through the server's adaptive gate (models/adaptive-gate.ts) and sent again
   * after a throttled reply (HTTP 429, but OpenAI's `insufficient_quota`, which is billing): after the
   * server's `Retry-After` when it gives one, else a jittered backoff (`THROTTLE_BACKOFF_MS`, doubling
   * to `THROTTLE_BACKOFF_MAX_MS`), for at most `THROTTLE_BUDGET_MS` of waiting; past that, the last
   * 429 is returned (the caller's ModelThrottledError, retried by the workflow). While the server
   * keeps answering, throttling alone thus never fails a call within the budget.
   * @throws the typed errors of `mapOpenAiFetchError`; RunAbortedError when the run was aborted meanwhile.
   */
  private async send(
    request: ChatRequest,
    responseFormat: Record<string, unknown> | undefined,
    notes: ThrottleNotes,
  ): Promise<{ status: number; text: string; retryAfter: string | null }> {
    const gate = gateFor(this.config.baseUrl);
    const where = `OpenAI-compatible chat completions (${this.config.baseUrl}, model ${this.modelId})`;
    for (let attempt = 0; ; attempt++) {
      const runSignal = callSignal();
      if (!(await gate.acquire(runSignal))) throw abortedCallError(where, runSignal?.reason) ?? new Error('aborted');
      let reply: { status: number; text: string; retryAfter: string | null };
      try {
        reply = await this.sendOnce(request, responseFormat);
      } finally {
        gate.release();
      }
      if (reply.status !== 429 || errorDetail(reply.text).code === 'insufficient_quota') {
        if (reply.status < 400) gate.succeeded();
        return reply;
      }
      gate.throttled();
      const seconds = parseRetryAfter(reply.retryAfter);
      const delay = seconds !== undefined ? seconds * 1000 : Math.random() * Math.min(THROTTLE_BACKOFF_MAX_MS, THROTTLE_BACKOFF_MS * 2 ** attempt);
      if (notes.waitedMs + delay > THROTTLE_BUDGET_MS) return reply;
      notes.throttled++;
      notes.waitedMs += delay;
      // Said before the wait, so the run's progress does not stand still in silence (models/call-signal.ts).
      sayThrottleWait(delay, `${where} throttled the call (HTTP 429${seconds !== undefined ? `, Retry-After ${seconds} s` : ''})`);
      await sleepUnlessAborted(delay, runSignal);
      const aborted = abortedCallError(where, runSignal?.reason);
      if (aborted !== undefined) throw aborted;
    }
  }

  /** One POST of the request (with `responseFormat` when given). @throws the typed errors of `mapOpenAiFetchError`. */
  private async sendOnce(
    request: ChatRequest,
    responseFormat: Record<string, unknown> | undefined,
  ): Promise<{ status: number; text: string; retryAfter: string | null }> {
    const { baseUrl, apiKey, timeoutMs } = this.config;
    const body = {
      model: this.modelId,
      messages: [
        ...(request.system.trim() === '' ? [] : [{ role: 'system', content: request.system }]),
        ...request.messages.map((m) => ({ role: m.role, content: m.text })),
      ],
      max_tokens: request.maxTokens,
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      stream: false,
      ...(responseFormat ? { response_format: responseFormat } : {}),
    };
    let status: number;
    let text: string;
    let retryAfter: string | null;
    const runSignal = callSignal();
    try {
      const response = await this.config.fetch(`${baseUrl}/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        // The run's abort (models/call-signal.ts) stops the call as the timeout does.
        signal: runSignal === undefined ? AbortSignal.timeout(timeoutMs) : AbortSignal.any([AbortSignal.timeout(timeoutMs), runSignal]),
      });
      status = response.status;
      retryAfter = response.headers.get('retry-after');
      text = await response.text();
    } catch (error) {
      throw (
        abortedCallError(`OpenAI-compatible chat completions (${baseUrl}, model ${this.modelId})`, error) ??
        mapOpenAiFetchError(error, this.modelId, baseUrl, timeoutMs)
      );
    }
    return { status, text, retryAfter };
  }

  private parseReply(text: string): ChatResponse {
    const where = `OpenAI-compatible chat completions (${this.config.baseUrl}, model ${this.modelId})`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch (error) {
      throw new ModelError(`${where}: reply is not JSON: ${text.slice(0, 200)}`, { cause: error });
    }
    const read = ChatCompletionSchema.safeParse(parsed);
    if (!read.success) throw new ModelError(`${where}: reply has no choices[0].message.content: ${text.slice(0, 200)}`);
    const reply = read.data;
    const choice = reply.choices[0];
    return {
      text: choice.message.content,
      ...stopReasonOf(choice.finish_reason),
      ...(choice.finish_reason === 'content_filter' && { filteredBy: 'content_filter' }),
      inputTokens: nonNegativeInt(reply.usage?.prompt_tokens),
      outputTokens: nonNegativeInt(reply.usage?.completion_tokens),
    };
  }
}
