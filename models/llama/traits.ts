/** The `llama:` kind's traits (models/traits.ts): in-process on the local machine only, so the AWS stack refuses it. */
import { ConfigurationError } from '../../shared/errors';
import { parseTokenCount } from '../../shared/token-count';
import type { ModelTraits, SpecOf, SpecSyntax } from '../port';

/** How the kind is written (models/spec.ts). */
export const syntax: SpecSyntax = {
  syntax: 'llama:<model.gguf>[,<reasonerModel.gguf>][?ctx=<tokens>]',
  help: 'a GGUF model run in-process on the CPU',
  optionalPackages: ['node-llama-cpp'],
};

/** A GGUF model run in-process: local commands only. */
export const traits = (_spec: SpecOf<'llama'>): ModelTraits => ({
  languageModel: true,
  service: 'a GGUF model in-process on this machine (not an Amazon Bedrock model: nothing to check in AWS)',
  cloudRefusal: 'llama: models run in-process on the local machine only (extagents ask/serve/job/survey/eval); deploy with a bedrock: or openai: model',
});

/** Smallest context size a `llama:` spec may ask for, tokens (a seeking prompt's instructions alone take about 700). */
export const MIN_LLAMA_CONTEXT_TOKENS = 1024;

/**
 * The GGUF paths after "llama:": one or two, comma-separated; the reasoner defaults to the seeker;
 * an optional `?ctx=<tokens>` suffix (shared/token-count.ts forms: 4096, 16k) sets the context size
 * of both. Only the form is checked here (the file, and a context above the model's training
 * context, are checked when the model loads: models/llama/llama.ts).
 * @throws ConfigurationError for zero, empty or more than two paths, or a malformed or too small `?ctx=`.
 */
export function parseLlamaModels(spec: string, rest: string, grammar: string): SpecOf<'llama'> {
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
    throw new ConfigurationError(`Invalid model spec "${spec}": expected one or two comma-separated GGUF file paths after "llama:" (${grammar})`);
  }
  const [seekerModelId, reasonerModelId = seekerModelId] = paths;
  return { kind: 'llama', seekerModelId, reasonerModelId, ...(contextTokens !== undefined ? { contextTokens } : {}) };
}
