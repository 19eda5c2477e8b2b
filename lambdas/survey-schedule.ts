/**
 * Lambda entry points of the bulk survey state machine (infra/survey.ts): `planHandler`
 * (PlanSurveys: `surveys/schedule.json` -> one item per survey) and `indexHandler`
 * (WriteSurveyIndex: `surveys/index.json`). `STATE_MACHINE_ARN` is the survey state machine (its
 * executions are looked up for failed surveys). Clients at module scope; environment validated at
 * cold start.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { S3BlobStore } from './adapters/s3-blob-store';
import { logger, withLambdaContext } from './adapters/logging';
import { SfnRunLauncher } from './adapters/sfn-run-launcher';
import { loadJobsEnv } from './adapters/trigger-env';
import { makeSurveyScheduleHandlers } from './survey-handlers';

const env = loadJobsEnv();
const handlers = makeSurveyScheduleHandlers({
  blobs: new S3BlobStore(new S3Client({}), env.BUCKET_NAME),
  executions: new SfnRunLauncher(new SFNClient({}), env.STATE_MACHINE_ARN),
  logger,
});

export const planHandler = withLambdaContext(handlers.plan);
export const indexHandler = withLambdaContext(handlers.index);
