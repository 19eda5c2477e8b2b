/**
 * A process that installs the CLI's fatal-error handler, then has a library callback throw what
 * dynalite rethrows when LevelDB cannot write (a full disk): for test/integration/cli-faults.test.ts.
 * Usage: node -r tsx/cjs test/support/fatal-error.ts
 */
import { installFatalErrorHandler } from '../../local/cli/cli';

installFatalErrorHandler();
setTimeout(() => {
  throw Object.assign(new Error('IO error: /state/dynamodb/000005.log: No space left on device'), { code: 'LEVEL_IO_ERROR' });
}, 10);
