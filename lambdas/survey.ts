/**
 * Lambda entry points of the survey state machine (infra/survey.ts, docs/SURVEY.md "On AWS"):
 * `prepareHandler` (SurveyPrepare), `stepsHandler` (Outline, PlanSections, SectionEvidence,
 * WriteSection: the payload's `step`), `assembleHandler` (SurveyAssemble). The seeking agents run in
 * the Seek function (lambdas/seek.ts, event `task: "survey"`). Clients at module scope (adapters/aws.ts),
 * environment validated at cold start, the survey roles created on first use.
 */
import { awsDeps, openAiApiKey, openAiOptions } from './adapters/aws';
import { loadEnv } from './adapters/env';
import { logger, withLambdaContext } from './adapters/logging';
import { surveyModel } from '../models';
import type { SurveyModel } from '../shared/survey/ports';
import { makeSurveyHandlers } from './survey-handlers';

const env = loadEnv();
let model: SurveyModel | undefined;
const handlers = makeSurveyHandlers({
  blobs: awsDeps.blobs,
  store: awsDeps.store,
  model: () => (model ??= surveyModel(env.MODEL_SPEC, { openai: openAiOptions, openaiApiKey: openAiApiKey })),
  logger,
  quota: awsDeps.quota,
  pricing: awsDeps.pricing,
});

export const prepareHandler = withLambdaContext(handlers.prepare);
export const stepsHandler = withLambdaContext(handlers.steps);
export const assembleHandler = withLambdaContext(handlers.assemble);
