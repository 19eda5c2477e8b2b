/** The survey task (docs/SURVEY.md). */
export * from './types';
export * from './ports';
export { parseSurveyCorpus, type CorpusFileText, type ParsedCorpus } from './corpus';
export { chunkSources } from './chunking';
export { checkCitations, citedIds, countWords, lexicalSupport, DEFAULT_MIN_SUPPORT } from './citations';
export { ExtractiveSurveyModel, DEFAULT_EXTRACTIVE_SURVEY_OPTIONS, type ExtractiveSurveyOptions } from './extractive';
export { LlmSurveyModel, type LlmSurveyModelOptions } from './llm';
export { parseSurveyOptions, SurveyOptionsSchema, type SurveyOptionsInput } from './options';
export { NoEvidenceError } from './errors';
export * from './survey';
