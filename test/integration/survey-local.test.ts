import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ExtractiveReader } from '../../shared/extractive';
import { ExtractiveSurveyModel } from '../../shared/survey/extractive';
import { lexicalSupport } from '../../shared/survey/citations';
import type { SurveyMetadata } from '../../shared/survey/types';
import { runLocalSchedule, runLocalSurvey, type ScheduleIndex } from '../../local/survey';
import { SURVEY_PAPERS } from '../support/survey-corpus';

const models = () => ({ seeker: new ExtractiveReader(), model: new ExtractiveSurveyModel({ minFacetSources: 2 }) });

describe('local survey (extractive, end to end)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'extagents-survey-'));
    const jsonl = SURVEY_PAPERS.map((p) => JSON.stringify({ id: p.id, title: p.title, abstract: p.text.split('\n\n')[1], authors: p.authors, year: p.year, link: p.link, categories: p.categories })).join('\n');
    await fs.mkdir(path.join(dir, 'corpus'));
    await fs.writeFile(path.join(dir, 'corpus', 'papers.jsonl'), jsonl);
    await fs.writeFile(path.join(dir, 'corpus', 'notes.md'), '# Robot planning notes\n\nRobot task planning with language models needs feedback from the robot after each robot action.\n');
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

  it('writes a Markdown survey with checked citations, a references list and its metadata', async () => {
    const output = path.join(dir, 'out', 'survey.md');
    const phases = new Set<string>();
    const { result, metadataPath } = await runLocalSurvey(
      { corpus: [path.join(dir, 'corpus')], topic: 'language models for planning', options: { chunkTokens: 90, maxSections: 3, targetWords: 300 }, output, onProgress: (p) => phases.add(p.phase) },
      models(),
    );
    const markdown = await fs.readFile(output, 'utf8');
    const metadata = JSON.parse(await fs.readFile(metadataPath, 'utf8')) as SurveyMetadata;
    expect(markdown).toBe(result.markdown);
    expect(markdown).toMatch(/^# .+Extractive Survey/);
    expect(markdown).toContain('## References');
    expect(metadata.extractive).toBe(true);
    expect(metadata.sources.available).toBe(13);
    expect(metadata.sections.length).toBeGreaterThanOrEqual(1);
    expect(metadata.citations.kept).toBeGreaterThan(0);
    expect(metadata.citations.removed).toBe(0);
    expect([...phases]).toEqual(['seek', 'outline', 'section', 'write', 'assemble']);
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
  });

  it('runs a schedule: one failing survey does not stop the others, and the index records both', async () => {
    const schedule = {
      surveys: [
        { topic: 'language models for planning', corpus: 'corpus', options: { chunkTokens: 90, maxSections: 2, targetWords: 200 } },
        { topic: 'planning', corpus: 'missing-corpus' },
        { topic: 'robot task planning', corpus: ['corpus/papers.jsonl'], options: { chunkTokens: 90, maxSections: 2, targetWords: 200 } },
      ],
    };
    await fs.writeFile(path.join(dir, 'schedule.json'), JSON.stringify(schedule));
    const { index, indexPath } = await runLocalSchedule(path.join(dir, 'schedule.json'), path.join(dir, 'out'), models(), { now: () => new Date('2025-03-01T02:00:00Z') });
    expect(JSON.parse(await fs.readFile(indexPath, 'utf8'))).toEqual(index as unknown as ScheduleIndex);
    expect(index.surveys.map((s) => [s.topic, s.status])).toEqual([
      ['language models for planning', 'succeeded'],
      ['planning', 'failed'],
      ['robot task planning', 'succeeded'],
    ]);
    expect(index.surveys[0].markdown).toBe('surveys/language-models-for-planning/2025-03-01/survey.md');
    expect(index.surveys[1].error?.name).toBe('InvalidInputError');
    await expect(fs.readFile(path.join(dir, 'out', index.surveys[2].markdown ?? ''), 'utf8')).resolves.toContain('## References');
  });
});
