/**
 * CDK assertion tests of the surveys on AWS (infra/survey.ts): the survey state machine's graph, the
 * bulk state machine, the EventBridge Scheduler schedule (from CDK context), grants, alarms, and the
 * nag pack with the schedule configured.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { StateMachine as LocalStateMachine } from 'aws-local-stepfunctions';
import { buildStack, createSynthesisApp, SYNTHESIS_APP_PROPS, type BuildStackOptions } from '../../infra/extagents-stack';
import { EXECUTION_ALREADY_EXISTS } from '../../infra/ingest';
import { scheduleCronExpression, SURVEY_STATE_NAMES as S } from '../../infra/survey';
import { ACCOUNT, REGION, resolveIntrinsics, type Json, type JsonObject, idStartingWith, resourceOf, statementsOfRole, roleOf, allows } from '../support/cdk';

const ENV = { account: ACCOUNT, region: REGION };

interface AslState {
  Type: string;
  Next?: string;
  End?: boolean;
  Resource?: string;
  Parameters?: JsonObject;
  ResultSelector?: JsonObject;
  ResultPath?: string | null;
  Retry?: Array<{ ErrorEquals: string[] }>;
  Catch?: Array<{ ErrorEquals: string[]; Next: string }>;
  Choices?: JsonObject[];
  Default?: string;
  ItemsPath?: string;
  ItemReader?: JsonObject;
  ItemSelector?: JsonObject;
  ItemProcessor?: { ProcessorConfig: JsonObject; StartAt: string; States: Record<string, AslState> };
  MaxConcurrency?: number;
  MaxConcurrencyPath?: string;
  ToleratedFailurePercentagePath?: string;
  Result?: Json;
}
interface Asl {
  StartAt: string;
  States: Record<string, AslState>;
}

function synth(options: BuildStackOptions = {}, context: Record<string, unknown> = {}): Template {
  const app =
    Object.keys(context).length === 0 ? createSynthesisApp() : new App({ ...SYNTHESIS_APP_PROPS, context: { ...SYNTHESIS_APP_PROPS.context, ...context } });
  return Template.fromStack(buildStack(app, { env: ENV, ...options }));
}

function aslOf(template: Template, id: string): Asl {
  return JSON.parse(resolveIntrinsics(resourceOf(template, id).Properties.DefinitionString) as string) as Asl;
}

/** Every S3 object resource (`<bucket arn>/<pattern>`) a role may use with an action. */
function objectResources(statements: JsonObject[], action: string, bucketArn: string): string[] {
  return statements
    .filter((s) => [s.Action].flat().includes(action))
    .flatMap((s) => [s.Resource].flat())
    .map(String)
    .filter((r) => r.startsWith(`${bucketArn}/`))
    .map((r) => r.slice(bucketArn.length + 1))
    .sort();
}

