/** Lambda entry point of the `Seek` task (docs/ARCHITECTURE.md). */
import { awsDeps } from './adapters/aws';
import { makeHandlers } from './handlers';

export const handler = makeHandlers(awsDeps).seek;
