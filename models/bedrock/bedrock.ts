/**
 * Amazon Bedrock adapter of the `ChatModel` port (shared/ports.ts) over the Converse API
 * (`ConverseCommand` of @aws-sdk/client-bedrock-runtime).
 *
 * Request: `{ modelId, system: [{text}], messages: [{role, content: [{text}]}], inferenceConfig:
 * {maxTokens, temperature} }`. Response: the text blocks of `output.message.content`, `stopReason`,
 * `usage.inputTokens` / `usage.outputTokens` (tokens of the model's own tokenizer).
 * Source: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
 *
 * Errors are mapped at this boundary to the typed errors of shared/errors.ts (always with `cause`),
 * whose names the workflow's Retry/Catch match on; see `mapBedrockError`.
 *
 * Retry policy: two layers with separate jobs, so that they never multiply blindly.
 * - SDK layer (this client): `TransientRetryStrategy`, at most `BEDROCK_SDK_MAX_ATTEMPTS` = 2 sends
 *   per Converse request: one quick retry, after a full-jitter pause of at most
 *   `BEDROCK_SDK_RETRY_MAX_DELAY_MS`, of a failure the SDK classifies as TRANSIENT (connection reset
 *   or refused, socket timeout, HTTP 500/502/503/504 such as ServiceUnavailableException and
 *   InternalServerException, ModelNotReadyException), which a fresh connection often fixes. Never of
 *   throttling (HTTP 429, ThrottlingException): an immediate retry adds load where the service asked
 *   for less; never of ModelTimeoutException (HTTP 408: the model was slow, and a retry would likely
 *   wait out a whole request timeout again); never of client errors.
 * - Workflow layer: the typed error (ModelThrottledError, ModelUnavailableError, ModelTimeoutError)
 *   fails the Seek or Reason task, and Step Functions retries the task by error name
 *   (`MODEL_RETRY` of infra/extagents-workflow.ts: R = 6 retries, exponential backoff from 2 s capped
 *   at 60 s, full jitter): the one bounded, jittered backoff for throttling.
 * So one model call is sent at most 1 + R = 7 times when throttled, and at most 2 x (1 + R) = 14
 * times for transient failures; a retried task repeats its other model calls too (a seek makes at
 * most 3, a reasoning step 2: shared/llm/agents.ts). Each error that reaches a task is counted
 * (`RunResult.retries`); the SDK's own retry is not.
 */
import { gateFor } from '../adaptive-gate';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  type BedrockRuntimeClientConfig,
  type ContentBlock,
  type ConverseCommandInput,
} from '@aws-sdk/client-bedrock-runtime';
import {
  ConfigurationError,
  ContextOverflowError,
  ExtAgentsError,
  ModelConfigurationError,
  ModelError,
  ModelThrottledError,
  ModelTimeoutError,
  ModelUnavailableError,
} from '../../shared/errors';
import { foundationModelIdOf, isInferenceProfileId, supportsPromptCaching } from './traits';
import { abortedCallError, callSignal } from '../call-signal';
import { CONTENT_FILTERED, type ChatModel, type ChatRequest, type ChatResponse, type StopReason } from '../../shared/ports';

/** Options of `createBedrockRuntimeClient`. */
export interface BedrockClientOptions {
  /** AWS Region; default: the SDK's resolution (AWS_REGION in Lambda). */
  region?: string;
  /** Endpoint URL, e.g. a VPC interface endpoint (tests: a local server); default: the Region's. */
  endpoint?: string;
  /**
   * Total sends per request made by the SDK, retrying transient failures only (1 = no SDK retry);
   * default `BEDROCK_SDK_MAX_ATTEMPTS` (2).
   */
  maxAttempts?: number;
  /**
   * Socket inactivity timeout per attempt, in ms; default 60 000. A (non-streaming) Converse call
   * sends nothing until generation ends, so this must exceed the slowest expected generation (about
   * maxTokens / output tokens per second, e.g. 1024 / 50 = ~20 s). Worst case per Lambda invocation:
   * calls per task x maxAttempts x this (plus backoff), to compare with the Lambda timeout.
   */
  requestTimeoutMs?: number;
  /** TCP connection timeout per attempt, in ms; default 5 000. */
  connectionTimeoutMs?: number;
}

