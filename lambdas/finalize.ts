/** Lambda entry point of the `Finalize` task (docs/ARCHITECTURE.md). */
import { awsDeps } from './adapters/aws';
import { makeHandlers } from './handlers';

export const handler = makeHandlers(awsDeps).finalize;
