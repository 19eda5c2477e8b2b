// The package's ES module entry (package.json "exports" "import"): the same library as local/index.cjs,
// with its names as named exports (Node cannot see through `module.exports = require(...)`).
import library from './index.cjs';

export const {
  ask,
  survey,
  startLocalStack,
  resolveCorpus,
  parseRunRequest,
  NO_ANSWER,
  RUN_PHASES,
  ExtAgentsError,
  ConfigurationError,
  InvalidInputError,
  InvalidRunOptionsError,
  CostLimitExceededError,
  QuotaExceededError,
  EmptyCorpusError,
  ModelError,
  ModelConfigurationError,
  ModelThrottledError,
  ModelUnavailableError,
  ModelTimeoutError,
  ContextOverflowError,
  SeekingFailedError,
  StorageError,
  NotFoundError,
  NoEvidenceError,
} = library;
export default library;
