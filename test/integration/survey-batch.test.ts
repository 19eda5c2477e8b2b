/**
 * A scheduled survey's first seeking round as batch jobs (survey option seekMode, 'batch' by default
 * for a schedule: shared/survey/schedule.ts `scheduledSurveyOptions`), through the synthesized survey
 * state machine and the local batch runner, with the LLM seeking agents over a scripted chat model:
 * the messages of SeekSources must be those of the same survey sought on demand.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LlmAgents } from '../../shared/llm/agents';
import type { AgentModel, ChatModel, ChatRequest, ChatResponse } from '../../shared/ports';
import { ExtractiveSurveyModel } from '../../shared/survey/extractive';
import { batchRoundKey, type BatchRoundRecord } from '../../shared/pipeline/seek-batch';
import { startLocalStack, type LocalStack } from '../../local/engine/stack';
import { runLocalSchedule, runLocalSurvey } from '../../local/engine/survey';
import { SURVEY_PAPERS } from '../support/survey-corpus';

/** A seeking agent's chat model: each chunk's first sentence as evidence, scored by its length; counts calls. */
function scriptedSeeker(): { chat: ChatModel; agents: (wrap?: (chat: ChatModel) => ChatModel) => AgentModel; calls: () => number } {
  let calls = 0;
  const chat: ChatModel = {
    modelId: 'scripted-survey-seeker',
    async complete(request: ChatRequest): Promise<ChatResponse> {
      calls += 1;
      const chunk = /<chunk>([\s\S]*?)<\/chunk>/.exec(request.messages[0].text)?.[1] ?? '';
      const sentence = /[A-Z][^.]{20,}\./.exec(chunk.replace(/\[\d+\]\s*/g, ''))?.[0];
      const text = sentence ? JSON.stringify({ evidence: sentence, quotes: [sentence], score: 40 + (sentence.length % 60) }) : '{"no_information": true}';
      return { text, stopReason: 'end_turn', inputTokens: 50, outputTokens: 20 };
    },
  };
  const agents = (wrap?: (c: ChatModel) => ChatModel): AgentModel => new LlmAgents({ seeker: wrap ? wrap(chat) : chat, reasoner: chat });
  return { chat, agents, calls: () => calls };
}

describe('a scheduled survey seeks its sources as batch jobs', () => {
  let dir: string;
  const stacks: LocalStack[] = [];
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'extagents-survey-batch-'));
    const jsonl = SURVEY_PAPERS.map((p) => JSON.stringify({ id: p.id, title: p.title, abstract: p.text.split('\n\n')[1], year: p.year })).join('\n');
    await fs.mkdir(path.join(dir, 'corpus'));
    await fs.writeFile(path.join(dir, 'corpus', 'papers.jsonl'), jsonl);
  });
  afterEach(async () => {
    for (const stack of stacks.splice(0)) await stack.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const stackWith = async (name: string, seeker: ReturnType<typeof scriptedSeeker>, minRecords = 4): Promise<LocalStack> => {
    const stack = await startLocalStack({
      stateDir: path.join(dir, name),
      model: seeker.agents(),
      surveyModel: new ExtractiveSurveyModel({ minFacetSources: 2 }),
      batch: { minRecords, seekerChat: seeker.chat, agents: seeker.agents },
      retryIntervalMs: 0,
    });
    stacks.push(stack);
    return stack;
  };

  it('records the same SeekSources messages as the survey sought on demand, from one batch job', async () => {
    const options = { chunkTokens: 90, maxSections: 3, targetWords: 300, rounds: 1 };
    const onDemandSeeker = scriptedSeeker();
    const batchSeeker = scriptedSeeker();
    const onDemand = await stackWith('od', onDemandSeeker);
    const batch = await stackWith('b', batchSeeker);
    const survey = (stack: LocalStack, surveyId: string, seekMode: 'on-demand' | 'batch') =>
      runLocalSurvey(
        {
          corpus: [path.join(dir, 'corpus')],
          topic: 'language models for planning',
          options: { ...options, seekMode },
          output: path.join(dir, `${surveyId}.md`),
          surveyId,
          date: '2025-03-01',
        },
        stack,
      );

    await survey(onDemand, 's-od', 'on-demand');
    await survey(batch, 's-b', 'batch');

    const record = JSON.parse(await batch.blobs.getText(batchRoundKey('s-b', 1))) as BatchRoundRecord;
    expect(record).toMatchObject({ mode: 'batch', collected: { failedRecords: 0, missingRecords: 0 } });
    expect(record.jobs).toHaveLength(1);
    expect(record.records).toBeGreaterThanOrEqual(4);
    expect(record.collected?.recorded).toBe(record.records);
    const messages = async (stack: LocalStack, id: string) =>
      (await stack.store.topK(id, 999, 1)).map(({ id: messageId, chunkIndex, evidence, score }) => ({ messageId, chunkIndex, evidence, score }));
    const batchMessages = await messages(batch, 's-b');
    expect(batchMessages.length).toBeGreaterThan(0);
    expect(batchMessages).toEqual(await messages(onDemand, 's-od'));
    expect(batchSeeker.calls()).toBe(onDemandSeeker.calls());
    await expect(onDemand.blobs.exists(batchRoundKey('s-od', 1))).resolves.toBe(false);
  }, 120_000);

  it('says a batch survey under the batch minimum was sought on demand, and why, in its progress and its survey.json (issue 51, item 7)', async () => {
    const seeker = scriptedSeeker();
    const stack = await stackWith('small', seeker, 10_000);
    const details: string[] = [];
    const survey = await runLocalSurvey(
      {
        corpus: [path.join(dir, 'corpus')],
        topic: 'language models for planning',
        options: { chunkTokens: 90, maxSections: 3, targetWords: 300, rounds: 1, seekMode: 'batch' },
        output: path.join(dir, 'small.md'),
        surveyId: 's-small',
        date: '2025-03-01',
        onProgress: (p) => {
          if (p.detail !== undefined) details.push(p.detail);
        },
      },
      stack,
    );
    const reason = (JSON.parse(await stack.blobs.getText(batchRoundKey('s-small', 1))) as BatchRoundRecord).reason;
    expect(reason).toMatch(/below the 10000 records a batch job/);
    expect(details).toContain(`sought on demand: ${reason}`);
    expect(survey.metadata.seekingEstimate).toMatchObject({ mode: 'batch', sought: { mode: 'on-demand', reason } });
  }, 120_000);

  it('runs a schedule entry that names no seeking mode as batch jobs, and one that asks for on-demand without', async () => {
    const seeker = scriptedSeeker();
    const stack = await stackWith('sched', seeker);
    const schedule = path.join(dir, 'schedule.json');
    const options = { chunkTokens: 90, maxSections: 3, targetWords: 300, rounds: 1 };
    await fs.writeFile(
      schedule,
      JSON.stringify({
        surveys: [
          { topic: 'language models for planning', corpus: 'corpus', options },
          { topic: 'robot task planning', corpus: 'corpus', options: { ...options, seekMode: 'on-demand' } },
        ],
      }),
    );

    const { index } = await runLocalSchedule(schedule, path.join(dir, 'out'), stack);

    expect(index.surveys.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    const rounds = (await stack.blobs.list('runs/')).filter((o) => o.key.endsWith('/batch/r1/batch.json'));
    expect(rounds).toHaveLength(1);
    const record = JSON.parse(await stack.blobs.getText(rounds[0].key)) as BatchRoundRecord;
    expect(record.mode).toBe('batch');
  }, 120_000);
});
