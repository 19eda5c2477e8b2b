/**
 * The `llama:` provider: a GGUF model run in-process on the CPU with node-llama-cpp
 * (models/llama/llama.ts). Local commands only: the AWS stack refuses a `llama:` spec, and a Lambda's
 * environment check says so; node-llama-cpp itself is loaded with a dynamic `import()` on the first
 * load, so nothing reaches it at start-up (and the Lambda bundles keep it external: infra/extagents-function.ts).
 * Its models are read into memory by `load` (once per process and file); the builders it returns use them.
 */
import path from 'node:path';
import type { ModelProvider } from '../port';
import { checkGgufFile, loadLlamaModels } from './llama';

/** A local GGUF model as a model provider. */
export const provider: ModelProvider<'llama', never> = {
  kind: 'llama',
  async checkSettings(spec) {
    for (const file of new Set([spec.seekerModelId, spec.reasonerModelId])) await checkGgufFile(file);
  },
  // The files are checked when the model loads (checkGgufFile first, then the load).
  checkAccess: async () => undefined,
  load: async (spec, options) => {
    const models = await loadLlamaModels(spec, { sequences: options.sequences ?? 1 });
    return {
      contextTokens: models.contextTokens,
      runDefaults: models.runDefaults,
      chat: (role) => models[role],
      agents: (deps = {}) => (deps.wrapSeeker ? models.agents.withSeeker(deps.wrapSeeker) : models.agents),
      survey: () => models.survey,
    };
  },
  pricing: (spec) => ({
    models: { seeker: `llama:${spec.seekerModelId}`, reasoner: `llama:${spec.reasonerModelId}` },
    seekerCaches: false,
    unpriced: 'a local model on this machine: no service price',
  }),
  // The context size is part of a record's model: the same file with another context is another configuration.
  recordIds: (spec) => {
    const context = spec.contextTokens !== undefined ? `?ctx=${spec.contextTokens}` : '';
    return { seeker: `llama:${path.basename(spec.seekerModelId)}${context}`, reasoner: `llama:${path.basename(spec.reasonerModelId)}${context}` };
  },
  // Refused in a Lambda (lambdaEnvIssues): nothing to build.
  lambdaDeps: () => undefined,
  lambdaEnvIssues: () => [{ variable: 'MODEL_SPEC', message: 'llama: models run only in local commands, not in Lambda' }],
};
