/**
 * What a host that may not load a provider (the CDK app: infra/ never imports the providers, which
 * load the SDKs and node-llama-cpp) or that only describes a model (`doctor`, the page's info) needs
 * to know of a parsed model spec, one entry per kind. Each provider folder declares its kind's traits
 * in its own SDK-free `traits.ts`; this table lists them, keyed by the model kind, so a kind without
 * traits is a compile error (as in models/index.ts), and nothing outside models/ switches on a kind.
 * Loads nothing but shared/ and the port's types (the dependency-cruiser rules `infra-without-providers`,
 * `traits-without-providers`).
 */
import { ConfigurationError } from '../shared/errors';
import { toModelSpec, type ModelSpecInput } from './spec';
import { traits as bedrockTraits } from './bedrock/traits';
import { traits as extractiveTraits } from './extractive/traits';
import { traits as llamaTraits } from './llama/traits';
import { traits as openaiTraits } from './openai/traits';
import type { ModelKind, ModelTraits, SpecOf } from './port';

export type { ModelTraits } from './port';

/** The traits of each kind. */
const TRAITS: { readonly [K in ModelKind]: (spec: SpecOf<K>) => ModelTraits } = {
  extractive: extractiveTraits,
  bedrock: bedrockTraits,
  openai: openaiTraits,
  llama: llamaTraits,
};

/**
 * The traits of a spec (text parsed, or a parsed spec).
 * @throws ConfigurationError for invalid spec text (models/spec.ts), or a spec object of a kind the table does not list.
 */
export function modelTraits(spec: ModelSpecInput): ModelTraits {
  const parsed = toModelSpec(spec);
  if (!Object.hasOwn(TRAITS, parsed.kind))
    throw new ConfigurationError(`no model traits for the kind "${String(parsed.kind)}" (models/traits.ts lists ${Object.keys(TRAITS).join(', ')})`);
  return (TRAITS[parsed.kind] as (spec: SpecOf<ModelKind>) => ModelTraits)(parsed);
}
