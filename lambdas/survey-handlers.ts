/**
 * The survey state machine's Lambda handlers (infra/survey.ts) as factories over ports, so the same
 * code runs in AWS (lambdas/survey*.ts bind S3, DynamoDB, Bedrock) and locally. Each validates its
 * event (InvalidInputError naming the field), calls one step of shared/survey/workflow.ts or
 * shared/survey/schedule.ts, and returns a small result; errors keep their class `name` for
 * Retry/Catch.
 *
 * Events:
 *   prepare    the survey execution input `{surveyId, topic, corpus, options?, date?}`
 *   steps      `{step: "outline" | "planSections", state}` or
 *              `{step: "sectionEvidence" | "writeSection", state, section}` (one function, the
 *              reasoning agent's survey roles; the payload names the step)
 *   assemble   the survey state
 *   plan       the bulk execution input `{date?}`
 *   index      PlanSurveys' output `{bulkId, date, itemsKey, surveys}`
 */
import { z } from 'zod';
import type { ExecutionLookup } from '../shared/executions';
import { logged, type HandlerLogger } from './logged';
import { parseEvent } from '../shared/pipeline/state';
import type { BlobStore, MessageStore } from '../shared/ports';
import type { SurveyModel } from '../shared/survey/ports';
import type { ModelQuota } from '../shared/types';
import type { ModelPricing } from '../shared/cost';
import { planSurveys, writeSurveyIndex, type BulkPlan } from '../shared/survey/schedule';
import {
  SurveyExecutionInputSchema,
  SurveyStateSchema,
  assembleSurveyRun,
  outlineSurveyStep,
  planSurveySections,
  prepareSurvey,
  surveySectionEvidence,
  writeSurveySection,
  type SurveyOutput,
  type SurveyState,
} from '../shared/survey/workflow';

/** Steps of the survey function (the `step` of its payload). */
export const SURVEY_STEPS = ['outline', 'planSections', 'sectionEvidence', 'writeSection'] as const;

const StepEventSchema = z.discriminatedUnion('step', [
  z.object({ step: z.literal('outline'), state: SurveyStateSchema }).strict(),
  z.object({ step: z.literal('planSections'), state: SurveyStateSchema }).strict(),
  z.object({ step: z.literal('sectionEvidence'), state: SurveyStateSchema, section: z.number().int().min(0) }).strict(),
  z.object({ step: z.literal('writeSection'), state: SurveyStateSchema, section: z.number().int().min(0) }).strict(),
]);

const BulkPlanSchema = z.object({ bulkId: z.string().min(1), date: z.string().min(1), itemsKey: z.string().min(1), surveys: z.number().int().min(0) }).strict();

/** Ports of the survey handlers. */
export interface SurveyHandlerDeps {
  blobs: BlobStore;
  store: MessageStore;
  /**
   * The outline and writer roles, created on first use: by the steps, which call them, and by
   * Assemble, which only reads their description for the survey's metadata (Prepare uses none).
   */
  model: () => Promise<SurveyModel>;
  now?: () => Date;
  /** Structured logger (Powertools in AWS); absent = no logging (local runs). Same wrapper as the QA handlers (`logged`). */
  logger?: HandlerLogger;
  /** The deployment's quota of the seeking model (CDK context; shared/quota.ts), which a survey's options override. */
  quota?: ModelQuota;
  /** How the seeking model is priced (models/ `modelPricing`): SurveyPrepare prices the first seeking round (`SurveySeekingEstimate`). */
  pricing?: ModelPricing;
}

/** The survey state machine's handlers. */
export interface SurveyHandlers {
  prepare(event: unknown): Promise<SurveyState>;
  /** Outline / PlanSections return the state; SectionEvidence / WriteSection a small per-section result. */
  steps(event: unknown): Promise<SurveyState | { section: number }>;
  assemble(event: unknown): Promise<SurveyOutput>;
}

/** Build the survey handlers over the given adapters. */
export function makeSurveyHandlers(deps: SurveyHandlerDeps): SurveyHandlers {
  const { logger } = deps;
  return {
    prepare: logged(logger, 'SurveyPrepare', 'info', async (event) => prepareSurvey(parseEvent(SurveyExecutionInputSchema, event, 'SurveyPrepare'), deps)),
    steps: logged(logger, 'SurveyStep', 'info', async (event) => {
      const parsed = parseEvent(StepEventSchema, event, 'Survey');
      switch (parsed.step) {
        case 'outline':
          return outlineSurveyStep(parsed.state, deps);
        case 'planSections':
          return planSurveySections(parsed.state, deps);
        case 'sectionEvidence':
          return surveySectionEvidence(parsed, deps);
        case 'writeSection':
          return writeSurveySection(parsed, deps);
      }
    }),
    assemble: logged(logger, 'SurveyAssemble', 'info', async (event) => {
      const state = parseEvent(SurveyStateSchema, event, 'SurveyAssemble');
      const model = await deps.model();
      return assembleSurveyRun(state, { ...deps, modelDescription: model.description, extractive: model.extractive });
    }),
  };
}

/** The bulk state machine's handlers. */
export interface SurveyScheduleHandlers {
  plan(event: unknown): Promise<BulkPlan>;
  index(event: unknown): Promise<{ indexKey: string; succeeded: number; failed: number }>;
}

/** Build the bulk handlers (PlanSurveys, WriteSurveyIndex). */
export function makeSurveyScheduleHandlers(deps: {
  blobs: BlobStore;
  executions: ExecutionLookup;
  now?: () => Date;
  logger?: HandlerLogger;
}): SurveyScheduleHandlers {
  return {
    plan: logged(deps.logger, 'PlanSurveys', 'info', async (event) => planSurveys(event, deps)),
    index: logged(deps.logger, 'WriteSurveyIndex', 'info', async (event) => writeSurveyIndex(parseEvent(BulkPlanSchema, event, 'WriteSurveyIndex'), deps)),
  };
}
