/**
 * `extagents survey` end to end: the corpus put into the local bucket, one execution of the
 * synthesized survey state machine (local/engine/stack.ts: the CDK definition, every Lambda task bound to
 * its in-process handler), the Markdown and metadata copied out; and a schedule of such executions.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ExtractiveReader } from '../../shared/extractive';
import { ExtractiveSurveyModel } from '../../shared/survey/extractive';
import { lexicalSupport } from '../../shared/survey/citations';
import type { SurveyMetadata } from '../../shared/survey/types';
import { SURVEY_STATE_NAMES } from '../../infra/survey';
import { startLocalStack, type LocalStack } from '../../local/engine/stack';
import { runLocalSchedule, runLocalSurvey, type ScheduleIndex } from '../../local/engine/survey';
import { SURVEY_PAPERS } from '../support/survey-corpus';

describe('local survey (extractive, end to end through the survey state machine)', () => {
  let stateDir: string;
  let stack: LocalStack;
  let dir: string;

  beforeAll(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'extagents-survey-state-'));
    stack = await startLocalStack({
      stateDir,
      model: new ExtractiveReader(),
      surveyModel: new ExtractiveSurveyModel({ minFacetSources: 2 }),
      retryIntervalMs: 0,
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await fs.rm(stateDir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'extagents-survey-'));
    const jsonl = SURVEY_PAPERS.map((p) =>
      JSON.stringify({ id: p.id, title: p.title, abstract: p.text.split('\n\n')[1], authors: p.authors, year: p.year, link: p.link, categories: p.categories }),
    ).join('\n');
    await fs.mkdir(path.join(dir, 'corpus'));
    await fs.writeFile(path.join(dir, 'corpus', 'papers.jsonl'), jsonl);
    await fs.writeFile(
      path.join(dir, 'corpus', 'notes.md'),
      '# Robot planning notes\n\nRobot task planning with language models needs feedback from the robot after each robot action.\n',
    );
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

  it('runs the synthesized survey state machine and writes a Markdown survey with checked citations, references and metadata', async () => {
    // Arrange
    const output = path.join(dir, 'out', 'survey.md');
    const phases = new Set<string>();
    const maps: string[] = [];
    expect(stack.surveyDefinition.StartAt).toBe(SURVEY_STATE_NAMES.SurveyPrepare);
    // Act
    const { execution, metadataPath } = await runLocalSurvey(
      {
        corpus: [path.join(dir, 'corpus')],
        topic: 'language models for planning',
        options: { chunkTokens: 90, maxSections: 3, targetWords: 300 },
        output,
        surveyId: 'survey-local-1',
        date: '2025-03-01',
        onProgress: (p) => {
          phases.add(p.phase);
          if (p.phase === 'seek' && p.done === 0) maps.push(p.detail ?? '');
        },
      },
      stack,
    );
    // Assert
    const markdown = await fs.readFile(output, 'utf8');
    const metadata = JSON.parse(await fs.readFile(metadataPath, 'utf8')) as SurveyMetadata;
    // The execution wrote the survey where SurveyAssemble writes it on AWS; the CLI output is a copy.
    expect(execution).toMatchObject({
      surveyId: 'survey-local-1',
      markdownKey: 'surveys/language-models-for-planning/2025-03-01/survey.md',
      metadataKey: 'surveys/language-models-for-planning/2025-03-01/survey.json',
    });
    await expect(stack.blobs.getText(execution.markdownKey)).resolves.toBe(markdown);
    await expect(stack.blobs.exists('corpora/survey-local-1/papers.jsonl')).resolves.toBe(true);
    expect(maps[0]).toBe(SURVEY_STATE_NAMES.SeekSources);
    expect(markdown).toMatch(/^# .+Extractive Survey/);
    expect(markdown).toContain('## References');
    expect(metadata.extractive).toBe(true);
    expect(metadata.sources.available).toBe(13);
    expect(metadata.sections.length).toBeGreaterThanOrEqual(1);
    expect(metadata.citations.kept).toBeGreaterThan(0);
    expect(metadata.citations.removed).toBe(0);
    expect([...phases]).toEqual(['prepare', 'seek', 'outline', 'section', 'write', 'assemble']);
    expect(execution.citations).toBe(metadata.citations.kept);
    // Every citation names a corpus source whose text contains the cited sentence, and is listed in the references.
    const byId = new Map(SURVEY_PAPERS.map((p) => [p.id, p.text]));
    byId.set('notes.md', '# Robot planning notes\n\nRobot task planning with language models needs feedback from the robot after each robot action.\n');
    const body = markdown.slice(0, markdown.indexOf('## References'));
    const cited = [...body.matchAll(/([^.\]]+\.)\s\[([^\]]+)\]/g)];
    expect(cited.length).toBe(metadata.citations.kept);
    for (const match of cited) {
      const source = byId.get(match[2]);
      expect(source).toBeDefined();
      expect(lexicalSupport(match[1], source ?? '')).toBe(1);
      expect(markdown).toContain(`- [${match[2]}] `);
    }
  }, 60_000);

  it('runs a schedule: failing surveys do not stop the others, and the index records each', async () => {
    // Arrange
    await fs.writeFile(path.join(dir, 'empty.jsonl'), `${JSON.stringify({ id: 'x1', abstract: 'no title' })}\n`);
    const schedule = {
      surveys: [
        { topic: 'language models for planning', corpus: 'corpus', options: { chunkTokens: 90, maxSections: 2, targetWords: 200 } },
        { topic: 'planning', corpus: 'missing-corpus' },
        { topic: 'robot task planning', corpus: ['corpus/papers.jsonl'], options: { chunkTokens: 90, maxSections: 2, targetWords: 200 } },
        { topic: 'planning', corpus: 'empty.jsonl' },
      ],
    };
    await fs.writeFile(path.join(dir, 'schedule.json'), JSON.stringify(schedule));
    // Act
    const { index, indexPath } = await runLocalSchedule(path.join(dir, 'schedule.json'), path.join(dir, 'out'), stack, {
      now: () => new Date('2025-03-01T02:00:00Z'),
    });
    // Assert
    expect(JSON.parse(await fs.readFile(indexPath, 'utf8'))).toEqual(index as unknown as ScheduleIndex);
    expect(index.surveys.map((s) => [s.topic, s.status])).toEqual([
      ['language models for planning', 'succeeded'],
      ['planning', 'failed'],
      ['robot task planning', 'succeeded'],
      ['planning', 'failed'],
    ]);
    expect(index.surveys[0].markdown).toBe('surveys/language-models-for-planning/2025-03-01/survey.md');
    expect(index.surveys[1].error?.name).toBe('InvalidInputError');
    // Rejected by SurveyPrepare (the SurveyRejected Fail state), reported as the handler's own error.
    expect(index.surveys[3].error).toMatchObject({ name: 'EmptyCorpusError', message: expect.stringContaining('no usable source') });
    await expect(fs.readFile(path.join(dir, 'out', index.surveys[2].markdown ?? ''), 'utf8')).resolves.toContain('## References');
  }, 60_000);
});
