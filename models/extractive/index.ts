/**
 * The `extractive` provider: the offline extractive reader (a deterministic BM25 sentence reader, not
 * an LLM; its algorithm is domain code in shared/extractive/ and shared/survey/extractive.ts, which
 * this folder wraps). No settings, no access, nothing to load, no chat model, no model calls.
 */
import { ExtractiveReader } from '../../shared/extractive';
import { ExtractiveSurveyModel } from '../../shared/survey/extractive';
import type { BlobStore } from '../../shared/ports';
import type { ModelProvider } from '../port';

/** The extractive reader's dependencies (`ProviderDeps.extractive`). */
export interface ExtractiveDeps {
  /** Where the reader keeps the sentence analysis of the chunks it read (the local bucket: warm runs skip it). */
  analyses?: BlobStore;
}

/** The extractive reader as a model provider. */
export const provider: ModelProvider<'extractive', ExtractiveDeps> = {
  kind: 'extractive',
  checkSettings: async () => undefined,
  checkAccess: async () => undefined,
  load: async () => ({
    chat: () => undefined,
    agents: (deps = {}) => new ExtractiveReader({}, { analyses: deps.extractive?.analyses }),
    survey: () => new ExtractiveSurveyModel(),
  }),
  // The price table lists `extractive` at zero.
  pricing: () => ({ models: { seeker: 'extractive', reasoner: 'extractive' }, seekerCaches: false }),
  recordIds: () => ({ seeker: 'extractive', reasoner: 'extractive' }),
  // The reader keeps no analyses in a Lambda (no local bucket): nothing to build.
  lambdaDeps: () => undefined,
  lambdaEnvIssues: () => [],
};
