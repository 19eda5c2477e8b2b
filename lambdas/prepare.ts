/** Lambda entry point of the `Prepare` task (docs/ARCHITECTURE.md). */
import { awsDeps } from './adapters/aws';
import { withLambdaContext } from './adapters/logging';
import { withMetrics } from './adapters/telemetry';
import { makeHandlers } from './handlers';

export const handler = withLambdaContext(withMetrics(makeHandlers(awsDeps).prepare));