/** SDK sends per request (1 call + 1 retry of a transient failure); see the file comment for how it combines with Step Functions. */
export const BEDROCK_SDK_MAX_ATTEMPTS = 2;

/** Longest pause before the SDK's retry of a transient failure (full jitter: uniform in [0, this]), ms. */
export const BEDROCK_SDK_RETRY_MAX_DELAY_MS = 200;

/** The SDK's retry strategy interface (`RetryStrategyV2` of @smithy/types), derived from the client's config type. */
type SdkRetryStrategy = Extract<NonNullable<BedrockRuntimeClientConfig['retryStrategy']>, { acquireInitialRetryToken: unknown }>;
type SdkRetryToken = Awaited<ReturnType<SdkRetryStrategy['acquireInitialRetryToken']>>;
type SdkRetryErrorInfo = Parameters<SdkRetryStrategy['refreshRetryTokenForRetry']>[1];

/**
 * The SDK-layer retry policy of the file comment: retry a failure classified TRANSIENT by the SDK
 * (`errorInfo.errorType`), up to `maxAttempts` sends in all, after a full-jitter pause of at most
 * `maxDelayMs` x 2^(retry - 1); refuse every other failure (THROTTLING, SERVER_ERROR, CLIENT_ERROR),
 * which the retry middleware then throws unchanged. Stateless, so one instance may serve a client.
 */
export class TransientRetryStrategy implements SdkRetryStrategy {
  /**
   * @param maxAttempts total sends per request, >= 1.
   * @param maxDelayMs upper bound of the first retry's pause, ms.
   * @param random uniform [0, 1) source (tests).
   */
  constructor(
    readonly maxAttempts: number = BEDROCK_SDK_MAX_ATTEMPTS,
    readonly maxDelayMs: number = BEDROCK_SDK_RETRY_MAX_DELAY_MS,
    private readonly random: () => number = Math.random,
  ) {}

  async acquireInitialRetryToken(): Promise<SdkRetryToken> {
    return retryToken(0, 0);
  }

  /** @throws the request's error (or a refusal) when the failure is not transient or the attempts are used up. */
  async refreshRetryTokenForRetry(token: SdkRetryToken, errorInfo: SdkRetryErrorInfo): Promise<SdkRetryToken> {
    const retry = token.getRetryCount() + 1;
    if (errorInfo.errorType !== 'TRANSIENT' || retry >= this.maxAttempts) {
      throw errorInfo.error ?? new ModelError(`No SDK retry for a ${errorInfo.errorType} failure`);
    }
    return retryToken(retry, Math.floor(this.random() * this.maxDelayMs * 2 ** (retry - 1)));
  }

  recordSuccess(): void {
    // No retry quota to refill: the workflow's Retry bounds sustained failures.
  }
}

/** A retry token: the retry count and the pause (ms) the retry middleware waits before sending again. */
function retryToken(count: number, delayMs: number): SdkRetryToken {
  return { getRetryCount: () => count, getRetryDelay: () => delayMs };
}

/**
 * Create a Bedrock Runtime client with the bounded SDK retry of the file comment
 * (`TransientRetryStrategy`, 2 sends by default) and explicit timeouts. Create it once per container
 * (module scope) and reuse it.
 */
