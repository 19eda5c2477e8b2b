/** Lambda entry point of the `Seek` task (docs/ARCHITECTURE.md). */
import { awsDeps } from './adapters/aws';
import { withLambdaContext } from './adapters/logging';
import { withMetrics } from './adapters/telemetry';
import { makeHandlers } from './handlers';

export const handler = withLambdaContext(withMetrics(makeHandlers(awsDeps).seek));