describe('the survey state machine', () => {
  let template: Template;
  let asl: Asl;
  let ids: { seek: string; steps: string; prepare: string; assemble: string; bucket: string };

  beforeAll(() => {
    template = synth();
    asl = aslOf(template, idStartingWith(template, 'AWS::StepFunctions::StateMachine', 'SurveysSurveyStateMachine'));
    ids = {
      seek: idStartingWith(template, 'AWS::Lambda::Function', /^SeekFunction/),
      steps: idStartingWith(template, 'AWS::Lambda::Function', 'SurveysSurveyStepsFunction'),
      prepare: idStartingWith(template, 'AWS::Lambda::Function', 'SurveysSurveyPrepareFunction'),
      assemble: idStartingWith(template, 'AWS::Lambda::Function', 'SurveysSurveyAssembleFunction'),
      bucket: idStartingWith(template, 'AWS::S3::Bucket', /^Bucket[0-9A-F]{8}$/),
    };
  });

  it('prepares, seeks every chunk, loops the outline, plans the sections, writes them and assembles', () => {
    // Assert
    expect(asl.StartAt).toBe(S.SurveyPrepare);
    expect(asl.States[S.SurveyPrepare]).toMatchObject({ Type: 'Task', Resource: `\${${ids.prepare}.Arn}`, Next: S.SurveySeekMode });
    // The first seeking round: on demand, or (seekMode 'batch') the batch-seeking states first, on the Seek function with task survey
    expect(asl.States[S.SurveySeekMode]).toMatchObject({ Type: 'Choice', Choices: [{ Next: S.SubmitSeekBatch }], Default: S.SeekSources });
    expect(asl.States[S.SubmitSeekBatch]).toMatchObject({
      Type: 'Task',
      Parameters: { seekBatch: 'submit', 'runId.$': '$.runId', 'round.$': '$.round', 'manifestKey.$': '$.manifestKey', task: 'survey' },
      ResultPath: '$.seekBatch',
    });
    expect(asl.States[S.SeekBatchRemainder]).toMatchObject({ Type: 'Pass', Next: S.SeekSources });
    expect(asl.States[S.SeekBatchComplete]).toMatchObject({ Type: 'Pass', Next: S.Outline });
    expect(asl.States[S.SeekSources]).toMatchObject({ Type: 'Map', Next: S.Outline, ResultPath: null });
    expect(asl.States[S.Outline]).toMatchObject({
      Type: 'Task',
      Resource: `\${${ids.steps}.Arn}`,
      Parameters: { step: 'outline', 'state.$': '$' },
      Next: S.Outlined,
    });
    expect(asl.States[S.PlanSections]).toMatchObject({ Type: 'Task', Parameters: { step: 'planSections', 'state.$': '$' }, Next: S.SectionRounds });
    expect(asl.States[S.SeekSections]).toMatchObject({ Type: 'Map', Next: S.Sections, ResultPath: null });
    expect(asl.States[S.Sections]).toMatchObject({ Type: 'Map', Next: S.WriteSections, ResultPath: null });
    expect(asl.States[S.WriteSections]).toMatchObject({ Type: 'Map', Next: S.SurveyAssemble, ResultPath: null });
    expect(asl.States[S.SurveyAssemble]).toMatchObject({ Type: 'Task', Resource: `\${${ids.assemble}.Arn}`, End: true });
    expect(Object.keys(asl.States).sort()).toEqual(
      [
        S.SurveyPrepare,
        S.SurveyRejected,
        S.SeekSources,
        S.SeekingFailed,
        S.Outline,
        S.Outlined,
        S.NoEvidence,
        S.PlanSections,
        S.SectionRounds,
        S.SeekSections,
        S.Sections,
        S.WriteSections,
        S.SurveyAssemble,
        S.SurveySeekMode,
        S.SubmitSeekBatch,
        S.SeekBatchStatus,
        S.WaitForSeekBatch,
        S.CheckSeekBatch,
        S.SeekBatchRemainder,
        S.SeekBatchComplete,
      ].sort(),
    );
  });

  it('runs the existing Seek function over the survey manifest in a Distributed Map, with task "survey"', () => {
    // Arrange
    const map = asl.States[S.SeekSources];
    // Assert
    expect(map.ItemProcessor?.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    expect(map.ItemReader).toEqual({
      Resource: 'arn:aws:states:::s3:getObject',
      ReaderConfig: { InputType: 'JSON' },
      Parameters: { Bucket: `\${${ids.bucket}}`, 'Key.$': '$.manifestKey' },
    });
    expect(map.ItemSelector).toEqual({ 'runId.$': '$.runId', 'round.$': '$.round', 'chunk.$': '$$.Map.Item.Value.chunk', task: 'survey' });
    expect(map.MaxConcurrencyPath).toBe('$.config.concurrency');
    expect(map.ToleratedFailurePercentagePath).toBe('$.config.toleratedFailurePercentage');
    const seek = map.ItemProcessor?.States[S.SeekSource] as AslState;
    expect(seek).toMatchObject({ Type: 'Task', Resource: `\${${ids.seek}.Arn}`, End: true });
    expect(seek.Retry?.flatMap((r) => r.ErrorEquals)).toEqual(
      expect.arrayContaining(['ModelThrottledError', 'ModelUnavailableError', 'ModelTimeoutError', 'Lambda.TooManyRequestsException']),
    );
    expect(map.Catch).toEqual([
      { ErrorEquals: ['States.ExceedToleratedFailureThreshold'], Next: S.SeekingFailed },
      { ErrorEquals: ['States.ALL'], Next: S.SeekingFailed },
    ]);
  });

  it('loops the outline step until an outline key is set (k doubles in the step)', () => {
    // Arrange
    const choice = asl.States[S.Outlined];
    // Assert
    expect(choice).toMatchObject({ Type: 'Choice', Choices: [{ Variable: '$.outlineKey', IsString: true, Next: S.PlanSections }], Default: S.Outline });
    expect(asl.States[S.Outline].Catch).toEqual([{ ErrorEquals: ['NoEvidenceError'], Next: S.NoEvidence }]);
    expect(asl.States[S.Outline].Retry?.flatMap((r) => r.ErrorEquals)).toEqual(expect.arrayContaining(['ModelThrottledError']));
  });

  it('runs the synchronized rounds of thin sections with the same Seek function, only when there are any', () => {
    // Arrange
    const map = asl.States[S.SeekSections];
    // Assert
    expect(asl.States[S.SectionRounds]).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.syncItems', NumericGreaterThan: 0, Next: S.SeekSections }],
      Default: S.Sections,
    });
    expect(map.ItemReader).toMatchObject({ Parameters: { 'Key.$': '$.syncManifestKey' } });
    expect(map.ItemSelector).toEqual({ 'runId.$': '$.runId', 'round.$': '$$.Map.Item.Value.round', 'chunk.$': '$$.Map.Item.Value.chunk', task: 'survey' });
    expect(map.ItemProcessor?.States[S.SeekSection]).toMatchObject({ Resource: `\${${ids.seek}.Arn}` });
  });

  it('gathers section evidence with bounded concurrency and writes sections one at a time in outline order', () => {
    // Arrange
    const sections = asl.States[S.Sections];
    const write = asl.States[S.WriteSections];
    // Assert
    expect(sections).toMatchObject({
      ItemsPath: '$.sectionItems',
      MaxConcurrencyPath: '$.config.sectionConcurrency',
      ItemSelector: { 'state.$': '$', 'section.$': '$$.Map.Item.Value.section' },
    });
    expect(sections.ItemProcessor?.ProcessorConfig).toEqual({ Mode: 'INLINE' });
    expect(sections.ItemProcessor?.States[S.SectionEvidence]).toMatchObject({
      Resource: `\${${ids.steps}.Arn}`,
      Parameters: { step: 'sectionEvidence', 'state.$': '$.state', 'section.$': '$.section' },
    });
    expect(write).toMatchObject({ ItemsPath: '$.sectionItems', MaxConcurrency: 1 });
    expect(write.ItemProcessor?.States[S.WriteSection]).toMatchObject({ Parameters: { step: 'writeSection', 'state.$': '$.state', 'section.$': '$.section' } });
  });

  it('rejects bad input at SurveyRejected with the handler error', () => {
    expect(asl.States[S.SurveyPrepare].Catch).toEqual([
      { ErrorEquals: ['InvalidInputError', 'ConfigurationError', 'EmptyCorpusError', 'NotFoundError', 'QuotaExceededError'], Next: S.SurveyRejected },
    ]);
    expect(asl.States[S.SurveyRejected]).toMatchObject({ Type: 'Fail', ErrorPath: '$.Error', CausePath: '$.Cause' });
  });

  it('gives each survey function only the bucket prefixes and table access it uses', () => {
    // Arrange
    const bucketArn = `\${${ids.bucket}.Arn}`;
    const of = (fnId: string) => statementsOfRole(template, roleOf(template, fnId, 'Role'));
    const dynamoActions = (fnId: string) =>
      of(fnId)
        .flatMap((s) => [s.Action].flat())
        .map(String)
        .filter((a) => a.startsWith('dynamodb:'));
    // Assert
    expect(objectResources(of(ids.prepare), 's3:GetObject', bucketArn)).toEqual(['corpora/*']);
    expect(objectResources(of(ids.prepare), 's3:PutObject', bucketArn)).toEqual(['runs/*']);
    expect(dynamoActions(ids.prepare)).toEqual([]);
    expect(objectResources(of(ids.steps), 's3:GetObject', bucketArn)).toEqual(['runs/*']);
    expect(objectResources(of(ids.steps), 's3:PutObject', bucketArn)).toEqual(['runs/*']);
    expect(dynamoActions(ids.steps)).not.toContain('dynamodb:PutItem');
    expect(dynamoActions(ids.steps)).toContain('dynamodb:Query');
    expect(objectResources(of(ids.assemble), 's3:PutObject', bucketArn)).toEqual(['surveys/*']);
    expect(objectResources(of(ids.assemble), 's3:GetObject', bucketArn)).toEqual(['runs/*']);
  });

  it('lets only the survey steps function invoke the reasoner model, and the Seek function the seeker model', () => {
    // Arrange
    const invokes = (fnId: string) =>
      statementsOfRole(template, roleOf(template, fnId, 'Role'))
        .filter((s) => [s.Action].flat().includes('bedrock:InvokeModel'))
        .flatMap((s) => [s.Resource].flat());
    // Assert
    expect(invokes(ids.steps)).toEqual(expect.arrayContaining([`arn:aws:bedrock:${REGION}:${ACCOUNT}:inference-profile/us.meta.llama3-3-70b-instruct-v1:0`]));
    expect(invokes(ids.prepare)).toEqual([]);
    expect(invokes(ids.assemble)).toEqual([]);
    expect(invokes(ids.seek)).toEqual(expect.arrayContaining([`arn:aws:bedrock:${REGION}:${ACCOUNT}:inference-profile/us.meta.llama3-1-8b-instruct-v1:0`]));
  });

  it('is a definition aws-local-stepfunctions accepts', () => {
    expect(() => new LocalStateMachine(asl as never)).not.toThrow();
  });
});

