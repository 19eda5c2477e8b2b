/** The `bedrock:` kind's traits (models/traits.ts): the Bedrock models each role invokes (the stack's grants, doctor's checks). */
import type { ModelTraits, SpecOf } from '../port';

/** Amazon Bedrock: each role invokes its model id (a foundation model or an inference profile). */
export const traits = (spec: SpecOf<'bedrock'>): ModelTraits => ({
  languageModel: true,
  service: 'Amazon Bedrock (Converse API)',
  bedrockModels: { seeker: spec.seekerModelId, reasoner: spec.reasonerModelId },
  openAiServer: false,
});
