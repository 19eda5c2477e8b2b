/**
 * Surveys on AWS (docs/SURVEY.md "On AWS"): the survey state machine, the bulk state machine over
 * `surveys/schedule.json`, and an optional EventBridge Scheduler schedule that starts the bulk one.
 *
 * Survey state machine (Standard, JSONPath; state = `SurveyState` of shared/survey/workflow.ts: ids,
 * keys and counts only):
 *
 *   SurveyPrepare -> SeekSources (Distributed Map over runs/<id>/manifest.json; the EXISTING Seek
 *   function, item `{runId, round, chunk, task: "survey"}`) -> Outline (one outline KAR step) ->
 *   Outlined? (outlineKey set -> PlanSections | otherwise -> Outline, k doubled) -> PlanSections ->
 *   SectionRounds? (syncItems > 0 -> SeekSections | otherwise -> Sections) -> SeekSections
 *   (Distributed Map over runs/<id>/survey/sync-manifest.json: every thin section's synchronized
 *   round, the same Seek function) -> Sections (Map over the outline's sections, MaxConcurrency =
 *   the survey's sectionConcurrency: SectionEvidence) -> WriteSections (Map, one section at a time
 *   in outline order: WriteSection, each told the sentences already written) -> SurveyAssemble
 *   (Markdown + metadata to surveys/<topic-slug>/<date>/).
 *   Errors: SurveyPrepare's InvalidInputError / ConfigurationError / EmptyCorpusError /
 *   NotFoundError / QuotaExceededError -> SurveyRejected; a seeking Map Run over its tolerated failures (or failed) ->
 *   SeekingFailed; Outline's NoEvidenceError -> NoEvidence. Transient model errors are retried as
 *   in the QA workflow (MODEL_RETRY).
 *
 * Writing is a separate Map with MaxConcurrency 1: the in-process survey writes sections in outline
 * order, each writer told the sentences already written so sections do not repeat each other; a
 * concurrent writer would lose that. The model-heavy part that benefits from concurrency, the
 * synchronized seeking rounds, runs in SeekSections under the survey's `concurrency`.
 *
 * Functions: the survey steps run in new functions (not the Reason function with a task flag): they
 * need the survey roles (outline, writer: `SurveyModel`), a different read set (sources, outline,
 * sections) and, for Assemble, write access to `surveys/` that the QA functions must not have.
 *   SurveyPrepareFunction   reads corpora/*, writes runs/*
 *   SurveyStepsFunction     reads/writes runs/*, reads the table, invokes the reasoner model
 *   SurveyAssembleFunction  reads runs/* and the table, writes surveys/*
 *   PlanSurveysFunction     reads surveys/schedule.json, writes runs/_surveys/*
 *   WriteSurveyIndexFunction reads runs/_surveys/* and surveys/*, writes surveys/index.json,
 *                           DescribeExecution on survey executions
 *
 * Bulk state machine: PlanSurveys -> RunSurveys (Distributed Map over the planned items,
 * MaxConcurrency = surveyConcurrency; RunSurvey = startExecution.sync:2 of the survey machine;
 * ExecutionAlreadyExists -> AlreadyStarted, any other error -> SurveyFailed, so one survey never
 * stops the rest) -> WriteSurveyIndex. PlanSurveys' InvalidInputError / NotFoundError -> ScheduleRejected.
 *
 * Schedule: an EventBridge Scheduler schedule with the cron expression of `scheduleCron` (CDK context
 * `surveyScheduleCron`), created only when configured (then ENABLED), target = the bulk machine.
 *
 * Sources: "Map state in Distributed mode" and "Start workflow executions from a task state"
 * (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html,
 * https://docs.aws.amazon.com/step-functions/latest/dg/concepts-nested-workflows.html), "Schedule
 * types on EventBridge Scheduler" (https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html).
 */
import { CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2 } from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { ConfigurationError, EmptyCorpusError, InvalidInputError, NotFoundError, QuotaExceededError } from '../shared/errors';
import { NoEvidenceError } from '../shared/survey/errors';
import { ExtAgentsFunction, type ExtAgentsFunctionProps } from './extagents-function';
import { grantObjectRead, grantObjectWrite } from './grants';
import { EXCEED_TOLERATED_FAILURE_THRESHOLD, LAMBDA_SERVICE_RETRY, MODEL_RETRY } from './extagents-workflow';
import { EXECUTION_ALREADY_EXISTS, EXECUTION_LIMIT_EXCEEDED } from './ingest';
import { batchSeekingRound } from './batch-seeking';
import { batchSeekingStateNames } from '../shared/pipeline/state-names';
import { SurveyStateSchema } from '../shared/survey/workflow';

/** State names of the survey state machine (a contract: tests, docs and local overrides use them). */
export const SURVEY_STATE_NAMES = {
  SurveyPrepare: 'SurveyPrepare',
  SurveyRejected: 'SurveyRejected',
  SurveySeekMode: 'SurveySeekMode?',
  // The batch-seeking states of the first round (seekMode 'batch'): the QA workflow's names.
  ...batchSeekingStateNames(''),
  SeekSources: 'SeekSources',
  SeekSource: 'SeekSource',
  SeekingFailed: 'SeekingFailed',
  Outline: 'Outline',
  Outlined: 'Outlined?',
  NoEvidence: 'NoEvidence',
  PlanSections: 'PlanSections',
  SectionRounds: 'SectionRounds?',
  SeekSections: 'SeekSections',
  SeekSection: 'SeekSection',
  Sections: 'Sections',
  SectionEvidence: 'SectionEvidence',
  WriteSections: 'WriteSections',
  WriteSection: 'WriteSection',
  SurveyAssemble: 'SurveyAssemble',
} as const;

/** State names of the bulk state machine. */
export const BULK_STATE_NAMES = {
  PlanSurveys: 'PlanSurveys',
  ScheduleRejected: 'ScheduleRejected',
  RunSurveys: 'RunSurveys',
  RunSurvey: 'RunSurvey',
  AlreadyStarted: 'AlreadyStarted',
  SurveyFailed: 'SurveyFailed',
  WriteSurveyIndex: 'WriteSurveyIndex',
} as const;

/** Errors of SurveyPrepare that reject the survey. */
export const SURVEY_PREPARE_ERRORS = [
  InvalidInputError.name,
  ConfigurationError.name,
  EmptyCorpusError.name,
  NotFoundError.name,
  QuotaExceededError.name,
] as const;
/** Errors of PlanSurveys that reject the schedule (invalid, or no `surveys/schedule.json`). */
export const PLAN_SURVEYS_ERRORS = [InvalidInputError.name, NotFoundError.name] as const;

/**
 * What is wrong with the settings of {@link SurveyWorkflows} (none: empty): `surveyConcurrency`
 * 1-100 and the schedule's cron expression. The stack lists these with its own before failing.
 */
