/**
 * The offline extractive reader (not an LLM): the default `AgentModel` of local mode.
 * See shared/extractive/reader.ts.
 */
export { ExtractiveReader, DEFAULT_READER_OPTIONS, analysisKey, type ExtractiveReaderDeps, type ExtractiveReaderOptions } from './reader';
