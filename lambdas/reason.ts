/** Lambda entry point of the `Reason` task (docs/ARCHITECTURE.md). */
import { awsDeps } from './adapters/aws';
import { makeHandlers } from './handlers';

export const handler = makeHandlers(awsDeps).reason;
