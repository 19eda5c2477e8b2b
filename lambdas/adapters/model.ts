/**
 * Build the AgentModel named by a model spec (`extractive` | `bedrock:<seeker>[,<reasoner>]` |
 * `openai:<model>[,<reasonerModel>]`).
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { ExtractiveReader } from '../../shared/extractive';
import { LlmAgents } from '../../shared/llm/agents';
import { parseModelSpec } from '../../shared/llm/model-spec';
import type { AgentModel } from '../../shared/ports';
import { BedrockChatModel } from './bedrock';
import { OpenAiChatModel, type OpenAiOptions } from './openai';

/**
 * @param bedrock a BedrockRuntimeClient factory, called only for a Bedrock spec (so the offline
 *   reader never builds an AWS client).
 * @param openai options of an `openai:` spec (base URL, key, timeout: e.g. from CLI flags); unset
 *   values come from OPENAI_BASE_URL / OPENAI_API_KEY.
 * @throws ConfigurationError for an invalid spec, or an `openai:` spec without a base URL.
 */
export function createAgentModel(spec: string, bedrock: () => BedrockRuntimeClient, openai: OpenAiOptions = {}): AgentModel {
  const parsed = parseModelSpec(spec);
  if (parsed.kind === 'extractive') return new ExtractiveReader();
  if (parsed.kind === 'openai') {
    return new LlmAgents({
      seeker: new OpenAiChatModel(parsed.seekerModelId, openai),
      reasoner: new OpenAiChatModel(parsed.reasonerModelId, openai),
    });
  }
  const client = bedrock();
  return new LlmAgents({
    seeker: new BedrockChatModel(client, parsed.seekerModelId),
    reasoner: new BedrockChatModel(client, parsed.reasonerModelId),
  });
}
