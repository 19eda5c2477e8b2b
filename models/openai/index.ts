/**
 * The `openai:` provider: an OpenAI-compatible chat-completions server (OpenAI's API, vLLM, Ollama,
 * llama.cpp's server, …; models/openai/openai.ts), its key read asynchronously when the host says so
 * (models/openai/keyed.ts, models/openai/openai-key.ts), under the LLM agents and survey roles.
 */
import { LlmAgents } from '../../shared/llm/agents';
import { LlmSurveyModel } from '../../shared/survey/llm';
import type { DepsFor, LambdaEnvIssue, LoadedModels, ModelProvider, SpecOf } from '../port';
import { OPENAI_SERVER } from './traits';
import type { OpenAiDeps } from './options';
import { createOpenAiChatModel } from './keyed';
import { openAiOptionsFromEnv, StructuredModeDetections } from './openai';

/**
 * The builders of one loaded `openai:` spec: every chat model they build shares one
 * `StructuredModeDetections`, so a server's structured mode is probed once per loaded set.
 */
function loadedSet(spec: SpecOf<'openai'>): LoadedModels<DepsFor<'openai', OpenAiDeps>> {
  const detections = new StructuredModeDetections();
  const chatOf = (role: 'seeker' | 'reasoner', deps: DepsFor<'openai', OpenAiDeps>) =>
    createOpenAiChatModel(role === 'seeker' ? spec.seekerModelId : spec.reasonerModelId, deps.openai?.options, deps.openai?.apiKey, detections);
  return {
    chat: (role, deps = {}) => chatOf(role, deps),
    agents(deps = {}) {
      const seeker = chatOf('seeker', deps);
      return new LlmAgents({ seeker: deps.wrapSeeker ? deps.wrapSeeker(seeker) : seeker, reasoner: chatOf('reasoner', deps) });
    },
    survey: (deps = {}) => new LlmSurveyModel({ reasoner: chatOf('reasoner', deps) }),
  };
}

/** An OpenAI-compatible server as a model provider. */
export const provider: ModelProvider<'openai', OpenAiDeps> = {
  kind: 'openai',
  // OPENAI_BASE_URL (default OpenAI's API, which then needs OPENAI_API_KEY) and OPENAI_STRUCTURED,
  // resolved as the adapter resolves them; no request is sent.
  checkSettings: async () => {
    openAiOptionsFromEnv();
  },
  checkAccess: async () => {
    openAiOptionsFromEnv();
  },
  // A service: nothing to read.
  load: async (spec) => loadedSet(spec),
  pricing: (spec) => ({ models: { seeker: `openai:${spec.seekerModelId}`, reasoner: `openai:${spec.reasonerModelId}` }, seekerCaches: false }),
  recordIds: (spec) => ({ seeker: spec.seekerModelId, reasoner: spec.reasonerModelId }),
  // Loaded only in a Lambda: the key reader brings the Secrets Manager SDK, which local commands never load.
  lambdaDeps: (_spec, env, host) => (require('./lambda-deps') as typeof import('./lambda-deps')).openAiLambdaDeps(env, host),
  // The server's variables (the names of its traits: OPENAI_BASE_URL, OPENAI_API_KEY_SECRET), validated at cold start.
  lambdaEnvIssues: (_spec, env) => {
    const { baseUrl, apiKeySecret } = OPENAI_SERVER;
    const url = env[baseUrl.env];
    const secret = env[apiKeySecret.env];
    const issues: LambdaEnvIssue[] = [];
    if (url === undefined) issues.push({ variable: baseUrl.env, message: `required with an openai: MODEL_SPEC (CDK context ${baseUrl.context})` });
    else if (!isHttpUrl(url)) issues.push({ variable: baseUrl.env, message: `must be an http(s) URL, got ${JSON.stringify(url)}` });
    if (secret !== undefined && String(secret).trim() === '')
      issues.push({ variable: apiKeySecret.env, message: 'must name the key secret when set (CDK context openaiApiKeySecretName)' });
    return issues;
  },
};

/** An absolute http: or https: URL. */
function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const protocol = new URL(value).protocol;
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