export function surveySettingProblems(props: { surveyConcurrency?: number; scheduleCron?: string }): string[] {
  const problems: string[] = [];
  const surveyConcurrency = props.surveyConcurrency ?? 2;
  if (!Number.isInteger(surveyConcurrency) || surveyConcurrency < 1 || surveyConcurrency > 100)
    problems.push(`surveyConcurrency must be an integer from 1 to 100, got ${surveyConcurrency}`);
  if (props.scheduleCron !== undefined) {
    try {
      scheduleCronExpression(props.scheduleCron);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  return problems;
}

/**
 * Normalize a cron expression of EventBridge Scheduler: six fields (minutes hours day-of-month month
 * day-of-week year, e.g. `0 6 ? * MON *`), given bare or as `cron(…)`.
 * @throws ConfigurationError when it does not have six fields.
 */
export function scheduleCronExpression(cron: string): string {
  const inner = cron
    .trim()
    .replace(/^cron\((.*)\)$/s, '$1')
    .trim();
  const fields = inner.split(/\s+/);
  if (fields.length !== 6 || fields.some((f) => f === '')) {
    throw new ConfigurationError(
      `surveyScheduleCron must be an EventBridge Scheduler cron expression of six fields (minutes hours day-of-month month day-of-week year), e.g. "0 6 ? * MON *"; got ${JSON.stringify(cron)}`,
    );
  }
  return `cron(${fields.join(' ')})`;
}

/** Properties of {@link SurveyWorkflows}. */
export interface SurveyWorkflowsProps {
  readonly bucket: s3.IBucket;
  readonly table: dynamodb.ITable;
  /** The QA workflow's Seek function: the survey's seeking agents (event `task: "survey"`). */
  readonly seekFunction: lambda.IFunction;
  /** Environment of the survey functions (TABLE_NAME, BUCKET_NAME, MODEL_SPEC, …: lambdas/adapters/env.ts). */
  readonly environment: Record<string, string>;
  /** Environment common to the bulk functions (service name, NODE_OPTIONS). */
  readonly commonEnvironment: Record<string, string>;
  /** Grant the reasoning agent's model to a function (no-op for the extractive reader). */
  readonly grantReasonerModel: (grantee: iam.IGrantable) => void;
  readonly logRetention: logs.RetentionDays;
  /** Level of both state machines' execution logs. @default sfn.LogLevel.ERROR */
  readonly logLevel?: sfn.LogLevel;
  /** Surveys of one bulk run at once (RunSurveys MaxConcurrency). @default 2 */
  readonly surveyConcurrency?: number;
  /** Cron expression of the bulk schedule (see {@link scheduleCronExpression}); absent = no schedule. */
  readonly scheduleCron?: string;
}

/** The survey and bulk state machines, their functions and the optional schedule. */
export class SurveyWorkflows extends Construct {
  public readonly surveyStateMachine: sfn.StateMachine;
  public readonly bulkStateMachine: sfn.StateMachine;
  public readonly prepareFunction: ExtAgentsFunction;
  public readonly stepsFunction: ExtAgentsFunction;
  public readonly assembleFunction: ExtAgentsFunction;
  public readonly planSurveysFunction: ExtAgentsFunction;
  public readonly writeIndexFunction: ExtAgentsFunction;
  /** The bulk schedule, when `scheduleCron` is given. */
  public readonly schedule?: scheduler.Schedule;

  constructor(scope: Construct, id: string, props: SurveyWorkflowsProps) {
    super(scope, id);
    this.node.setContext(STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2, true);
    const { bucket, table, seekFunction } = props;
    const surveyConcurrency = props.surveyConcurrency ?? 2;
    const problems = surveySettingProblems(props);
    if (problems.length > 0) throw new ConfigurationError(problems.join('; '));
    const cron = props.scheduleCron === undefined ? undefined : scheduleCronExpression(props.scheduleCron);
    const logLevel = props.logLevel ?? sfn.LogLevel.ERROR;

    // --- Functions (least privilege per step) -------------------------------------------------
    // Concurrency: each function is a state of a survey execution, and the bulk state machine runs
    // surveyConcurrency surveys at once (a schedule or a bulk start); the Seek function reserves its own.
    const perSurvey = (what: string) => ({
      boundBy: `${what} of a survey execution; bulk runs start surveyConcurrency (${surveyConcurrency}) surveys at once.`,
    });
    const fn = (
      name: string,
      exportName: string,
      entry: string,
      sizing: { memorySize: number; timeout: Duration },
      environment: Record<string, string>,
      concurrency: ExtAgentsFunctionProps['concurrency'],
    ): ExtAgentsFunction =>
      new ExtAgentsFunction(this, name, { handler: entry, exportName, sizing, environment, logRetention: props.logRetention, concurrency });
    this.prepareFunction = fn(
      'SurveyPrepareFunction',
      'prepareHandler',
      'survey',
      { memorySize: 2048, timeout: Duration.minutes(15) },
      props.environment,
      perSurvey('One invocation (the first state)'),
    );
    grantObjectRead(bucket, this.prepareFunction, 'corpora/*');
    grantObjectWrite(bucket, this.prepareFunction, 'runs/*');
    // One model call per invocation at most (an outline step or a section), bounded like Reason.
    this.stepsFunction = fn(
      'SurveyStepsFunction',
      'stepsHandler',
      'survey',
      { memorySize: 1024, timeout: Duration.minutes(10) },
      props.environment,
      perSurvey(
        'One step at a time (outline KAR steps, section plan, sections written one by one), or sectionConcurrency (at most 20) section evidence steps at once,',
      ),
    );
    grantObjectRead(bucket, this.stepsFunction, 'runs/*');
    grantObjectWrite(bucket, this.stepsFunction, 'runs/*');
    table.grantReadData(this.stepsFunction);
    props.grantReasonerModel(this.stepsFunction);
    this.assembleFunction = fn(
      'SurveyAssembleFunction',
      'assembleHandler',
      'survey',
      { memorySize: 1024, timeout: Duration.minutes(5) },
      props.environment,
      perSurvey('One invocation (the last state)'),
    );
    grantObjectRead(bucket, this.assembleFunction, 'runs/*');
    table.grantReadData(this.assembleFunction);
    grantObjectWrite(bucket, this.assembleFunction, 'surveys/*');

    // --- Survey state machine -----------------------------------------------------------------
    const prepare = lambdaTask(this, SURVEY_STATE_NAMES.SurveyPrepare, this.prepareFunction);
    const rejected = new sfn.Fail(this, SURVEY_STATE_NAMES.SurveyRejected, {
      comment: 'SurveyPrepare rejected the survey (input, options, empty corpus): error and cause of the handler.',
      errorPath: '$.Error',
      causePath: '$.Cause',
    });
    prepare.addCatch(rejected, { errors: [...SURVEY_PREPARE_ERRORS] });
    const seekingFailed = new sfn.Fail(this, SURVEY_STATE_NAMES.SeekingFailed, {
      comment: 'Too many seeking agents failed (or the Map Run failed): error and cause of the Map Run.',
      errorPath: '$.Error',
      causePath: '$.Cause',
    });

    const seekMap = (stateName: string, itemName: string, manifestPath: string, round: string): sfn.DistributedMap => {
      const seek = lambdaTask(this, itemName, seekFunction);
      seek.addRetry(MODEL_RETRY);
      const map = new sfn.DistributedMap(this, stateName, {
        comment: `The Seek function over ${manifestPath}, the query from the survey's query record (task "survey").`,
        itemReader: new sfn.S3JsonItemReader({ bucket, key: sfn.JsonPath.stringAt(manifestPath) }),
        itemSelector: {
          runId: sfn.JsonPath.stringAt('$.runId'),
          round: sfn.JsonPath.numberAt(round),
          chunk: sfn.JsonPath.numberAt('$$.Map.Item.Value.chunk'),
          task: 'survey',
        },
        maxConcurrencyPath: '$.config.concurrency',
        toleratedFailurePercentagePath: '$.config.toleratedFailurePercentage',
        resultWriterV2: new sfn.ResultWriterV2({ bucket, prefix: sfn.JsonPath.format('runs/{}/map', sfn.JsonPath.stringAt('$.runId')) }),
        resultPath: sfn.JsonPath.DISCARD,
        mapExecutionType: sfn.StateMachineType.STANDARD,
        label: stateName,
      });
      map.itemProcessor(seek);
      map.addCatch(seekingFailed, { errors: [EXCEED_TOLERATED_FAILURE_THRESHOLD] });
      map.addCatch(seekingFailed, { errors: [sfn.Errors.ALL] });
      return map;
    };
    const seekSources = seekMap(SURVEY_STATE_NAMES.SeekSources, SURVEY_STATE_NAMES.SeekSource, '$.manifestKey', '$.round');
    const seekSections = seekMap(SURVEY_STATE_NAMES.SeekSections, SURVEY_STATE_NAMES.SeekSection, '$.syncManifestKey', '$$.Map.Item.Value.round');

    const outline = lambdaTask(this, SURVEY_STATE_NAMES.Outline, this.stepsFunction, { step: 'outline', state: sfn.JsonPath.entirePayload });
    outline.addRetry(MODEL_RETRY);
    outline.addCatch(
      new sfn.Fail(this, SURVEY_STATE_NAMES.NoEvidence, {
        comment: 'Nothing in the corpus is relevant to the topic, or no outline was drafted.',
        errorPath: '$.Error',
        causePath: '$.Cause',
      }),
      { errors: [NoEvidenceError.name] },
    );
    const planSections = lambdaTask(this, SURVEY_STATE_NAMES.PlanSections, this.stepsFunction, { step: 'planSections', state: sfn.JsonPath.entirePayload });

    const sectionEvidence = lambdaTask(this, SURVEY_STATE_NAMES.SectionEvidence, this.stepsFunction, {
      step: 'sectionEvidence',
      state: sfn.JsonPath.objectAt('$.state'),
      section: sfn.JsonPath.numberAt('$.section'),
    });
    const sections = new sfn.Map(this, SURVEY_STATE_NAMES.Sections, {
      comment: "Each section's final evidence (its synchronized round's messages included), sectionConcurrency at once.",
      itemsPath: '$.sectionItems',
      itemSelector: { state: sfn.JsonPath.entirePayload, section: sfn.JsonPath.numberAt('$$.Map.Item.Value.section') },
      maxConcurrencyPath: '$.config.sectionConcurrency',
      resultPath: sfn.JsonPath.DISCARD,
    });
    sections.itemProcessor(sectionEvidence);

    const writeSection = lambdaTask(this, SURVEY_STATE_NAMES.WriteSection, this.stepsFunction, {
      step: 'writeSection',
      state: sfn.JsonPath.objectAt('$.state'),
      section: sfn.JsonPath.numberAt('$.section'),
    });
    writeSection.addRetry(MODEL_RETRY);
    const writeSections = new sfn.Map(this, SURVEY_STATE_NAMES.WriteSections, {
      comment: 'Sections written one at a time in outline order: each writer is told the sentences already written.',
      itemsPath: '$.sectionItems',
      itemSelector: { state: sfn.JsonPath.entirePayload, section: sfn.JsonPath.numberAt('$$.Map.Item.Value.section') },
      maxConcurrency: 1,
      resultPath: sfn.JsonPath.DISCARD,
    });
    writeSections.itemProcessor(writeSection);
    const assemble = lambdaTask(this, SURVEY_STATE_NAMES.SurveyAssemble, this.assembleFunction);

    const outlined = new sfn.Choice(this, SURVEY_STATE_NAMES.Outlined, { comment: 'Outline drafted? Otherwise the next KAR step (k doubled).' })
      .when(sfn.Condition.isString('$.outlineKey'), planSections)
      .otherwise(outline);
    const sectionRounds = new sfn.Choice(this, SURVEY_STATE_NAMES.SectionRounds, {
      comment: 'Any section with thin evidence gets its synchronized seeking round.',
    })
      .when(sfn.Condition.numberGreaterThan('$.syncItems', 0), seekSections)
      .otherwise(sections);
    // The first seeking round: on demand, or with the survey option seekMode 'batch' (a scheduled
    // survey's default) as batch jobs first (infra/batch-seeking.ts: the same states as the QA workflow's).
    prepare.next(
      new sfn.Choice(this, SURVEY_STATE_NAMES.SurveySeekMode, {
        comment: "Survey option seekMode: 'batch' submits the first seeking round as batch jobs first.",
      })
        .when(
          sfn.Condition.and(sfn.Condition.isPresent('$.config.seekMode'), sfn.Condition.stringEquals('$.config.seekMode', 'batch')),
          batchSeekingRound(this, {
            prefix: '',
            seekFunction,
            eventFields: {
              runId: sfn.JsonPath.stringAt('$.runId'),
              round: sfn.JsonPath.numberAt('$.round'),
              manifestKey: sfn.JsonPath.stringAt('$.manifestKey'),
              task: 'survey',
            },
            stateFields: Object.keys(SurveyStateSchema.shape),
            seekingMap: seekSources,
            afterSeeking: outline,
            lambdaServiceRetry: LAMBDA_SERVICE_RETRY,
            modelRetry: MODEL_RETRY,
          }),
        )
        .otherwise(seekSources),
    );
    seekSources.next(outline);
    outline.next(outlined);
    planSections.next(sectionRounds);
    seekSections.next(sections);
    sections.next(writeSections);
    writeSections.next(assemble);

    const surveyLogs = new logs.LogGroup(this, 'SurveyLogs', { retention: props.logRetention, removalPolicy: RemovalPolicy.DESTROY });
    this.surveyStateMachine = new sfn.StateMachine(this, 'SurveyStateMachine', {
      comment: 'ExtAgents survey: seeking agents over the corpus, outline by KAR, per-section evidence and synchronized rounds, writing, assembly.',
      definitionBody: sfn.DefinitionBody.fromChainable(prepare),
      stateMachineType: sfn.StateMachineType.STANDARD,
      tracingEnabled: true,
      logs: { destination: surveyLogs, level: logLevel, includeExecutionData: false },
    });

    // --- Bulk state machine -------------------------------------------------------------------
    const bulkEnvironment = { ...props.commonEnvironment, BUCKET_NAME: bucket.bucketName, STATE_MACHINE_ARN: this.surveyStateMachine.stateMachineArn };
    this.planSurveysFunction = fn('PlanSurveysFunction', 'planHandler', 'survey-schedule', { memorySize: 512, timeout: Duration.minutes(1) }, bulkEnvironment, {
      boundBy: 'One invocation per bulk execution (its first state); bulk executions start from the schedule or by hand.',
    });
    grantObjectRead(bucket, this.planSurveysFunction, 'surveys/schedule.json');
    grantObjectWrite(bucket, this.planSurveysFunction, 'runs/_surveys/*');
    this.writeIndexFunction = fn(
      'WriteSurveyIndexFunction',
      'indexHandler',
      'survey-schedule',
      { memorySize: 512, timeout: Duration.minutes(5) },
      bulkEnvironment,
      {
        boundBy: 'One invocation per bulk execution (its last state); bulk executions start from the schedule or by hand.',
      },
    );
    grantObjectRead(bucket, this.writeIndexFunction, 'runs/_surveys/*');
    grantObjectRead(bucket, this.writeIndexFunction, 'surveys/*');
    grantObjectWrite(bucket, this.writeIndexFunction, 'surveys/index.json');
    this.surveyStateMachine.grantExecution(this.writeIndexFunction, 'states:DescribeExecution');

    const planSurveys = lambdaTask(this, BULK_STATE_NAMES.PlanSurveys, this.planSurveysFunction);
    planSurveys.addCatch(
      new sfn.Fail(this, BULK_STATE_NAMES.ScheduleRejected, {
        comment: 'surveys/schedule.json is missing or invalid: error and cause of PlanSurveys.',
        errorPath: '$.Error',
        causePath: '$.Cause',
      }),
      { errors: [...PLAN_SURVEYS_ERRORS] },
    );
    const runSurvey = new tasks.StepFunctionsStartExecution(this, BULK_STATE_NAMES.RunSurvey, {
      comment: 'One survey: an execution of the survey state machine named after the date, the entry and its hash.',
      stateMachine: this.surveyStateMachine,
      integrationPattern: sfn.IntegrationPattern.RUN_JOB,
      name: sfn.JsonPath.stringAt('$.executionName'),
      input: sfn.TaskInput.fromJsonPathAt('$.input'),
      // The survey input schema is strict: no AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID key.
      associateWithParent: false,
      resultSelector: { 'status.$': '$.Status' },
    });
    runSurvey.addRetry({
      errors: [EXECUTION_LIMIT_EXCEEDED],
      interval: Duration.seconds(10),
      backoffRate: 2,
      maxAttempts: 6,
      maxDelay: Duration.minutes(5),
      jitterStrategy: sfn.JitterType.FULL,
    });
    runSurvey.addCatch(
      new sfn.Pass(this, BULK_STATE_NAMES.AlreadyStarted, {
        comment: 'Started before (a second delivery the same day): WriteSurveyIndex reads its outcome.',
        result: sfn.Result.fromObject({ status: 'ALREADY_STARTED' }),
      }),
      { errors: [EXECUTION_ALREADY_EXISTS] },
    );
    runSurvey.addCatch(
      new sfn.Pass(this, BULK_STATE_NAMES.SurveyFailed, {
        comment: 'The survey failed; WriteSurveyIndex records its error. The others go on.',
        result: sfn.Result.fromObject({ status: 'FAILED' }),
      }),
      { errors: [sfn.Errors.ALL] },
    );
    const runSurveys = new sfn.DistributedMap(this, BULK_STATE_NAMES.RunSurveys, {
      comment: 'Every survey of the schedule, at most MaxConcurrency at once.',
      itemReader: new sfn.S3JsonItemReader({ bucket, key: sfn.JsonPath.stringAt('$.itemsKey') }),
      itemSelector: {
        executionName: sfn.JsonPath.stringAt('$$.Map.Item.Value.executionName'),
        input: sfn.JsonPath.objectAt('$$.Map.Item.Value.input'),
      },
      maxConcurrency: surveyConcurrency,
      resultPath: sfn.JsonPath.DISCARD,
      mapExecutionType: sfn.StateMachineType.STANDARD,
      label: BULK_STATE_NAMES.RunSurveys,
    });
    runSurveys.itemProcessor(runSurvey);
    const writeIndex = lambdaTask(this, BULK_STATE_NAMES.WriteSurveyIndex, this.writeIndexFunction);

    const bulkLogs = new logs.LogGroup(this, 'BulkLogs', { retention: props.logRetention, removalPolicy: RemovalPolicy.DESTROY });
    this.bulkStateMachine = new sfn.StateMachine(this, 'BulkStateMachine', {
      comment: 'ExtAgents bulk surveys: every survey of surveys/schedule.json on the survey state machine; surveys/index.json.',
      definitionBody: sfn.DefinitionBody.fromChainable(planSurveys.next(runSurveys).next(writeIndex)),
      stateMachineType: sfn.StateMachineType.STANDARD,
      tracingEnabled: true,
      logs: { destination: bulkLogs, level: logLevel, includeExecutionData: false },
    });

    // --- Schedule (only when configured) ------------------------------------------------------
    if (cron !== undefined) {
      this.schedule = new scheduler.Schedule(this, 'Schedule', {
        description: 'Runs every survey of surveys/schedule.json (the bulk survey state machine).',
        schedule: scheduler.ScheduleExpression.expression(cron),
        target: new schedulerTargets.StepFunctionsStartExecution(this.bulkStateMachine, {
          input: scheduler.ScheduleTargetInput.fromObject({}),
          retryAttempts: 2,
          maxEventAge: Duration.hours(1),
        }),
        enabled: true,
      });
    }

    new CfnOutput(Stack.of(this), 'SurveyStateMachineArn', {
      value: this.surveyStateMachine.stateMachineArn,
      description: 'Survey workflow (StartExecution input: {surveyId, topic, corpus, options?, date?})',
    });
    new CfnOutput(Stack.of(this), 'BulkSurveyStateMachineArn', {
      value: this.bulkStateMachine.stateMachineArn,
      description: 'Bulk surveys over surveys/schedule.json (input: {date?})',
    });
  }
}

/**
 * A LambdaInvoke whose output is the function's returned object (`payloadResponseOnly`), with the
 * project's Lambda service retry; `payload` replaces the default payload (the state).
 */
function lambdaTask(scope: Construct, stateName: string, fn: lambda.IFunction, payload?: Record<string, unknown>): tasks.LambdaInvoke {
  const task = new tasks.LambdaInvoke(scope, stateName, {
    lambdaFunction: fn,
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
    ...(payload && { payload: sfn.TaskInput.fromObject(payload) }),
  });
  task.addRetry(LAMBDA_SERVICE_RETRY);
  return task;
}
