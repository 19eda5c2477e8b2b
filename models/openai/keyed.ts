/**
 * OpenAI-compatible chat models whose API key may be read asynchronously (Secrets Manager in the
 * Lambdas, models/openai/openai-key.ts) before the first call.
 */
import type { ChatModel, ChatRequest, ChatResponse } from '../../shared/ports';
import type { ApiKeyProvider } from './options';
import { OpenAiChatModel, StructuredModeDetections, type OpenAiOptions } from './openai';

/**
 * One OpenAI-compatible ChatModel: an `OpenAiChatModel` when the key is known now (options or
 * OPENAI_API_KEY), a {@link KeyedOpenAiChatModel} when `apiKey` must be read first and no explicit
 * key is given.
 * @param detections where `auto`'s detected structured mode is kept (one per loaded model set:
 *   models/openai/index.ts); default the model's own.
 * @throws ConfigurationError for an empty model name or a missing / invalid base URL.
 */
export function createOpenAiChatModel(
  modelId: string,
  options: OpenAiOptions = {},
  apiKey?: ApiKeyProvider,
  detections: StructuredModeDetections = new StructuredModeDetections(),
): ChatModel {
  if (apiKey === undefined || options.apiKey !== undefined) return new OpenAiChatModel(modelId, options, detections);
  return new KeyedOpenAiChatModel(modelId, options, apiKey, detections);
}

/**
 * An OpenAI-compatible ChatModel whose API key is read asynchronously before its first call. The
 * configuration (base URL, model name) is checked at construction, like `OpenAiChatModel`'s, so a
 * bad configuration still fails before any call; errors of the key read (ConfigurationError,
 * ModelUnavailableError) surface from `complete`.
 */
export class KeyedOpenAiChatModel implements ChatModel {
  private model: OpenAiChatModel | undefined;

  constructor(
    readonly modelId: string,
    private readonly options: OpenAiOptions,
    private readonly apiKey: ApiKeyProvider,
    private readonly detections: StructuredModeDetections = new StructuredModeDetections(),
  ) {
    // Validate now (the key is not needed for that); the real client is built once the key is read.
    new OpenAiChatModel(modelId, { ...options, apiKey: '' });
  }

  /** Read the key (once: the provider keeps it), then complete through `OpenAiChatModel`. */
  async complete(request: ChatRequest): Promise<ChatResponse> {
    this.model ??= new OpenAiChatModel(this.modelId, { ...this.options, apiKey: await this.apiKey() }, this.detections);
    return this.model.complete(request);
  }
}
