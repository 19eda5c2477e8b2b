/**
 * Build the AgentModel named by a model spec (`extractive` | `bedrock:<seeker>[,<reasoner>]` |
 * `openai:<model>[,<reasonerModel>]`).
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { ExtractiveReader } from '../../shared/extractive';
import { LlmAgents } from '../../shared/llm/agents';
import { toModelSpec, type ModelSpecInput } from '../../shared/llm/model-spec';
import type { AgentModel, BlobStore, ChatModel, ChatRequest, ChatResponse } from '../../shared/ports';
import type { ApiKeyProvider } from './openai-key';
import { OpenAiChatModel, type OpenAiOptions } from './openai';

// The Bedrock adapter (and so the Bedrock SDK) is loaded for a `bedrock:` spec only (issue 27, item 3).
export const bedrockAdapter = (): typeof import('./bedrock') => require('./bedrock') as typeof import('./bedrock');

/**
 * @param bedrock a BedrockRuntimeClient factory, called only for a Bedrock spec (so the offline
 *   reader never builds an AWS client).
 * @param openai options of an `openai:` spec (base URL, key, timeout: e.g. from CLI flags); unset
 *   values come from OPENAI_BASE_URL / OPENAI_API_KEY.
 * @param openaiApiKey where an `openai:` spec's key comes from when `openai.apiKey` is unset and it
 *   is read asynchronously (Secrets Manager in the Lambdas, lambdas/adapters/openai-key.ts); read
 *   before the first call.
 * @param analyses where the extractive reader keeps the sentence analysis of the chunks it read
 *   (the local bucket: warm runs skip it); unset, it analyzes every chunk it reads.
 * @throws ConfigurationError for an invalid spec, or an `openai:` spec without a base URL.
 */
export function createAgentModel(
  spec: ModelSpecInput,
  bedrock: () => BedrockRuntimeClient,
  openai: OpenAiOptions = {},
  openaiApiKey?: ApiKeyProvider,
  analyses?: BlobStore,
): AgentModel {
  const parsed = toModelSpec(spec);
  if (parsed.kind === 'extractive') return new ExtractiveReader({}, { analyses });
  if (parsed.kind === 'openai') {
    return new LlmAgents({
      seeker: createOpenAiChatModel(parsed.seekerModelId, openai, openaiApiKey),
      reasoner: createOpenAiChatModel(parsed.reasonerModelId, openai, openaiApiKey),
    });
  }
  const client = bedrock();
  const { BedrockChatModel } = bedrockAdapter();
  return new LlmAgents({
    seeker: new BedrockChatModel(client, parsed.seekerModelId),
    reasoner: new BedrockChatModel(client, parsed.reasonerModelId),
  });
}

/**
 * One OpenAI-compatible ChatModel: an `OpenAiChatModel` when the key is known now (options or
 * OPENAI_API_KEY), a {@link KeyedOpenAiChatModel} when `apiKey` must be read first and no explicit
 * key is given.
 * @throws ConfigurationError for an empty model name or a missing / invalid base URL.
 */
export function createOpenAiChatModel(modelId: string, options: OpenAiOptions = {}, apiKey?: ApiKeyProvider): ChatModel {
  if (apiKey === undefined || options.apiKey !== undefined) return new OpenAiChatModel(modelId, options);
  return new KeyedOpenAiChatModel(modelId, options, apiKey);
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
  ) {
    // Validate now (the key is not needed for that); the real client is built once the key is read.
    new OpenAiChatModel(modelId, { ...options, apiKey: '' });
  }

  /** Read the key (once: the provider keeps it), then complete through `OpenAiChatModel`. */
  async complete(request: ChatRequest): Promise<ChatResponse> {
    this.model ??= new OpenAiChatModel(this.modelId, { ...this.options, apiKey: await this.apiKey() });
    return this.model.complete(request);
  }
}
