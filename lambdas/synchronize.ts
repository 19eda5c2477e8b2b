/** Lambda entry point of the `Synchronize` task (docs/ARCHITECTURE.md). */
import { awsDeps } from './adapters/aws';
import { makeHandlers } from './handlers';

export const handler = makeHandlers(awsDeps).synchronize;
