/** The `extractive` kind's traits (models/traits.ts): not a language model, no service, deployable anywhere. */
import type { ModelTraits, SpecSyntax } from '../port';

/** How the kind is written (models/spec.ts). */
export const syntax: SpecSyntax = {
  syntax: 'extractive',
  help: 'offline BM25 extractive reader, not an LLM: answers with sentences chosen by word overlap, and says so',
};

/** The offline extractive reader: word overlap, no model service, nothing to grant. */
export const traits = (): ModelTraits => ({
  languageModel: false,
  service: 'extractive: the offline extractive reader, no model service',
});
