/**
 * The `openai:` provider: an OpenAI-compatible chat-completions server (OpenAI's API, vLLM, Ollama,
 * llama.cpp's server, …; models/openai/openai.ts), its key read asynchronously when the host says so
 * (models/openai/keyed.ts, models/openai/openai-key.ts), under the LLM agents and survey roles.
 */
import { LlmAgents } from '../../shared/llm/agents';
import { LlmSurveyModel } from '../../shared/survey/llm';
import type { ModelProvider, ProviderDeps, SpecOf } from '../port';
import { createOpenAiChatModel } from './keyed';
import { openAiOptionsFromEnv } from './openai';

const chatOf = (spec: SpecOf<'openai'>, role: 'seeker' | 'reasoner', deps: ProviderDeps) =>
  createOpenAiChatModel(role === 'seeker' ? spec.seekerModelId : spec.reasonerModelId, deps.openai, deps.openaiApiKey);

/** An OpenAI-compatible server as a model provider. */
export const provider: ModelProvider<'openai'> = {
  kind: 'openai',
  // OPENAI_BASE_URL (default OpenAI's API, which then needs OPENAI_API_KEY) and OPENAI_STRUCTURED,
  // resolved as the adapter resolves them; no request is sent.
  checkSettings: async () => {
    openAiOptionsFromEnv();
  },
  checkAccess: async () => {
    openAiOptionsFromEnv();
  },
  load: async () => ({}),
  chat: chatOf,
  agents(spec, deps) {
    const seeker = chatOf(spec, 'seeker', deps);
    return new LlmAgents({ seeker: deps.wrapSeeker ? deps.wrapSeeker(seeker) : seeker, reasoner: chatOf(spec, 'reasoner', deps) });
  },
  survey: (spec, deps) => new LlmSurveyModel({ reasoner: chatOf(spec, 'reasoner', deps) }),
  pricing: (spec) => ({ models: { seeker: `openai:${spec.seekerModelId}`, reasoner: `openai:${spec.reasonerModelId}` }, seekerCaches: false }),
  recordIds: (spec) => ({ seeker: spec.seekerModelId, reasoner: spec.reasonerModelId }),
  lambdaEnvIssues: (_spec, env) =>
    env.OPENAI_BASE_URL === undefined ? [{ variable: 'OPENAI_BASE_URL', message: 'required with an openai: MODEL_SPEC (CDK context openaiBaseUrl)' }] : [],
};
