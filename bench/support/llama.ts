/**
 * The benches' `--model` for an in-process model: a `llama:` spec parsed and checked.
 */
import { toModelSpec } from '../../models/spec';
import type { SpecOf } from '../../models/port';
import { loadLlamaModels, type LlamaModels, type LlamaOptions } from '../../models/llama/llama';
import { ConfigurationError, ModelConfigurationError } from '../../shared/errors';
import { usageError } from './args';

/**
 * Parse a bench's `--model` as a `llama:` spec (models/llama/llama.ts `loadLlamaModels` takes it parsed).
 * @param usage the bench's usage text, printed with the error.
 * @returns never on a spec of another kind or invalid text: a usage error (exit 2).
 */
export function llamaSpecArg(text: string, usage: string): SpecOf<'llama'> {
  let parsed;
  try {
    parsed = toModelSpec(text);
  } catch (error) {
    return usageError(usage, `--model: ${(error as Error).message}`);
  }
  if (parsed.kind !== 'llama') return usageError(usage, `--model: this bench runs a llama: model in-process (got ${text})`);
  return parsed;
}

/**
 * Load a bench's `llama:` model (models/llama/llama.ts `loadLlamaModels`), a model file that is
 * missing, not GGUF, too large or otherwise refused at load being a usage error (exit 2, one line)
 * rather than a stack trace.
 * @param usage the bench's usage text, printed with the error.
 * @throws what `loadLlamaModels` throws besides ConfigurationError and ModelConfigurationError.
 */
export async function loadBenchLlama(spec: SpecOf<'llama'>, options: LlamaOptions, usage: string): Promise<LlamaModels> {
  try {
    return await loadLlamaModels(spec, options);
  } catch (error) {
    if (error instanceof ConfigurationError || error instanceof ModelConfigurationError) return usageError(usage, `--model: ${error.message}`);
    throw error;
  }
}
