/**
 * Model specs: which agent model a run uses, as one string (CLI flag, environment variable, CDK
 * context).
 *
 *   extractive                          the offline extractive reader (shared/extractive), no model calls
 *   bedrock:<modelId>                   one Amazon Bedrock model id for both agent roles
 *   bedrock:<seekerId>,<reasonerId>     seeking agent model, reasoning agent model (heterogeneous
 *                                       deployment: a small seeker, a strong reasoner; paper section 4)
 *   openai:<model>[,<reasonerModel>]    an OpenAI-compatible chat-completions server (vLLM, Ollama,
 *                                       llama.cpp, …) at OPENAI_BASE_URL; model names as the server
 *                                       knows them (`llama3.1:8b`, `meta-llama/Llama-3.1-8B-Instruct`)
 *   llama:<path.gguf>[,<reasonerPath>][?ctx=<tokens>]
 *                                       a GGUF model run in-process on the CPU with node-llama-cpp
 *                                       (local commands only: ask, serve, job, survey, eval); the
 *                                       paths may not contain a comma or "?"; `?ctx=` sets the context
 *                                       size per sequence (model tokens, e.g. 4096, 16k = 16,000; up
 *                                       to the model's training context, checked when it loads;
 *                                       default the smaller of that and 8,192)
 *
 * A model id is a Bedrock foundation-model id (`meta.llama3-1-8b-instruct-v1:0`) or the id of a
 * system-defined cross-region inference profile: a geographic prefix followed by the foundation-model
 * id (`us.meta.llama3-1-8b-instruct-v1:0`). Many models (Llama 3.1/3.3, Claude 3.5 v2 and later,
 * Nova 2) can be invoked on demand only through an inference profile; invoking the bare
 * foundation-model id then fails with "on-demand throughput isn't supported".
 * Sources: https://docs.aws.amazon.com/bedrock/latest/userguide/cross-region-inference.html and
 * https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html
 *
 * ARNs are rejected on purpose: the CDK stack scopes the Lambda's IAM permissions from these ids
 * (foundation model and inference profile ARNs are derived from them).
 */
import { ConfigurationError } from '../errors';
import { parseTokenCount } from '../token-count';

/** A parsed model spec. */
export type ModelSpec =
  | { kind: 'extractive' }
  | { kind: 'bedrock'; seekerModelId: string; reasonerModelId: string }
  | { kind: 'openai'; seekerModelId: string; reasonerModelId: string }
  /**
   * `seekerModelId` / `reasonerModelId` are GGUF file paths as given (relative to the working
   * directory); `contextTokens` the context size per sequence (`?ctx=`), tokens of the model's
   * tokenizer, absent for the provider's default.
   */
  | { kind: 'llama'; seekerModelId: string; reasonerModelId: string; contextTokens?: number };

/**
 * Geographic prefixes of system-defined cross-region inference profile ids, per the Bedrock user
 * guide ("Supported Regions and models for inference profiles"): `us`, `us-gov`, `eu`, `apac`,
 * `jp`, `au`, `ca` and `global` (all commercial Regions).
 */
export const INFERENCE_PROFILE_PREFIXES = ['us', 'us-gov', 'eu', 'apac', 'jp', 'au', 'ca', 'global'] as const;

/** `provider.model[-…][:version[:variant]]`, lower case, e.g. `anthropic.claude-v2:1:200k`. */
const FOUNDATION_MODEL_ID = /^[a-z0-9][a-z0-9_-]*\.[a-z0-9][a-z0-9_-]*(?::[a-z0-9._-]+)*$/;

