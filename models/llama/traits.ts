/** The `llama:` kind's traits (models/traits.ts): in-process on the local machine only, so the AWS stack refuses it. */
import type { ModelTraits, SpecOf } from '../port';

/** A GGUF model run in-process: local commands only. */
export const traits = (_spec: SpecOf<'llama'>): ModelTraits => ({
  languageModel: true,
  service: 'a GGUF model in-process on this machine (not an Amazon Bedrock model: nothing to check in AWS)',
  cloudRefusal: 'llama: models run in-process on the local machine only (extagents ask/serve/job/survey/eval); deploy with a bedrock: or openai: model',
  openAiServer: false,
});