describe('the bulk survey state machine', () => {
  let template: Template;
  let asl: Asl;
  let bulkId: string;
  let surveyId: string;

  beforeAll(() => {
    template = synth({ surveyConcurrency: 3 });
    bulkId = idStartingWith(template, 'AWS::StepFunctions::StateMachine', 'SurveysBulkStateMachine');
    surveyId = idStartingWith(template, 'AWS::StepFunctions::StateMachine', 'SurveysSurveyStateMachine');
    asl = aslOf(template, bulkId);
  });

  it('plans the schedule, runs every survey as a .sync execution in a Distributed Map, then writes the index', () => {
    // Arrange
    const map = asl.States.RunSurveys;
    const run = map.ItemProcessor?.States.RunSurvey as AslState;
    // Assert
    expect(asl.StartAt).toBe('PlanSurveys');
    expect(asl.States.PlanSurveys).toMatchObject({
      Type: 'Task',
      Resource: `\${${idStartingWith(template, 'AWS::Lambda::Function', 'SurveysPlanSurveysFunction')}.Arn}`,
      Next: 'RunSurveys',
    });
    expect(asl.States.PlanSurveys.Catch).toEqual([{ ErrorEquals: ['InvalidInputError', 'NotFoundError'], Next: 'ScheduleRejected' }]);
    expect(map).toMatchObject({
      Type: 'Map',
      MaxConcurrency: 3,
      ResultPath: null,
      Next: 'WriteSurveyIndex',
      ItemReader: { Parameters: { 'Key.$': '$.itemsKey' } },
    });
    expect(map.ItemProcessor?.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    expect(run).toMatchObject({
      Type: 'Task',
      Resource: 'arn:aws:states:::states:startExecution.sync:2',
      Parameters: { StateMachineArn: `\${${surveyId}}`, 'Name.$': '$.executionName', 'Input.$': '$.input' },
    });
    expect(asl.States.WriteSurveyIndex).toMatchObject({
      Type: 'Task',
      Resource: `\${${idStartingWith(template, 'AWS::Lambda::Function', 'SurveysWriteSurveyIndexFunction')}.Arn}`,
      End: true,
    });
  });

  it('catches each survey, so one failure does not stop the others', () => {
    // Arrange
    const states = asl.States.RunSurveys.ItemProcessor?.States ?? {};
    // Assert
    expect(states.RunSurvey.Catch).toEqual([
      { ErrorEquals: [EXECUTION_ALREADY_EXISTS], Next: 'AlreadyStarted' },
      { ErrorEquals: ['States.ALL'], Next: 'SurveyFailed' },
    ]);
    expect(states.SurveyFailed).toMatchObject({ Type: 'Pass', End: true, Result: { status: 'FAILED' } });
  });

  it('may start executions of the survey machine; its functions read the schedule and write the index only', () => {
    // Arrange
    const bucketArn = `\${${idStartingWith(template, 'AWS::S3::Bucket', /^Bucket[0-9A-F]{8}$/)}.Arn}`;
    const bulkStatements = statementsOfRole(template, roleOf(template, bulkId, 'RoleArn'));
    const plan = statementsOfRole(template, roleOf(template, idStartingWith(template, 'AWS::Lambda::Function', 'SurveysPlanSurveysFunction'), 'Role'));
    const index = statementsOfRole(template, roleOf(template, idStartingWith(template, 'AWS::Lambda::Function', 'SurveysWriteSurveyIndexFunction'), 'Role'));
    // Assert
    expect(allows(bulkStatements, 'states:StartExecution', `\${${surveyId}}`)).toBe(true);
    expect(objectResources(plan, 's3:GetObject', bucketArn)).toEqual(['surveys/schedule.json']);
    expect(objectResources(plan, 's3:PutObject', bucketArn)).toEqual(['runs/_surveys/*']);
    expect(objectResources(index, 's3:PutObject', bucketArn)).toEqual(['surveys/index.json']);
    expect(index.some((s) => [s.Action].flat().includes('states:DescribeExecution'))).toBe(true);
  });

  it('is a definition aws-local-stepfunctions accepts', () => {
    expect(() => new LocalStateMachine(asl as never)).not.toThrow();
  });
});

describe('the bulk survey schedule', () => {
  it('is not created unless a cron expression is configured', () => {
    expect(Object.keys(synth().findResources('AWS::Scheduler::Schedule'))).toEqual([]);
  });

  it('takes the cron expression from the CDK context and starts the bulk machine, enabled', () => {
    // Arrange
    const template = synth({}, { surveyScheduleCron: '0 6 ? * MON *' });
    const scheduleId = idStartingWith(template, 'AWS::Scheduler::Schedule', 'SurveysSchedule');
    const bulkId = idStartingWith(template, 'AWS::StepFunctions::StateMachine', 'SurveysBulkStateMachine');
    const schedule = resourceOf(template, scheduleId).Properties;
    const target = schedule.Target as JsonObject;
    const roleId = ((target.RoleArn as JsonObject)['Fn::GetAtt'] as string[])[0];
    // Assert
    expect(schedule).toMatchObject({ ScheduleExpression: 'cron(0 6 ? * MON *)', State: 'ENABLED', FlexibleTimeWindow: { Mode: 'OFF' } });
    expect(target).toMatchObject({ Arn: { Ref: bulkId }, Input: '{}', RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 } });
    expect(allows(statementsOfRole(template, roleId), 'states:StartExecution', `\${${bulkId}}`)).toBe(true);
  });

  it('accepts cron(...) or six bare fields, and refuses anything else', () => {
    expect(scheduleCronExpression('cron(0 6 * * ? *)')).toBe('cron(0 6 * * ? *)');
    expect(scheduleCronExpression(' 0  6 * * ? * ')).toBe('cron(0 6 * * ? *)');
    expect(() => scheduleCronExpression('0 6 * * *')).toThrow('six fields');
    expect(() => synth({}, { surveyScheduleCron: 7 })).toThrow('CDK context "surveyScheduleCron" must be a string');
  });
});

