/** The `openai:` kind's traits (models/traits.ts): a server outside AWS, whose base URL and key secret the stack deploys. */
import type { ModelTraits, SpecOf } from '../port';

/** An OpenAI-compatible server: no Bedrock grant; the stack needs its https base URL and, optionally, its key's secret. */
export const traits = (_spec: SpecOf<'openai'>): ModelTraits => ({
  languageModel: true,
  service: 'an OpenAI-compatible server (not an Amazon Bedrock model: nothing to check in AWS)',
  openAiServer: true,
});
