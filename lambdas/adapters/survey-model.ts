/**
 * Build the survey roles named by a model spec (`extractive` | `bedrock:<seeker>[,<reasoner>]` |
 * `openai:<model>[,<reasonerModel>]`): the seeking agents (`AgentModel`, as for question answering)
 * and the outline / writer roles (`SurveyModel`, on the reasoner model).
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { toModelSpec, type ModelSpecInput } from '../../shared/llm/model-spec';
import type { AgentModel } from '../../shared/ports';
import { ExtractiveSurveyModel } from '../../shared/survey/extractive';
import { LlmSurveyModel } from '../../shared/survey/llm';
import type { SurveyModel } from '../../shared/survey/ports';
import { bedrockAdapter, createAgentModel, createOpenAiChatModel } from './model';
import type { OpenAiOptions } from './openai';
import type { ApiKeyProvider } from './openai-key';

/**
 * @param bedrock a BedrockRuntimeClient factory, called only for a Bedrock spec.
 * @param openai options of an `openai:` spec (see `createAgentModel`); unset values come from
 *   OPENAI_BASE_URL / OPENAI_API_KEY.
 * @param openaiApiKey an asynchronously read key of an `openai:` spec (the Lambdas' Secrets Manager secret).
 * @throws ConfigurationError for an invalid spec, or an `openai:` spec without a base URL.
 */
export function createSurveyModels(
  spec: ModelSpecInput,
  bedrock: () => BedrockRuntimeClient,
  openai: OpenAiOptions = {},
  openaiApiKey?: ApiKeyProvider,
): { seeker: AgentModel; model: SurveyModel } {
  const parsed = toModelSpec(spec);
  const seeker = createAgentModel(spec, bedrock, openai, openaiApiKey);
  if (parsed.kind === 'extractive') return { seeker, model: new ExtractiveSurveyModel() };
  const reasoner = parsed.kind === 'openai' ? createOpenAiChatModel(parsed.reasonerModelId, openai, openaiApiKey) : new (bedrockAdapter().BedrockChatModel)(bedrock(), parsed.reasonerModelId);
  return { seeker, model: new LlmSurveyModel({ reasoner }) };
}