describe('the survey operations baseline', () => {
  it('alarms on both survey machines and on throttles of every new function', () => {
    // Arrange
    const template = synth();
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties as JsonObject);
    const dimensionsOf = (metric: string) => alarms.filter((a) => a.MetricName === metric).map((a) => JSON.stringify(a.Dimensions));
    // Assert
    for (const prefix of ['SurveysSurveyStateMachine', 'SurveysBulkStateMachine']) {
      const id = idStartingWith(template, 'AWS::StepFunctions::StateMachine', prefix);
      expect(dimensionsOf('ExecutionsFailed').some((d) => d.includes(`"${id}"`))).toBe(true);
    }
    for (const prefix of [
      'SurveysSurveyPrepareFunction',
      'SurveysSurveyStepsFunction',
      'SurveysSurveyAssembleFunction',
      'SurveysPlanSurveysFunction',
      'SurveysWriteSurveyIndexFunction',
    ]) {
      const id = idStartingWith(template, 'AWS::Lambda::Function', prefix);
      expect(dimensionsOf('Throttles').some((d) => d.includes(`"${id}"`))).toBe(true);
    }
  });

  it('leaves no unacknowledged nag finding with the schedule configured', () => {
    // Arrange
    const outdir = mkdtempSync(path.join(tmpdir(), 'extagents-nag-survey-'));
    try {
      const app = new App({ ...SYNTHESIS_APP_PROPS, outdir, context: { ...SYNTHESIS_APP_PROPS.context, surveyScheduleCron: '0 6 ? * MON *' } });
      buildStack(app, { env: ENV });
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
      // Act
      let findings: string[] = [];
      try {
        app.synth();
      } catch {
        const report = JSON.parse(readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as {
          pluginReports: Array<{ violations: Array<{ ruleName: string; violatingConstructs: Array<{ constructPath: string }> }> }>;
        };
        findings = report.pluginReports.flatMap((p) => p.violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName} at ${c.constructPath}`)));
      }
      // Assert
      expect(findings).toEqual([]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 60_000);
});
