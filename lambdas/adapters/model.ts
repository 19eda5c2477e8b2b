/**
 * Build the AgentModel named by a model spec (`extractive` | `bedrock:<seeker>[,<reasoner>]`).
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { ExtractiveReader } from '../../shared/extractive';
import { LlmAgents } from '../../shared/llm/agents';
import { parseModelSpec } from '../../shared/llm/model-spec';
import type { AgentModel } from '../../shared/ports';
import { BedrockChatModel } from './bedrock';

/**
 * @param bedrock a BedrockRuntimeClient factory, called only for a Bedrock spec (so the offline
 *   reader never builds an AWS client).
 * @throws ConfigurationError for an invalid spec.
 */
export function createAgentModel(spec: string, bedrock: () => BedrockRuntimeClient): AgentModel {
  const parsed = parseModelSpec(spec);
  if (parsed.kind === 'extractive') return new ExtractiveReader();
  const client = bedrock();
  return new LlmAgents({
    seeker: new BedrockChatModel(client, parsed.seekerModelId),
    reasoner: new BedrockChatModel(client, parsed.reasonerModelId),
  });
}
