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
import { ConfigurationError } from '../shared/errors';
import type { SpecSyntax } from './port';
import { parseBedrockModels, syntax as bedrockSyntax } from './bedrock/traits';
import { syntax as extractiveSyntax } from './extractive/traits';
import { parseLlamaModels, syntax as llamaSyntax } from './llama/traits';
import { parseOpenAiModels, syntax as openaiSyntax } from './openai/traits';

import type { ModelSpec, ModelSpecInput } from '../shared/model-spec';

export type { ModelSpec, ModelSpecInput } from '../shared/model-spec';

/** How each kind is written, in the order help texts list them (a kind missing here is a compile error). */
export const SPEC_SYNTAX: { readonly [K in ModelSpec['kind']]: SpecSyntax } = {
  extractive: extractiveSyntax,
  bedrock: bedrockSyntax,
  openai: openaiSyntax,
  llama: llamaSyntax,
};

/** The spec grammar as error messages give it: every kind's form, quoted. */
const SPEC_GRAMMAR = listed(Object.values(SPEC_SYNTAX).map((s) => `"${s.syntax}"`));

/** "a", "a or b", "a, b or c". */
export function listed(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
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
  const scheme = /^([a-z]+)\s*:/i.exec(trimmed);
  const kind = scheme?.[1].toLowerCase();
  if (scheme === null || kind === undefined || !Object.hasOwn(REST_PARSERS, kind)) {
    throw new ConfigurationError(`Invalid model spec "${spec}": expected ${SPEC_GRAMMAR}`);
  }
  return REST_PARSERS[kind as keyof typeof REST_PARSERS](spec, trimmed.slice(scheme[0].length), SPEC_GRAMMAR);
}

/**
 * The `kind:rest` splitter's table: each kind's own parser of what follows its colon, in its
 * provider folder's SDK-free traits (a kind missing here is a compile error).
 */
const REST_PARSERS: {
  readonly [K in Exclude<ModelSpec['kind'], 'extractive'>]: (spec: string, rest: string, grammar: string) => Extract<ModelSpec, { kind: K }>;
} = {
  bedrock: parseBedrockModels,
  openai: parseOpenAiModels,
  llama: parseLlamaModels,
};

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