export function createBedrockClient(options: BedrockClientOptions = {}): BedrockRuntimeClient {
  const maxAttempts = options.maxAttempts ?? BEDROCK_SDK_MAX_ATTEMPTS;
  return new BedrockRuntimeClient({
    ...(options.region ? { region: options.region } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    maxAttempts,
    retryStrategy: new TransientRetryStrategy(maxAttempts),
    requestHandler: {
      requestTimeout: options.requestTimeoutMs ?? 60_000,
      connectionTimeout: options.connectionTimeoutMs ?? 5_000,
    },
  });
}

let sharedClient: BedrockRuntimeClient | undefined;

/**
 * The module-scope client of this container, created on first use with the defaults of
 * `createBedrockClient` (Lambda reuses it across invocations; `mockClient` still patches it).
 */
export function bedrockRuntimeClient(): BedrockRuntimeClient {
  sharedClient ??= createBedrockClient();
  return sharedClient;
}

/** Fields common to SDK service exceptions and Node network errors that the mapping reads. */
interface ErrorLike {
  name?: string;
  message?: string;
  code?: string;
  $fault?: string;
  $metadata?: { httpStatusCode?: number };
}

function asErrorLike(error: unknown): ErrorLike {
  return typeof error === 'object' && error !== null ? (error as ErrorLike) : { message: String(error) };
}

/** ValidationException of a model id that needs an inference profile for on-demand use. */
const ON_DEMAND_UNSUPPORTED = /on[-\s]demand throughput/i;
/** ValidationException wording for inputs beyond the model's context window (several model families). */
const CONTEXT_TOO_LONG =
  /input is too long|prompt is too long|too many (?:input )?tokens|maximum context length|context (?:length|window)|input (?:length|tokens?) (?:exceeds|is too)|exceeds? the (?:maximum )?(?:context|input)/i;
/** ValidationException of an unknown model id. */
const INVALID_MODEL_ID = /model identifier is invalid|model id(?:entifier)? .*(?:not found|invalid)/i;
/** Node network error codes that mean a timeout, and other transient network failures. */
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ECONNABORTED']);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'ENETUNREACH', 'EHOSTUNREACH']);

/** An example inference profile id for a model id, for error messages. */
function profileHint(modelId: string): string {
  return `us.${foundationModelIdOf(modelId)}`;
}

/**
 * Map an error of a Converse call to the typed errors of shared/errors.ts, keeping it as `cause`:
 *
 * | Bedrock error | typed error | retried by the workflow |
 * |---|---|---|
 * | ThrottlingException, HTTP 429, ServiceQuotaExceededException | ModelThrottledError | yes |
 * | ServiceUnavailableException, InternalServerException, ModelNotReadyException, other 5xx, network errors | ModelUnavailableError | yes |
 * | ModelTimeoutException, SDK TimeoutError, ETIMEDOUT | ModelTimeoutError | yes |
 * | ValidationException "on-demand throughput isn't supported" | ModelConfigurationError (use an inference profile id) | no |
 * | ValidationException about input too long / context length | ContextOverflowError | no |
 * | ValidationException "model identifier is invalid", AccessDeniedException, ResourceNotFoundException | ModelConfigurationError | no |
 * | anything else (other ValidationException, ModelErrorException, …) | ModelError | no |
 *
 * ServiceQuotaExceededException is mapped to throttling because the Bedrock API reference says the
 * request may be resubmitted later; the workflow's retries are bounded, so a hard quota still fails.
 * Source: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors
 * @param error what the SDK threw.
 * @param modelId the model id of the call (named in the message).
 * @returns the typed error (already an ExtAgentsError: returned unchanged).
 */
export function mapBedrockError(error: unknown, modelId: string): ExtAgentsError {
  if (error instanceof ExtAgentsError) return error;
  const e = asErrorLike(error);
  const name = e.name ?? 'Error';
  const detail = `${name}: ${e.message ?? ''}`.trim();
  const status = e.$metadata?.httpStatusCode;
  const where = `Bedrock Converse (model ${modelId})`;
  const options = { cause: error };

  switch (name) {
    case 'ThrottlingException':
    case 'ServiceQuotaExceededException':
      return new ModelThrottledError(`${where} throttled: ${detail}`, options);
    case 'ServiceUnavailableException':
    case 'InternalServerException':
    case 'ModelNotReadyException':
      return new ModelUnavailableError(`${where} temporarily unavailable: ${detail}`, options);
    case 'ModelTimeoutException':
    case 'TimeoutError':
    case 'RequestTimeout':
    case 'RequestTimeoutException':
      return new ModelTimeoutError(`${where} timed out: ${detail}`, options);
    case 'AccessDeniedException':
      return new ModelConfigurationError(
        `${where}: access denied. Enable access to this model in the Bedrock console and allow bedrock:InvokeModel ` +
          `on the model${isInferenceProfileId(modelId) ? ' and its inference profile' : ''} in IAM. ${detail}`,
        options,
      );
    case 'ResourceNotFoundException':
      return new ModelConfigurationError(`${where}: model not found in this Region (check the model id and Region). ${detail}`, options);
    case 'ValidationException': {
      const message = e.message ?? '';
      if (ON_DEMAND_UNSUPPORTED.test(message)) {
        return new ModelConfigurationError(
          `${where}: this model cannot be invoked on demand by its foundation-model id. Use a cross-region inference ` +
            `profile id instead, e.g. "${profileHint(modelId)}" (such as "us.meta.llama3-1-8b-instruct-v1:0"), ` +
            `in the model spec "bedrock:<seekerId>[,<reasonerId>]". ${detail}`,
          options,
        );
      }
      if (CONTEXT_TOO_LONG.test(message)) {
        return new ContextOverflowError(`${where}: input exceeds the model's context window. ${detail}`, options);
      }
      if (INVALID_MODEL_ID.test(message)) {
        return new ModelConfigurationError(`${where}: invalid model id. ${detail}`, options);
      }
      return new ModelError(`${where} rejected the request: ${detail}`, options);
    }
  }
  if (e.code && TIMEOUT_CODES.has(e.code)) return new ModelTimeoutError(`${where} timed out: ${detail}`, options);
  if (e.code && NETWORK_CODES.has(e.code)) return new ModelUnavailableError(`${where} network error: ${detail} (${e.code})`, options);
  if (status === 429) return new ModelThrottledError(`${where} throttled (HTTP 429): ${detail}`, options);
  if (status === 408) return new ModelTimeoutError(`${where} timed out (HTTP 408): ${detail}`, options);
  if ((status !== undefined && status >= 500) || e.$fault === 'server') {
    return new ModelUnavailableError(`${where} server error${status ? ` (HTTP ${status})` : ''}: ${detail}`, options);
  }
  return new ModelError(`${where} failed: ${detail}`, options);
}

/**
 * Model families whose Converse API supports a forced `toolChoice` (`{tool: {name}}`): Anthropic
 * Claude 3 and later, Amazon Nova, Mistral Large (the Bedrock user guide's table of models and
 * model features: "tool choice"). Matched on the foundation-model id (inference profile prefix removed).
 * Source: https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-supported-models-features.html
 */
const FORCED_TOOL_CHOICE = /^(?:anthropic\.claude-(?!v1|v2|instant)|amazon\.nova-|mistral\.mistral-large)/;

/** True when structured replies are sent to this model as one forced tool (see `FORCED_TOOL_CHOICE`). */
export function supportsForcedToolChoice(modelId: string): boolean {
  return FORCED_TOOL_CHOICE.test(foundationModelIdOf(modelId));
}

/** The JSON input of the first toolUse block of a Converse reply, as text; undefined when there is none. */
function toolInputOf(content: ContentBlock[] | undefined): string | undefined {
  for (const block of content ?? []) {
    if ('toolUse' in block && block.toolUse) return JSON.stringify(block.toolUse.input ?? {});
  }
  return undefined;
}

/** Concatenate the text blocks of a Converse reply (other block kinds, e.g. reasoning, are skipped). */
function textOf(content: ContentBlock[] | undefined): string {
  return (content ?? []).map((block) => ('text' in block && typeof block.text === 'string' ? block.text : '')).join('');
}

/**
 * `ChatModel` over Bedrock Converse, one model id (a foundation-model id or an inference profile id).
 */
export class BedrockChatModel implements ChatModel {
  /**
   * @param client a Bedrock Runtime client created once per container (`createBedrockClient` or
   *   `bedrockRuntimeClient()`); both roles may share it.
   * @param modelId Bedrock model id, e.g. `us.meta.llama3-1-8b-instruct-v1:0`.
   * @throws ConfigurationError when `modelId` is empty.
   */
  constructor(
    private readonly client: BedrockRuntimeClient,
    readonly modelId: string,
  ) {
    if (modelId.trim() === '') throw new ConfigurationError('BedrockChatModel needs a non-empty model id');
  }

  /**
   * One Converse call.
   * @param request system text, user/assistant turns, output-token limit (tokens), temperature.
   * @returns the reply text, `stopReason` as Bedrock gives it ("end_turn", "max_tokens", …) and the
   *   token usage reported by Bedrock (0 when absent).
   * @throws ContextOverflowError when Bedrock stops with "model_context_window_exceeded" or rejects
   *   the input as too long; the other typed errors per `mapBedrockError`.
   */
  async complete(request: ChatRequest): Promise<ChatResponse> {
    const tool = request.schema && supportsForcedToolChoice(this.modelId) ? request.schema : undefined;
    const input: ConverseCommandInput = { modelId: this.modelId, ...converseInput(this.modelId, request, { tool: tool !== undefined }) };
    let output;
    // One AIMD gate per model in this process (models/adaptive-gate.ts): a throttle halves the calls in
    // flight, each answer adds one back, so a local run's many seeking agents settle near the quota's
    // rate instead of throttling together; the throttled call itself goes back to the workflow's
    // Retry (shared/quota.ts MODEL_RETRY_POLICY). In a Lambda (one call at a time) it never waits.
    const gate = gateFor(`bedrock:${this.modelId}`);
    const abortSignal = callSignal();
    if (!(await gate.acquire(abortSignal))) throw abortedCallError(`Bedrock Converse (model ${this.modelId})`, abortSignal?.reason) ?? new Error('aborted');
    try {
      // The run's abort (models/call-signal.ts) stops the call (the SDK's abortSignal).
      output = await this.client.send(new ConverseCommand(input), abortSignal === undefined ? {} : { abortSignal });
      gate.succeeded();
    } catch (error) {
      const mapped = abortedCallError(`Bedrock Converse (model ${this.modelId})`, error) ?? mapBedrockError(error, this.modelId);
      if (mapped.name === ModelThrottledError.name) gate.throttled();
      throw mapped;
    } finally {
      gate.release();
    }
    return converseResponse(output, request, { modelId: this.modelId, tool: tool !== undefined });
  }
}

/**
 * The Converse request body of a chat request, without the model id: what `BedrockChatModel` sends
 * and what a batch record's `modelInput` holds (models/bedrock/batch-records.ts). The seeking
 * agent's chunk goes before a cache point on models that cache prompts; with `tool`, the reply
 * schema becomes one forced tool (a batch record never has one: batch inference's Converse records
 * take no toolConfig, so the prompt's own statement of the format is read by the lenient parser).
 * Source: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
 */
export function converseInput(modelId: string, request: ChatRequest, options: { tool: boolean }): Omit<ConverseCommandInput, 'modelId'> {
  const cache = request.cacheable && supportsPromptCaching(modelId) ? request.cacheable : undefined;
  const input: Omit<ConverseCommandInput, 'modelId'> = {
    messages: request.messages.map((m, i) =>
      i === 0 && cache
        ? // The stable prefix (the chunk, with the system prompt) up to a cache point, then the question.
          { role: m.role, content: [{ text: cache.prefix }, { cachePoint: { type: 'default' as const } }, { text: cache.suffix }] }
        : { role: m.role, content: [{ text: m.text }] },
    ),
    inferenceConfig: {
      maxTokens: request.maxTokens,
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    },
    // Bedrock rejects blank text blocks: omit an empty system prompt.
    ...(request.system.trim() === '' ? {} : { system: [{ text: request.system }] }),
  };
  // Structured reply: one tool whose input schema is the reply schema, forced, where the model
  // supports it; other models keep prose prompting (the prompt states the same format).
  const tool = options.tool ? request.schema : undefined;
  if (tool) {
    input.toolConfig = {
      tools: [{ toolSpec: { name: tool.name, description: tool.description, inputSchema: { json: tool.schema as Record<string, never> } } }],
      toolChoice: { tool: { name: tool.name } },
    };
  }
  return input;
}

/** The parts of a Converse reply `converseResponse` reads (the SDK's output, or a batch record's `modelOutput`). */
export interface ConverseReply {
  output?: { message?: { content?: ContentBlock[] } };
  stopReason?: string;
  usage?: { inputTokens?: number; outputTokens?: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number };
}

/**
 * A Converse reply as the port's `ChatResponse`: the text (a forced tool's input when `tool`), the stop
 * reason mapped once (`converseStopReason`), the token usage Bedrock reported (0 when absent).
 * @throws ContextOverflowError when Bedrock stopped with "model_context_window_exceeded".
 */
export function converseResponse(output: ConverseReply, request: ChatRequest, options: { modelId: string; tool: boolean }): ChatResponse {
  const stopReason: string = output.stopReason ?? 'unknown';
  if (stopReason === 'model_context_window_exceeded') {
    throw new ContextOverflowError(
      `Bedrock Converse (model ${options.modelId}): input plus maxTokens (${request.maxTokens}) exceed the model's context window`,
    );
  }
  const toolInput = options.tool ? toolInputOf(output.output?.message?.content) : undefined;
  const filtered = stopReason === 'guardrail_intervened' || stopReason === 'content_filtered';
  return {
    ...(filtered && { filteredBy: stopReason }),
    text: toolInput ?? textOf(output.output?.message?.content),
    ...converseStopReason(stopReason, toolInput !== undefined),
    ...(request.schema ? { structured: toolInput !== undefined ? ('schema' as const) : ('prose' as const) } : {}),
    inputTokens: output.usage?.inputTokens ?? 0,
    outputTokens: output.usage?.outputTokens ?? 0,
    ...(output.usage?.cacheReadInputTokens ? { cacheReadInputTokens: output.usage.cacheReadInputTokens } : {}),
    ...(output.usage?.cacheWriteInputTokens ? { cacheWriteInputTokens: output.usage.cacheWriteInputTokens } : {}),
  };
}

/**
 * The Converse API's `stopReason` onto the port's vocabulary (shared/ports.ts `STOP_REASONS`):
 * `end_turn`, `max_tokens` and `stop_sequence` as they are; a forced tool's `tool_use` is a complete
 * reply (`end_turn`); a guardrail or the model's own content filter (`guardrail_intervened`,
 * `content_filtered`) is `content_filtered`; anything else is `other`, its value kept.
 * (`model_context_window_exceeded` is thrown as ContextOverflowError before this.)
 */
export function converseStopReason(stopReason: string, toolReply: boolean): { stopReason: StopReason; providerStopReason?: string } {
  if (stopReason === 'end_turn' || stopReason === 'max_tokens' || stopReason === 'stop_sequence') return { stopReason };
  if (stopReason === 'tool_use' && toolReply) return { stopReason: 'end_turn' };
  if (stopReason === 'guardrail_intervened' || stopReason === 'content_filtered') return { stopReason: CONTENT_FILTERED };
  return { stopReason: 'other', providerStopReason: stopReason };
}
