/**
 * The survey state machine's steps (shared/survey/workflow.ts through lambdas/survey-handlers.ts and
 * the Seek handler with `task: "survey"`), driven in the order infra/survey.ts runs them, over a
 * directory bucket and dynalite with the offline extractive models: the survey lands under
 * surveys/<slug>/<date>/, matches the in-process survey's outline, and the state stays small.
 * Also the bulk steps: the schedule planned into executions, the index written with failures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import type { DynamoMessageStore } from '../../lambdas/adapters/dynamo-message-store';
import { startRunTable, type TestRunTable } from '../support/dynamo';
import { makeHandlers } from '../../lambdas/handlers';
import { makeSurveyHandlers, makeSurveyScheduleHandlers } from '../../lambdas/survey-handlers';
import { ExtractiveReader } from '../../shared/extractive';
import { ExtractiveSurveyModel } from '../../shared/survey/extractive';
import { runSurvey } from '../../shared/survey/survey';
import type { SurveyMetadata } from '../../shared/survey/types';
import type { SurveyState } from '../../shared/survey/workflow';
import { scheduledSurveyOptions, type BulkPlan, type BucketIndex } from '../../shared/survey/schedule';
import { modelPricing } from '../../models';
import { loadPriceTable } from '../../shared/prices';
import { formatSeekingEstimate } from '../../local/cli/survey-command';
import type { SurveySeekingEstimate } from '../../shared/survey/types';
import type { SurveyRecord } from '../../shared/survey/workflow';
import { SURVEY_PAPERS } from '../support/survey-corpus';

const TABLE = 'survey-workflow';
const NOW = () => new Date('2025-03-04T05:06:07Z');

describe('the survey state machine steps', () => {
  let table: TestRunTable;
  let dir: string;
  let blobs: FsBlobStore;
  let store: DynamoMessageStore;

  beforeAll(async () => {
    table = await startRunTable(TABLE);
    store = table.store;
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-survey-wf-'));
    blobs = new FsBlobStore(dir);
    const lines = SURVEY_PAPERS.map((p) =>
      JSON.stringify({ id: p.id, title: p.title, abstract: p.text.slice(p.title.length + 3), authors: p.authors, year: p.year, link: p.link }),
    );
    await blobs.put('corpora/planning/papers.jsonl', `${lines.join('\n')}\n`);
  }, 30_000);

  afterAll(async () => {
    await table.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Run every step as the state machine does; returns the output and every state seen. */
  async function execute(input: unknown): Promise<{ output: unknown; states: SurveyState[] }> {
    const seekHandlers = makeHandlers({ blobs, store, model: async () => new ExtractiveReader() });
    const survey = makeSurveyHandlers({ blobs, store, model: async () => new ExtractiveSurveyModel(), now: NOW });
    const seekAll = async (items: Array<{ chunk: number; round?: number }>, state: SurveyState) => {
      for (const item of items) await seekHandlers.seek({ runId: state.runId, round: item.round ?? state.round, chunk: item.chunk, task: 'survey' });
    };
    const states: SurveyState[] = [];
    let state = await survey.prepare(input);
    states.push(state);
    await seekAll(JSON.parse(await blobs.getText(state.manifestKey)) as Array<{ chunk: number }>, state);
    do {
      state = (await survey.steps({ step: 'outline', state })) as SurveyState;
      states.push(state);
    } while (state.outlineKey === null);
    state = (await survey.steps({ step: 'planSections', state })) as SurveyState;
    states.push(state);
    if (state.syncItems > 0) await seekAll(JSON.parse(await blobs.getText(state.syncManifestKey ?? '')) as Array<{ chunk: number; round: number }>, state);
    for (const { section } of state.sectionItems) await survey.steps({ step: 'sectionEvidence', state, section });
    for (const { section } of state.sectionItems) await survey.steps({ step: 'writeSection', state, section });
    return { output: await survey.assemble(state), states };
  }

  it('writes the survey under surveys/<slug>/<date>/ with the outline of the in-process survey', async () => {
    // Act
    const { output, states } = await execute({
      surveyId: 'survey-1',
      topic: 'LLM planning',
      corpus: 'planning',
      options: { targetWords: 600, maxSections: 3, minSectionMessages: 100 },
    });
    // Assert
    expect(output).toEqual({
      surveyId: 'survey-1',
      markdownKey: 'surveys/llm-planning/2025-03-04/survey.md',
      metadataKey: 'surveys/llm-planning/2025-03-04/survey.json',
      words: expect.any(Number),
      citations: expect.any(Number),
    });
    const metadata = JSON.parse(await blobs.getText('surveys/llm-planning/2025-03-04/survey.json')) as SurveyMetadata;
    const markdown = await blobs.getText('surveys/llm-planning/2025-03-04/survey.md');
    const inProcess = await runSurvey(
      { topic: 'LLM planning', sources: SURVEY_PAPERS, options: { targetWords: 600, maxSections: 3, minSectionMessages: 100 } },
      { seeker: new ExtractiveReader(), model: new ExtractiveSurveyModel(), now: NOW },
    );
    expect(metadata.title).toBe(inProcess.metadata.title);
    expect(metadata.sections.map((s) => s.heading)).toEqual(inProcess.metadata.sections.map((s) => s.heading));
    expect(metadata.outlineTrace).toEqual(inProcess.metadata.outlineTrace);
    // minSectionMessages 100: every section is thin, so each got its synchronized round.
    expect(metadata.sections.every((s) => s.synchronized)).toBe(true);
    expect(metadata.citations.kept).toBeGreaterThan(0);
    expect(metadata.usage.seeker.calls).toBe(metadata.chunks * (1 + metadata.sections.length));
    expect(markdown).toContain(`# ${metadata.title}`);
    expect(markdown).toMatch(/\[(p|r|t)\d\]/);
    // Only ids, keys and counts in the state.
    for (const s of states) expect(JSON.stringify(s).length).toBeLessThan(1500);
  }, 60_000);

  it('refuses a corpus outside corpora/ and an empty topic before reading anything', async () => {
    const survey = makeSurveyHandlers({ blobs, store, model: async () => new ExtractiveSurveyModel() });
    await expect(survey.prepare({ surveyId: 's2', topic: 'x', corpus: { prefix: 'jobs/' } })).rejects.toMatchObject({
      name: 'InvalidInputError',
      message: expect.stringContaining('corpora/'),
    });
    await expect(survey.prepare({ surveyId: 's2', topic: ' ', corpus: 'planning' })).rejects.toMatchObject({
      name: 'InvalidInputError',
      message: expect.stringContaining('topic'),
    });
  });

  it("prices the first seeking round before any model call, on demand and as batch jobs at the table's batch rate", async () => {
    const survey = makeSurveyHandlers({
      blobs,
      store,
      model: async () => new ExtractiveSurveyModel(),
      now: NOW,
      pricing: modelPricing('bedrock:meta.llama3-1-8b-instruct-v1:0'),
    });
    await survey.prepare({ surveyId: 'priced-1', topic: 'LLM planning', corpus: 'planning', options: { seekMode: 'batch' } });
    await survey.prepare({
      surveyId: 'priced-2',
      topic: 'LLM planning',
      corpus: 'planning',
      options: { ...scheduledSurveyOptions(undefined), seekMode: 'on-demand' },
    });
    const unpriced = makeSurveyHandlers({
      blobs,
      store,
      model: async () => new ExtractiveSurveyModel(),
      now: NOW,
      pricing: modelPricing('llama:/models/x.gguf'),
    });
    await unpriced.prepare({ surveyId: 'priced-3', topic: 'LLM planning', corpus: 'planning' });

    const estimateOf = async (id: string) => (JSON.parse(await blobs.getText(`runs/${id}/survey/survey.json`)) as SurveyRecord).seekingEstimate;
    const batch = await estimateOf('priced-1');
    const price = loadPriceTable().models['meta.llama3-1-8b-instruct-v1:0'];
    expect(batch?.mode).toBe('batch');
    expect(batch?.calls).toBeGreaterThan(0);
    // on demand at the table's rate, batch at its batch rate: half of it for this model
    expect(batch?.onDemandUsd).toBeCloseTo(((batch?.inputTokens ?? 0) * price.inputUsdPerMTok + (batch?.outputTokens ?? 0) * price.outputUsdPerMTok) / 1e6, 10);
    expect(batch?.batchUsd).toBeCloseTo((batch?.onDemandUsd ?? 0) * 0.5, 10);
    expect(formatSeekingEstimate(batch as SurveySeekingEstimate)).toMatch(
      /on demand, at most \$[\d.]+ as batch jobs \(this survey\) \(prices of \d{4}-\d{2}-\d{2}, unverified\)$/,
    );
    expect((await estimateOf('priced-2'))?.mode).toBe('on-demand');
    const local = await estimateOf('priced-3');
    expect(local).toMatchObject({ unpriced: expect.stringContaining('local model') });
    expect(local?.onDemandUsd).toBeUndefined();
  });

  it("sets the seeking Maps' MaxConcurrency from a stated quota, as the QA run's Prepare, and refuses one that cannot carry a seek before writing anything", async () => {
    const survey = makeSurveyHandlers({ blobs, store, model: async () => new ExtractiveSurveyModel(), now: NOW, quota: { requestsPerMinute: 60 } });
    // The deployment's 60 requests a minute × 5 s a seek / 60 = 5 seeks in flight, under the survey's 50.
    const byDeployment = await survey.prepare({
      surveyId: 'quota-1',
      topic: 'LLM planning',
      corpus: 'planning',
      options: { concurrency: 50, seekLatencySeconds: 5 },
    });
    // The survey's own quota overrides the deployment's: 12 requests a minute -> 1.
    const byOptions = await survey.prepare({
      surveyId: 'quota-2',
      topic: 'LLM planning',
      corpus: 'planning',
      options: { concurrency: 50, seekLatencySeconds: 5, quotaRequestsPerMinute: 12 },
    });
    const refused = survey.prepare({ surveyId: 'quota-3', topic: 'LLM planning', corpus: 'planning', options: { quotaTokensPerMinute: 100 } });

    expect(byDeployment.config.concurrency).toBe(5);
    expect(byOptions.config.concurrency).toBe(1);
    await expect(refused).rejects.toMatchObject({
      name: 'QuotaExceededError',
      message: expect.stringMatching(/^Refused before any model call: one seek counts [\d,]+ tokens against a quota of 100 tokens per minute/),
    });
    expect(await blobs.list('runs/quota-3/')).toEqual([]);
  });

  it('plans the schedule into named executions and indexes successes and failures', async () => {
    // Arrange
    await blobs.put(
      'surveys/schedule.json',
      JSON.stringify({
        surveys: [
          { topic: 'LLM planning', corpus: 'planning' },
          { topic: 'Robots', corpus: { prefix: 'corpora/none/' }, options: { maxSections: 2 } },
        ],
      }),
    );
    const bulk = makeSurveyScheduleHandlers({
      blobs,
      now: NOW,
      executions: {
        describe: async (name) => ({
          name,
          status: 'FAILED',
          startedAt: '2025-03-04T00:00:00.000Z',
          error: 'InvalidInputError',
          cause: 'No corpus object under prefix "corpora/none/"',
        }),
      },
    });
    // Act
    const plan: BulkPlan = await bulk.plan({});
    const items = JSON.parse(await blobs.getText(plan.itemsKey)) as Array<{ executionName: string; input: { surveyId: string; date: string } }>;
    await execute(items[0].input);
    const result = await bulk.index(plan);
    // Assert
    expect(plan).toMatchObject({ date: '2025-03-04', surveys: 2 });
    expect(items[0].executionName).toMatch(/^2025-03-04-00-[0-9a-f]{8}-llm-planning$/);
    expect(items[0].input).toMatchObject({ surveyId: items[0].executionName, date: '2025-03-04', corpus: { prefix: 'corpora/planning/' } });
    expect(result).toEqual({ indexKey: 'surveys/index.json', succeeded: 1, failed: 1 });
    const index = JSON.parse(await blobs.getText('surveys/index.json')) as BucketIndex;
    expect(index.surveys[0]).toMatchObject({ topic: 'LLM planning', status: 'succeeded', markdown: 'surveys/llm-planning/2025-03-04/survey.md' });
    expect(index.surveys[1]).toMatchObject({
      topic: 'Robots',
      status: 'failed',
      error: { name: 'InvalidInputError', message: expect.stringContaining('corpora/none/') },
    });
  }, 60_000);

  it('rejects an invalid schedule with every bad field named', async () => {
    await blobs.put('surveys/schedule.json', JSON.stringify({ surveys: [{ topic: '', corpus: { prefix: 'runs/x/' } }] }));
    const bulk = makeSurveyScheduleHandlers({ blobs, executions: { describe: async () => undefined } });
    await expect(bulk.plan({})).rejects.toMatchObject({ name: 'InvalidInputError', message: expect.stringMatching(/surveys\.0\.topic.*surveys\.0\.corpus/s) });
  });
});
