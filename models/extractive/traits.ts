/** The `extractive` kind's traits (models/traits.ts): not a language model, no service, deployable anywhere. */
import type { ModelTraits } from '../port';

/** The offline extractive reader: word overlap, no model service, nothing to grant. */
export const traits = (): ModelTraits => ({
  languageModel: false,
  service: 'extractive: the offline extractive reader, no model service',
  openAiServer: false,
});
