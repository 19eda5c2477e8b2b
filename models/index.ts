/**
 * The model providers, one table keyed by the model kind (docs/ARCHITECTURE.md, "Models"): every
 * command, the Lambdas, the eval and the cost estimate reach a provider through the functions below,
 * and nothing outside models/ branches on a model kind for what a provider does. The table's type
 * (`{ [K in ModelKind]: … }`) makes a kind without a provider a compile error, never a silent default.
 *
 * Each provider's module is loaded on the first use of its kind (a `require` in the table), so a
 * command with the offline model never loads the Bedrock SDK nor node-llama-cpp
 * (test/integration/startup-loads.test.ts).
 */
import type { ModelPricing } from '../shared/cost';
import { ConfigurationError } from '../shared/errors';
import { toModelSpec, type ModelSpecInput } from './spec';
import type { AgentRole } from '../shared/types';
import type { HostDeps, LambdaEnvironment, LambdaEnvIssue, LambdaHost, LoadedModels, LoadOptions, ModelKind, ModelProvider, SpecOf } from './port';

export type { HostDeps, LambdaEnvironment, LambdaEnvIssue, LambdaHost, LoadedModel, LoadedModels, LoadOptions, ModelKind, ModelProvider, SpecOf } from './port';

/** The providers by kind, each loaded on first use (`satisfies`: each entry keeps its own dependencies' type for `ProviderDeps`). */
const PROVIDERS = {
  extractive: () => (require('./extractive') as typeof import('./extractive')).provider,
  bedrock: () => (require('./bedrock') as typeof import('./bedrock')).provider,
  openai: () => (require('./openai') as typeof import('./openai')).provider,
  llama: () => (require('./llama') as typeof import('./llama')).provider,
} satisfies { readonly [K in ModelKind]: () => ModelProvider<K, unknown> };

/** The dependencies provider `K` declares (the `D` of its `ModelProvider<K, D>`, in its folder). */
export type DepsOf<K extends ModelKind> = ReturnType<(typeof PROVIDERS)[K]> extends ModelProvider<K, infer D> ? D : never;

/**
 * What a host gives the providers' builders: each kind's own dependencies under its kind's key, typed
 * as its provider declares them (`bedrock: { client }`, `openai: { options, apiKey }`, `extractive:
 * { analyses }`), and the host's (`wrapSeeker`). Each provider reads only its key.
 */
export type ProviderDeps = HostDeps & { readonly [K in ModelKind]?: DepsOf<K> };

/**
 * The provider of a spec, with the spec parsed.
 * @throws ConfigurationError for invalid spec text (models/spec.ts), or a spec object of a kind the table does not list.
 */
export function providerOf(spec: ModelSpecInput): { provider: ModelProvider<ModelKind>; spec: SpecOf<ModelKind> } {
  const parsed = toModelSpec(spec);
  // Typed specs always have a provider (the table's type); a spec object built around the types (a
  // cast, JavaScript) gets an error, never another provider.
  const provider = Object.hasOwn(PROVIDERS, parsed.kind) ? (PROVIDERS[parsed.kind] as () => ModelProvider<ModelKind>)() : undefined;
  if (provider === undefined)
    throw new ConfigurationError(`no model provider for the kind "${String(parsed.kind)}" (models/index.ts lists ${Object.keys(PROVIDERS).join(', ')})`);
  return { provider, spec: parsed };
}

/** `ModelProvider.checkSettings` of the spec's provider: what this machine can check without a request or credentials. @throws as it. */
export async function checkModelSettings(spec: ModelSpecInput): Promise<void> {
  const { provider, spec: parsed } = providerOf(spec);
  await provider.checkSettings(parsed);
}

/**
 * Model access checked before a local stack starts (every command: ask, serve, job, survey), so a
 * missing setting is one clear error instead of every seeking agent failing: Bedrock needs AWS
 * credentials and a region; an OpenAI-compatible server needs its settings (OPENAI_BASE_URL, or
 * OPENAI_API_KEY for OpenAI's API); a `llama:` model's files are checked when it loads.
 * @throws ConfigurationError for a bad spec; ModelConfigurationError / ConfigurationError naming what is missing.
 */
export async function checkModelAccess(spec: ModelSpecInput): Promise<void> {
  const { provider, spec: parsed } = providerOf(spec);
  await provider.checkAccess(parsed);
}

/**
 * `ModelProvider.load` of the spec's provider: read an in-process model into memory (once per
 * process and file; nothing for a service) and return the spec's builders (chat models, agents,
 * survey roles) with its context size. The only way to build a spec's models.
 * @throws ConfigurationError for an invalid spec or a bad model file; the provider's load errors.
 */
export async function loadModels(spec: ModelSpecInput, options: LoadOptions = {}): Promise<LoadedModels<ProviderDeps>> {
  const { provider, spec: parsed } = providerOf(spec);
  // Each provider reads its own key of the host's deps (DepsFor<K, D>), a part of ProviderDeps.
  return (await provider.load(parsed, options)) as LoadedModels<ProviderDeps>;
}

/** How the cost estimate prices a spec (shared/cost.ts `estimateRun`, `priceEstimate`). @throws ConfigurationError for invalid spec text. */
export function modelPricing(spec: ModelSpecInput): ModelPricing {
  const { provider, spec: parsed } = providerOf(spec);
  return provider.pricing(parsed);
}

/** The model of each role as the eval's records name it. @throws ConfigurationError for invalid spec text. */
export function recordModelIds(spec: ModelSpecInput): Record<AgentRole, string> {
  const { provider, spec: parsed } = providerOf(spec);
  return provider.recordIds(parsed);
}

/** What a Lambda environment lacks for a spec (lambdas/adapters/env.ts). @throws ConfigurationError for invalid spec text. */
export function lambdaEnvIssues(spec: ModelSpecInput, env: LambdaEnvironment): LambdaEnvIssue[] {
  const { provider, spec: parsed } = providerOf(spec);
  return provider.lambdaEnvIssues(parsed, env);
}

/**
 * The dependencies a Lambda container gives the builders of a spec: its provider's own, built from
 * the function's environment (`ModelProvider.lambdaDeps`: a traced Bedrock client factory; an
 * OpenAI-compatible server's base URL and key reader), under its kind's key. Called once per
 * container, at cold start (lambdas/adapters/aws.ts).
 * @throws ConfigurationError for invalid spec text.
 */
export function lambdaProviderDeps(spec: ModelSpecInput, env: LambdaEnvironment, host: LambdaHost): ProviderDeps {
  const { provider, spec: parsed } = providerOf(spec);
  const own = provider.lambdaDeps(parsed, env, host);
  return own === undefined ? {} : ({ [parsed.kind]: own } as ProviderDeps);
}
