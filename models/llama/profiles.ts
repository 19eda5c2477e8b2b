/**
 * Per-model defaults of `llama:` models, chosen by measurement (docs/EVAL.md, "Defaults for a model
 * that can answer"): how each agent replies and the run options a model reads best with. A model is
 * matched by its GGUF metadata (`general.basename`); a model no profile names gets the default
 * profile, measured with the reference model (Qwen2.5-Coder-0.5B-Instruct, scripts/fetch-reference-model.sh),
 * the only measurement of a model that can answer. The test model (SmolLM2-135M) keeps the defaults
 * measured with it before (docs/EVAL.md, "Fidelity").
 */
import type { ReasonerReply, SeekerReply } from '../../shared/llm/prompts';
import type { ModelRunDefaults } from '../port';

/** The defaults of one model family. */
export interface LlamaProfile {
  /** The family, as the docs name it. */
  name: string;
  /** How the seeking agent replies (shared/llm/prompts.ts `SEEKER_REPLIES`). */
  seekerReply: SeekerReply;
  /** How the reasoning agent replies (`REASONER_REPLIES`). */
  reasonerReply: ReasonerReply;
  /**
   * Run options this model reads best with (over the context-fitted ones, models/context.ts): a
   * fixed chunk size in tokens (a small model reads a short passage reliably whatever its
   * context), KAR's first k. Empty: the context-fitted defaults.
   */
  runDefaults: ModelRunDefaults;
}

/**
 * The default profile (any `llama:` model no other profile names), measured with the reference model
 * on HotpotQA training questions padded to 16k tokens (bench/tune-llama.ts; docs/EVAL.md): the
 * prose seeker (it cited sentences 1-4 of every chunk with numbered sentences), 500-token chunks (it
 * answered from a 500-token passage and not from a 1,600-token one), the prose reasoner, KAR from k = 1.
 */
export const DEFAULT_LLAMA_PROFILE: LlamaProfile = {
  name: 'default (measured with Qwen2.5-Coder-0.5B-Instruct)',
  seekerReply: 'prose',
  reasonerReply: 'prose',
  runDefaults: { chunkTokens: 500 },
};

/** SmolLM2 (the test model): the defaults measured with it (docs/EVAL.md, "Fidelity"). */
export const SMOLLM2_PROFILE: LlamaProfile = {
  name: 'SmolLM2',
  seekerReply: 'json',
  reasonerReply: 'prose',
  runDefaults: {},
};

/** The profiles by GGUF `general.basename` (lower case). */
const PROFILES_BY_BASENAME: Readonly<Record<string, LlamaProfile>> = { smollm2: SMOLLM2_PROFILE };

/**
 * The profile of a model from its GGUF metadata.
 * @param general the file's `general` metadata (`basename`, `name`), as node-llama-cpp reads it.
 */
export function llamaProfileFor(general: { basename?: unknown; name?: unknown } | undefined): LlamaProfile {
  const basename = typeof general?.basename === 'string' ? general.basename.toLowerCase() : '';
  return PROFILES_BY_BASENAME[basename] ?? DEFAULT_LLAMA_PROFILE;
}
