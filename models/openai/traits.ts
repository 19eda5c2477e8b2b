/** The `openai:` kind's traits (models/traits.ts): a server outside AWS, whose base URL and key secret the stack deploys. */
import { ConfigurationError } from '../../shared/errors';
import type { ExternalServer, ModelTraits, SpecOf, SpecSyntax } from '../port';

/** How the kind is written (models/spec.ts). */
export const syntax: SpecSyntax = {
  syntax: 'openai:<model>[,<reasonerModel>]',
  help: "OpenAI's API, or an OpenAI-compatible server such as vLLM, Ollama, llama.cpp at OPENAI_BASE_URL; default https://api.openai.com/v1, which needs OPENAI_API_KEY",
};

/** The server as the stack deploys it: its API root and its key's secret, by CDK context and variable names. */
export const OPENAI_SERVER: ExternalServer = {
  what: 'the OpenAI-compatible server',
  baseUrl: { context: 'openaiBaseUrl', env: 'OPENAI_BASE_URL', example: 'https://<host>/v1' },
  apiKeySecret: { context: 'openaiApiKeySecretName', env: 'OPENAI_API_KEY_SECRET' },
};

/** An OpenAI-compatible server: no Bedrock grant; the stack needs its https base URL and, optionally, its key's secret. */
export const traits = (_spec: SpecOf<'openai'>): ModelTraits => ({
  languageModel: true,
  service: 'an OpenAI-compatible server (not an Amazon Bedrock model: nothing to check in AWS)',
  externalServer: OPENAI_SERVER,
});

/** OpenAI-compatible model names: no whitespace, no comma (the separator); anything else servers use (`/`, `:`, `.`). */
const OPENAI_MODEL_NAME = /^[^\s,]+$/;

/**
 * The model names after "openai:": one or two, comma-separated; the reasoner defaults to the seeker.
 * @throws ConfigurationError for zero, empty, more than two, or whitespace-containing names.
 */
export function parseOpenAiModels(spec: string, rest: string, grammar: string): SpecOf<'openai'> {
  const names = rest.split(',').map((name) => name.trim());
  if (names.length > 2 || names.some((name) => name === '')) {
    throw new ConfigurationError(`Invalid model spec "${spec}": expected one or two comma-separated model names after "openai:" (${grammar})`);
  }
  for (const name of names) {
    if (!OPENAI_MODEL_NAME.test(name)) {
      throw new ConfigurationError(`Invalid model spec "${spec}": "${name}" is not a model name (no spaces)`);
    }
  }
  const [seekerModelId, reasonerModelId = seekerModelId] = names;
  return { kind: 'openai', seekerModelId, reasonerModelId };
}
