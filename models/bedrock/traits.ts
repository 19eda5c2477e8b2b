/**
 * The `bedrock:` kind's SDK-free knowledge: its model ids (foundation models and cross-region
 * inference profiles) as the spec grammar takes them (models/spec.ts), which of them cache prompts,
 * and its traits (models/traits.ts): the Bedrock models each role invokes (the stack's grants,
 * doctor's checks). Loads no SDK: the CDK app reads it.
 *
 * Sources: https://docs.aws.amazon.com/bedrock/latest/userguide/cross-region-inference.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html
 */
import { ConfigurationError } from '../../shared/errors';
import type { ModelTraits, SpecOf, SpecSyntax } from '../port';

/** How the kind is written (models/spec.ts). */
export const syntax: SpecSyntax = {
  syntax: 'bedrock:<seekerModelId>[,<reasonerModelId>]',
  help: 'Amazon Bedrock Converse API; needs AWS credentials',
};

/** Amazon Bedrock: each role invokes its model id (a foundation model or an inference profile). */
export const traits = (spec: SpecOf<'bedrock'>): ModelTraits => ({
  languageModel: true,
  service: 'Amazon Bedrock (Converse API)',
  invokedModels: { seeker: spec.seekerModelId, reasoner: spec.reasonerModelId },
});

/**
 * Geographic prefixes of system-defined cross-region inference profile ids, per the Bedrock user
 * guide ("Supported Regions and models for inference profiles"): `us`, `us-gov`, `eu`, `apac`,
 * `jp`, `au`, `ca` and `global` (all commercial Regions).
 */
export const INFERENCE_PROFILE_PREFIXES = ['us', 'us-gov', 'eu', 'apac', 'jp', 'au', 'ca', 'global'] as const;

/** `provider.model[-…][:version[:variant]]`, lower case, e.g. `anthropic.claude-v2:1:200k`. */
const FOUNDATION_MODEL_ID = /^[a-z0-9][a-z0-9_-]*\.[a-z0-9][a-z0-9_-]*(?::[a-z0-9._-]+)*$/;

/**
 * True when `id` is a system-defined cross-region inference profile id: a known geographic prefix,
 * a dot, then a foundation-model id (`us.meta.llama3-1-8b-instruct-v1:0`, `global.anthropic.…`).
 * @param id a Bedrock model id (not an ARN).
 */
export function isInferenceProfileId(id: string): boolean {
  const dot = id.indexOf('.');
  if (dot <= 0) return false;
  const prefix = id.slice(0, dot);
  return (INFERENCE_PROFILE_PREFIXES as readonly string[]).includes(prefix) && FOUNDATION_MODEL_ID.test(id.slice(dot + 1));
}

/**
 * The foundation-model id a model id refers to: the id without its inference-profile prefix
 * (`us.meta.llama3-1-8b-instruct-v1:0` -> `meta.llama3-1-8b-instruct-v1:0`); other ids unchanged.
 */
export function foundationModelIdOf(id: string): string {
  return isInferenceProfileId(id) ? id.slice(id.indexOf('.') + 1) : id;
}

/**
 * Validate one Bedrock model id of a spec.
 * @throws ConfigurationError naming the id and the expected form.
 */
export function checkBedrockModelId(id: string, spec: string): void {
  if (id.startsWith('arn:')) {
    throw new ConfigurationError(`Invalid model spec "${spec}": "${id}" is an ARN; give a model id such as "us.meta.llama3-1-8b-instruct-v1:0"`);
  }
  const prefix = id.slice(0, Math.max(0, id.indexOf('.')));
  const looksLikeProfile = (INFERENCE_PROFILE_PREFIXES as readonly string[]).includes(prefix);
  if (looksLikeProfile ? !isInferenceProfileId(id) : !FOUNDATION_MODEL_ID.test(id)) {
    throw new ConfigurationError(
      `Invalid model spec "${spec}": "${id}" is not a Bedrock model id; expected a foundation-model id such as ` +
        `"meta.llama3-1-8b-instruct-v1:0" or an inference profile id such as "us.meta.llama3-1-8b-instruct-v1:0"`,
    );
  }
}

/**
 * Does the model cache prompts in the Converse API (`cachePoint` content blocks)? The Anthropic
 * Claude and Amazon Nova families do; a cache point sent to another model is rejected, so the Bedrock
 * adapter sends one only to these, and the cost estimate prices their chunk tokens as cache writes. Ids as given (a cross-region profile id names its base model after the prefix).
 * Source: https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html
 */
export function supportsPromptCaching(modelId: string): boolean {
  const base = foundationModelIdOf(modelId);
  return base.startsWith('anthropic.claude-') || base.startsWith('amazon.nova-');
}

/**
 * The Bedrock model ids after "bedrock:" (models/spec.ts): one or two, comma-separated; the
 * reasoner defaults to the seeker.
 * @param grammar the whole spec grammar, for the message.
 * @throws ConfigurationError for more than two or empty ids, an ARN or a malformed id.
 */
export function parseBedrockModels(spec: string, rest: string, grammar: string): SpecOf<'bedrock'> {
  const ids = rest.split(',').map((id) => id.trim());
  if (ids.length > 2 || ids.some((id) => id === '')) {
    throw new ConfigurationError(`Invalid model spec "${spec}": expected one or two comma-separated Bedrock model ids after "bedrock:" (${grammar})`);
  }
  for (const id of ids) checkBedrockModelId(id, spec);
  const [seekerModelId, reasonerModelId = seekerModelId] = ids;
  return { kind: 'bedrock', seekerModelId, reasonerModelId };
}
