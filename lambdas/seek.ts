/** Lambda entry point of the `Seek` task (docs/ARCHITECTURE.md). */
import { awsDeps } from './adapters/aws';
import { withLambdaContext } from './adapters/logging';
import { makeHandlers } from './handlers';

export const handler = withLambdaContext(makeHandlers(awsDeps).seek);
