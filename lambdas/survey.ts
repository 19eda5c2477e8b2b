/**
 * Lambda entry points of the survey state machine (infra/survey.ts, docs/SURVEY.md "On AWS"):
 * `prepareHandler` (SurveyPrepare), `stepsHandler` (Outline, PlanSections, SectionEvidence,
 * WriteSection: the payload's `step`), `assembleHandler` (SurveyAssemble). The seeking agents run in
 * the Seek function (lambdas/seek.ts, event `task: "survey"`). Clients at module scope and the
 * environment validated at cold start (adapters/aws.ts), the survey roles created on first use.
 */
import { awsDeps, containerModels, modelDeps, onFirstUse } from './adapters/aws';
import { logger, withLambdaContext } from './adapters/logging';
import { makeSurveyHandlers } from './survey-handlers';

const handlers = makeSurveyHandlers({
  blobs: awsDeps.blobs,
  store: awsDeps.store,
  model: onFirstUse(async () => (await containerModels()).survey(modelDeps)),
  logger,
  quota: awsDeps.quota,
  pricing: awsDeps.pricing,
});

export const prepareHandler = withLambdaContext(handlers.prepare);
export const stepsHandler = withLambdaContext(handlers.steps);
export const assembleHandler = withLambdaContext(handlers.assemble);
