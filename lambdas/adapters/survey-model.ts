/**
 * Build the survey roles named by a model spec (`extractive` | `bedrock:<seeker>[,<reasoner>]`):
 * the seeking agents (`AgentModel`, as for question answering) and the outline / writer roles
 * (`SurveyModel`, on the reasoner model).
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { parseModelSpec } from '../../shared/llm/model-spec';
import type { AgentModel } from '../../shared/ports';
import { ExtractiveSurveyModel } from '../../shared/survey/extractive';
import { LlmSurveyModel } from '../../shared/survey/llm';
import type { SurveyModel } from '../../shared/survey/ports';
import { BedrockChatModel } from './bedrock';
import { createAgentModel } from './model';

/**
 * @param bedrock a BedrockRuntimeClient factory, called only for a Bedrock spec.
 * @throws ConfigurationError for an invalid spec.
 */
export function createSurveyModels(spec: string, bedrock: () => BedrockRuntimeClient): { seeker: AgentModel; model: SurveyModel } {
  const parsed = parseModelSpec(spec);
  const seeker = createAgentModel(spec, bedrock);
  if (parsed.kind === 'extractive') return { seeker, model: new ExtractiveSurveyModel() };
  return { seeker, model: new LlmSurveyModel({ reasoner: new BedrockChatModel(bedrock(), parsed.reasonerModelId) }) };
}