const SPEC_GRAMMAR =
  '"extractive", "bedrock:<seekerModelId>[,<reasonerModelId>]", "openai:<model>[,<reasonerModel>]" or "llama:<model.gguf>[,<reasonerModel.gguf>][?ctx=<tokens>]"';

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
function checkModelId(id: string, spec: string): void {
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
 * Parse a model spec (grammar in the file comment). Surrounding whitespace is ignored; the
 * reasoning agent's model defaults to the seeking agent's.
 * @param spec e.g. `extractive`, `bedrock:us.meta.llama3-1-8b-instruct-v1:0`,
 *   `bedrock:us.meta.llama3-1-8b-instruct-v1:0,us.meta.llama3-3-70b-instruct-v1:0`.
 * @throws ConfigurationError for another scheme, an empty, malformed or ARN model id, or more than
 *   two ids, with a message that shows the expected grammar.
 */
export function parseModelSpec(spec: string): ModelSpec {
  const trimmed = spec.trim();
  if (trimmed === 'extractive') return { kind: 'extractive' };
  const openai = /^openai\s*:/i.exec(trimmed);
  if (openai) return parseOpenAiModels(spec, trimmed.slice(openai[0].length));
  const llama = /^llama\s*:/i.exec(trimmed);
  if (llama) return parseLlamaModels(spec, trimmed.slice(llama[0].length));
  const scheme = /^bedrock\s*:/i.exec(trimmed);
  if (!scheme) {
    throw new ConfigurationError(`Invalid model spec "${spec}": expected ${SPEC_GRAMMAR}`);
  }
  const ids = trimmed
    .slice(scheme[0].length)
    .split(',')
    .map((id) => id.trim());
  if (ids.length > 2 || ids.some((id) => id === '')) {
    throw new ConfigurationError(`Invalid model spec "${spec}": expected one or two comma-separated Bedrock model ids after "bedrock:" (${SPEC_GRAMMAR})`);
  }
  for (const id of ids) checkModelId(id, spec);
  const [seekerModelId, reasonerModelId = seekerModelId] = ids;
  return { kind: 'bedrock', seekerModelId, reasonerModelId };
}

/** OpenAI-compatible model names: no whitespace, no comma (the separator); anything else servers use (`/`, `:`, `.`). */
const OPENAI_MODEL_NAME = /^[^\s,]+$/;

/**
 * The model names after "openai:": one or two, comma-separated; the reasoner defaults to the seeker.
 * @throws ConfigurationError for zero, empty, more than two, or whitespace-containing names.
 */
function parseOpenAiModels(spec: string, rest: string): ModelSpec {
  const names = rest.split(',').map((name) => name.trim());
  if (names.length > 2 || names.some((name) => name === '')) {
    throw new ConfigurationError(`Invalid model spec "${spec}": expected one or two comma-separated model names after "openai:" (${SPEC_GRAMMAR})`);
  }
  for (const name of names) {
    if (!OPENAI_MODEL_NAME.test(name)) {
      throw new ConfigurationError(`Invalid model spec "${spec}": "${name}" is not a model name (no spaces)`);
    }
  }
  const [seekerModelId, reasonerModelId = seekerModelId] = names;
  return { kind: 'openai', seekerModelId, reasonerModelId };
}

/** Smallest context size a `llama:` spec may ask for, tokens (a seeking prompt's instructions alone take about 700). */
export const MIN_LLAMA_CONTEXT_TOKENS = 1024;

/**
 * The GGUF paths after "llama:": one or two, comma-separated; the reasoner defaults to the seeker;
 * an optional `?ctx=<tokens>` suffix (shared/token-count.ts forms: 4096, 16k) sets the context size
 * of both. Only the form is checked here (the file, and a context above the model's training
 * context, are checked when the model loads: models/llama/llama.ts).
 * @throws ConfigurationError for zero, empty or more than two paths, or a malformed or too small `?ctx=`.
 */
function parseLlamaModels(spec: string, rest: string): ModelSpec {
  let contextTokens: number | undefined;
  const query = rest.indexOf('?');
  if (query >= 0) {
    const option = rest.slice(query + 1).trim();
    const match = /^ctx\s*=\s*(\S+)$/i.exec(option);
    const value = match ? parseTokenCount(match[1]) : undefined;
    if (value === undefined) {
      throw new ConfigurationError(`Invalid model spec "${spec}": after "?" expected ctx=<tokens> (the context size, e.g. ?ctx=4096), got "${option}"`);
    }
    if (value < MIN_LLAMA_CONTEXT_TOKENS) {
      throw new ConfigurationError(`Invalid model spec "${spec}": ctx=${value} is below the smallest context, ${MIN_LLAMA_CONTEXT_TOKENS} tokens`);
    }
    contextTokens = value;
    rest = rest.slice(0, query);
  }
  const paths = rest.split(',').map((p) => p.trim());
  if (paths.length > 2 || paths.some((p) => p === '')) {
    throw new ConfigurationError(`Invalid model spec "${spec}": expected one or two comma-separated GGUF file paths after "llama:" (${SPEC_GRAMMAR})`);
  }
  const [seekerModelId, reasonerModelId = seekerModelId] = paths;
  return { kind: 'llama', seekerModelId, reasonerModelId, ...(contextTokens !== undefined ? { contextTokens } : {}) };
}

/** A model spec as text (to parse) or already parsed: functions along one command take either, so the text is parsed once. */
export type ModelSpecInput = string | ModelSpec;

/**
 * The parsed spec: a parsed one unchanged, text parsed with {@link parseModelSpec}.
 * @throws ConfigurationError for invalid text (see parseModelSpec).
 */
export function toModelSpec(spec: ModelSpecInput): ModelSpec {
  return typeof spec === 'string' ? parseModelSpec(spec) : spec;
}

/**
 * The spec's text (`extractive`, `llama:<seeker>[,<reasoner>][?ctx=<tokens>]`, …), as a command
 * prints it; the reasoner only when it differs. `parseModelSpec` of it gives the same spec.
 */
export function formatModelSpec(spec: ModelSpec): string {
  if (spec.kind === 'extractive') return 'extractive';
  const context = spec.kind === 'llama' && spec.contextTokens !== undefined ? `?ctx=${spec.contextTokens}` : '';
  return `${spec.kind}:${spec.seekerModelId}${spec.reasonerModelId !== spec.seekerModelId ? `,${spec.reasonerModelId}` : ''}${context}`;
}

/**
 * The default model spec of the local commands (`ask`, `serve`, `job`, `survey`, `eval`, the library):
 * the offline extractive reader, which needs no model, key or network.
 */
export const DEFAULT_LOCAL_MODEL_SPEC = 'extractive';

/**
 * The default model spec of the AWS stack (CDK context `model`) and of `extagents doctor`: Meta Llama
 * 3.1 8B seeking agents and a Llama 3.3 70B reasoning agent, both through US cross-region inference
 * profiles.
 */
export const DEFAULT_MODEL_SPEC = 'bedrock:us.meta.llama3-1-8b-instruct-v1:0,us.meta.llama3-3-70b-instruct-v1:0';

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
