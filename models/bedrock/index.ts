/**
 * The `bedrock:` provider: Amazon Bedrock's Converse API (models/bedrock/bedrock.ts, the
 * `ChatModel` adapter, its SDK client and its retry policy) under the LLM agents
 * (shared/llm/agents.ts) and the LLM survey roles (shared/survey/llm.ts).
 * This module loads the Bedrock SDK; models/index.ts loads it only for a `bedrock:` spec.
 */
import { ModelConfigurationError } from '../../shared/errors';
import { supportsPromptCaching } from './traits';
import { LlmAgents } from '../../shared/llm/agents';
import { LlmSurveyModel } from '../../shared/survey/llm';
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { DepsFor, ModelProvider, SpecOf } from '../port';
import { BedrockChatModel, createBedrockClient } from './bedrock';

/** The `bedrock:` provider's dependencies (`ProviderDeps.bedrock`). */
export interface BedrockDeps {
  /**
   * A Bedrock Runtime client factory, called once per built model set (the Lambdas wrap it in X-Ray
   * tracing). Default: `createBedrockClient()` (models/bedrock/bedrock.ts).
   */
  client?: () => BedrockRuntimeClient;
}

/** One client per built model set, from the host's factory (traced in the Lambdas) or a fresh one. */
const clientOf = (deps: DepsFor<'bedrock', BedrockDeps>) => (deps.bedrock?.client ?? (() => createBedrockClient()))();

const chatOf = (spec: SpecOf<'bedrock'>, role: 'seeker' | 'reasoner', client: ReturnType<typeof clientOf>): BedrockChatModel =>
  new BedrockChatModel(client, role === 'seeker' ? spec.seekerModelId : spec.reasonerModelId);

/** Amazon Bedrock as a model provider. */
export const provider: ModelProvider<'bedrock', BedrockDeps> = {
  kind: 'bedrock',
  // The spec's ids were checked when it was parsed; credentials are `checkAccess`'s.
  checkSettings: async () => undefined,
  async checkAccess() {
    const client = createBedrockClient();
    try {
      await client.config.region();
    } catch (error) {
      client.destroy();
      throw new ModelConfigurationError('No AWS region for Amazon Bedrock: set AWS_REGION (e.g. us-east-1) or a profile with a region', { cause: error });
    }
    try {
      await client.config.credentials();
    } catch (error) {
      throw new ModelConfigurationError(
        `No AWS credentials for Amazon Bedrock (${(error as Error).message}): configure credentials (environment, profile or SSO) or use --model extractive`,
        { cause: error },
      );
    } finally {
      client.destroy();
    }
  },
  // A service: nothing to read; each builder makes its own client from the host's factory.
  load: async (spec) => ({
    chat: (role, deps = {}) => chatOf(spec, role, clientOf(deps)),
    agents(deps = {}) {
      const client = clientOf(deps);
      const seeker = chatOf(spec, 'seeker', client);
      return new LlmAgents({ seeker: deps.wrapSeeker ? deps.wrapSeeker(seeker) : seeker, reasoner: chatOf(spec, 'reasoner', client) });
    },
    survey: (deps = {}) => new LlmSurveyModel({ reasoner: chatOf(spec, 'reasoner', clientOf(deps)) }),
  }),
  pricing: (spec) => ({
    models: { seeker: `bedrock:${spec.seekerModelId}`, reasoner: `bedrock:${spec.reasonerModelId}` },
    seekerCaches: supportsPromptCaching(spec.seekerModelId),
  }),
  recordIds: (spec) => ({ seeker: spec.seekerModelId, reasoner: spec.reasonerModelId }),
  // Each built model set's client traced (a subsegment per Converse call).
  lambdaDeps: (_spec, _env, host) => ({ client: () => host.trace(createBedrockClient()) }),
  lambdaEnvIssues: () => [],
};
