/**
 * Batch jobs (shared/pipeline/jobs.ts): job file validation, deterministic execution names, results
 * in input order and the summary, over the local directory bucket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { InvalidInputError } from '../../shared/errors';
import type { ExecutionDescription, ExecutionLookup } from '../../shared/executions';
import { jobIdOf, jobNameOfKey, loadJob, parseJobFile, planJob, writeJobResults, type JobResultLine, type JobSummary } from '../../shared/pipeline/jobs';
import { resultKey } from '../../shared/pipeline/layout';
import type { RunResult } from '../../shared/types';

/** A RunResult with the fields the job summary reads (the rest of the shape belongs to the workflow). */
const runResult = (runId: string, question: string, answerable: boolean): RunResult =>
  ({
    runId,
    question,
    answer: answerable ? 'Chickamaugas' : 'NO ANSWER',
    answerable,
    citations: [],
    trace: [],
    usage: { seeker: { calls: 3, inputTokens: 300, outputTokens: 30 }, reasoner: { calls: 1, inputTokens: 100, outputTokens: 10 } },
    rounds: 1,
    chunks: 3,
    poolSize: 1,
    skipped: [],
    warnings: [],
  }) as Partial<RunResult> as RunResult;

describe('job files', () => {
  it('accepts a corpus id, questions with their own options, and job-wide options', () => {
    // Act
    const job = parseJobFile(
      JSON.stringify({ corpus: 'sotu', questions: [{ question: 'Who?' }, { question: 'When?', options: { rounds: 1 } }], options: { chunkTokens: 512 } }),
    );
    // Assert
    expect(job.questions).toHaveLength(2);
    expect(job.corpus).toEqual({ id: 'sotu' });
  });

  it('ignores a leading UTF-8 byte order mark, as for corpus files', () => {
    const job = parseJobFile(`\uFEFF${JSON.stringify({ corpus: 'sotu', questions: [{ question: 'Who?' }] })}`);

    expect(job.corpus).toEqual({ id: 'sotu' });
  });

  it.each([
    ['a corpus id object', { id: 'sotu' }],
    ['a prefix', { prefix: 'corpora/sotu/' }],
    ['keys', { keys: ['corpora/sotu/a.txt', 'notes/b.txt'] }],
  ])('accepts the API corpus object: %s', (_what, corpus) => {
    expect(parseJobFile(JSON.stringify({ corpus, questions: [{ question: 'Q' }] })).corpus).toEqual(corpus);
  });

  it.each([
    ['not JSON', '{"corpus":', 'The job file is not valid JSON'],
    ['no questions', JSON.stringify({ corpus: 'sotu', questions: [] }), 'questions: a job needs at least one question'],
    ['an empty question', JSON.stringify({ corpus: 'sotu', questions: [{ question: '  ' }] }), 'questions.0.question: question must not be empty'],
    ['an unknown field', JSON.stringify({ corpus: 'sotu', questions: [{ question: 'Q' }], priority: 1 }), 'Invalid job file: unknown field "priority"'],
    [
      'an unknown field of a question',
      JSON.stringify({ corpus: 'sotu', questions: [{ question: 'Q', priority: 1 }] }),
      'Invalid job file: questions.0: unknown field "priority"',
    ],
    [
      'an unknown run option',
      JSON.stringify({ corpus: 'sotu', questions: [{ question: 'Q' }], options: { priority: 1 } }),
      'Invalid job file: options: unknown field "priority"',
    ],
    ['an invalid corpus id', JSON.stringify({ corpus: '../x', questions: [{ question: 'Q' }] }), 'corpus: a corpus id is 1-128 characters'],
    ['no corpus', JSON.stringify({ questions: [{ question: 'Q' }] }), 'corpus: required'],
    [
      'a bad run option of one question',
      JSON.stringify({ corpus: 'sotu', questions: [{ question: 'Q' }, { question: 'R', options: { rounds: 0 } }] }),
      'questions.1.options.rounds: Too small',
    ],
    // The corpus rules are the API's (shared/api/schemas.ts CorpusRefSchema).
    [
      "a prefix into the service's own data",
      JSON.stringify({ corpus: { prefix: 'runs/' }, questions: [{ question: 'Q' }] }),
      'corpus.prefix: prefix must not point into runs/',
    ],
    [
      'a key of another bucket',
      JSON.stringify({ corpus: { keys: ['s3://other/a.txt'] }, questions: [{ question: 'Q' }] }),
      'corpus.keys.0: key must be a key inside the project bucket, not a URI',
    ],
    [
      'a key with a .. segment',
      JSON.stringify({ corpus: { keys: ['corpora/../cache/x'] }, questions: [{ question: 'Q' }] }),
      'corpus.keys.0: key must not contain empty, "." or ".." path segments',
    ],
    [
      'a key with a segment of 256 characters',
      JSON.stringify({ corpus: { keys: [`corpora/c/${'b'.repeat(256)}`] }, questions: [{ question: 'Q' }] }),
      'corpus.keys.0: key must not contain a path segment longer than 255 characters',
    ],
    [
      'two corpus sources',
      JSON.stringify({ corpus: { id: 'sotu', prefix: 'corpora/sotu/' }, questions: [{ question: 'Q' }] }),
      'corpus: corpus needs exactly one of id, prefix or keys',
    ],
    ['an unknown corpus field', JSON.stringify({ corpus: { bucket: 'b' }, questions: [{ question: 'Q' }] }), 'corpus: unknown field "bucket"'],
    [
      'more than 1,000 keys',
      JSON.stringify({ corpus: { keys: Array.from({ length: 1001 }, (_, i) => `k/${i}`) }, questions: [{ question: 'Q' }] }),
      'corpus.keys',
    ],
  ])('rejects %s with a message naming the problem', (_what, text, message) => {
    // Act
    const parse = () => parseJobFile(text);
    // Assert
    expect(parse).toThrow(InvalidInputError);
    expect(parse).toThrow(message);
  });

  it('reports an empty prefix once, as the API does', () => {
    const parse = () => parseJobFile(JSON.stringify({ corpus: { prefix: '' }, questions: [{ question: 'Q' }] }));

    expect(parse).toThrow(new InvalidInputError('Invalid job file: corpus.prefix: prefix must not be empty'));
  });

  it('takes the job name from jobs/<name>.json and refuses other keys', () => {
    expect(jobNameOfKey('jobs/weekly-report.json')).toBe('weekly-report');
    expect(() => jobNameOfKey('jobs/a/b.json')).toThrow(InvalidInputError);
    expect(() => jobNameOfKey('jobs/weekly.txt')).toThrow(InvalidInputError);
    expect(() => jobNameOfKey('corpora/weekly.json')).toThrow(InvalidInputError);
  });

  it('derives one job id per uploaded version: same key and ETag give the same id, a new ETag or version another', () => {
    // Act
    const one = jobIdOf({ key: 'jobs/w.json', etag: 'abc' });
    // Assert
    expect(jobIdOf({ key: 'jobs/w.json', etag: 'abc' })).toBe(one);
    expect(jobIdOf({ key: 'jobs/w.json', etag: 'abd' })).not.toBe(one);
    expect(jobIdOf({ key: 'jobs/w.json', etag: 'abc', versionId: 'v2' })).not.toBe(one);
    expect(one).toMatch(/^w-[0-9a-f]{16}$/);
  });
});

describe('planning and results of a job', () => {
  let dir: string;
  let blobs: FsBlobStore;
  const ref = { key: 'jobs/weekly.json', etag: 'e1' };
  const questions = ['First question?', 'Second question?', 'Third question?'];

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-jobs-'));
    blobs = new FsBlobStore(dir);
    await blobs.put(
      ref.key,
      JSON.stringify({
        corpus: 'reports',
        questions: questions.map((question, i) => (i === 2 ? { question, options: { rounds: 1 } } : { question })),
        options: { chunkTokens: 256 },
      }),
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('plans one item per question in input order, with deterministic execution names and merged options', async () => {
    // Act
    const state = await planJob(ref, { blobs });
    const again = await planJob(ref, { blobs });
    // Assert
    expect(again).toEqual(state);
    const { items, plan } = await loadJob(blobs, state.jobId);
    expect(plan).toMatchObject({ name: 'weekly', questions: 3, resultsKey: 'results/weekly.jsonl', summaryKey: 'results/weekly.summary.json' });
    expect(items.map((i) => i.executionName)).toEqual([0, 1, 2].map((i) => `${state.jobId}-q${i}`));
    expect(items.map((i) => i.input.question)).toEqual(questions);
    expect(items[0].input).toEqual({
      runId: items[0].executionName,
      question: questions[0],
      corpus: { prefix: 'corpora/reports/' },
      options: { chunkTokens: 256 },
    });
    expect(items[2].input.options).toEqual({ chunkTokens: 256, rounds: 1 });
    for (const item of items) expect(item.executionName.length).toBeLessThanOrEqual(80);
  });

  it("puts the host's default options under the job's and the question's (the AWS jobs trigger's seekMode 'batch')", async () => {
    await blobs.put(
      'jobs/nightly.json',
      JSON.stringify({
        corpus: 'reports',
        questions: [{ question: 'What changed?' }, { question: 'Who signed?', options: { seekMode: 'on-demand' } }],
        options: { rounds: 1 },
      }),
    );

    const state = await planJob({ key: 'jobs/nightly.json', etag: 'n1' }, { blobs, defaultOptions: { seekMode: 'batch' } });

    const { items } = await loadJob(blobs, state.jobId);
    expect(items.map((i) => i.input.options)).toEqual([
      { seekMode: 'batch', rounds: 1 },
      { seekMode: 'on-demand', rounds: 1 },
    ]);
  });

  it('writes a rejected summary naming the error when the job file is invalid, and starts nothing', async () => {
    // Arrange
    await blobs.put('jobs/broken.json', JSON.stringify({ corpus: 'reports', questions: [{ question: '' }] }));
    // Act
    const plan = planJob({ key: 'jobs/broken.json', etag: 'x' }, { blobs });
    // Assert
    await expect(plan).rejects.toThrow(InvalidInputError);
    const summary = JSON.parse(await blobs.getText('results/broken.summary.json')) as JobSummary;
    expect(summary).toMatchObject({ job: 'broken', status: 'rejected', questions: 0, error: { name: 'InvalidInputError' } });
    expect(summary.error?.message).toContain('question must not be empty');
    expect(await blobs.list('runs/_jobs/')).toEqual([]);
  });

  it('rejects a job whose corpus the API would reject at planning time, with a rejected summary, and plans nothing', async () => {
    // Arrange
    await blobs.put('jobs/internal.json', JSON.stringify({ corpus: { prefix: 'runs/' }, questions: [{ question: 'Q' }] }));
    // Act
    const plan = planJob({ key: 'jobs/internal.json', etag: 'x' }, { blobs });
    // Assert
    await expect(plan).rejects.toThrow("Invalid job file: corpus.prefix: prefix must not point into runs/ (the service's own data)");
    const summary = JSON.parse(await blobs.getText('results/internal.summary.json')) as JobSummary;
    expect(summary).toMatchObject({ status: 'rejected', error: { name: 'InvalidInputError', message: expect.stringContaining('corpus.prefix') } });
    expect(await blobs.list('runs/_jobs/')).toEqual([]);
  });

  it('resolves the corpus as the API does: an id object is its prefix, keys stay keys', async () => {
    // Arrange
    await blobs.put('jobs/by-id.json', JSON.stringify({ corpus: { id: 'reports' }, questions: [{ question: 'Q' }] }));
    await blobs.put('jobs/by-keys.json', JSON.stringify({ corpus: { keys: ['corpora/reports/a.txt'] }, questions: [{ question: 'Q' }] }));
    // Act
    const byId = await loadJob(blobs, (await planJob({ key: 'jobs/by-id.json', etag: 'x' }, { blobs })).jobId);
    const byKeys = await loadJob(blobs, (await planJob({ key: 'jobs/by-keys.json', etag: 'x' }, { blobs })).jobId);
    // Assert
    expect(byId.plan.corpus).toEqual({ prefix: 'corpora/reports/' });
    expect(byKeys.items[0].input.corpus).toEqual({ keys: ['corpora/reports/a.txt'] });
  });

  it('writes one result line per question in input order, the error for a failed one, and sums the summary', async () => {
    // Arrange: questions 0 and 2 finished (2 refused), question 1 failed with a typed error
    const state = await planJob(ref, { blobs });
    const { items } = await loadJob(blobs, state.jobId);
    await blobs.put(resultKey(items[2].executionName), JSON.stringify(runResult(items[2].executionName, questions[2], false)));
    await blobs.put(resultKey(items[0].executionName), JSON.stringify(runResult(items[0].executionName, questions[0], true)));
    const described: string[] = [];
    const executions: ExecutionLookup = {
      async describe(name): Promise<ExecutionDescription> {
        described.push(name);
        return { name, status: 'FAILED', startedAt: '2025-03-01T00:00:00.000Z', error: 'EmptyCorpusError', cause: 'The corpus has no usable text' };
      },
    };
    // Act
    const summary = await writeJobResults(state.jobId, { blobs, executions, now: () => new Date('2025-03-01T00:00:00Z') });
    // Assert
    const lines = (await blobs.getText('results/weekly.jsonl'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as JobResultLine);
    expect(lines.map((l) => [l.index, l.question, l.status])).toEqual([
      [0, questions[0], 'succeeded'],
      [1, questions[1], 'failed'],
      [2, questions[2], 'succeeded'],
    ]);
    expect(lines[1]).toMatchObject({ runId: items[1].executionName, error: { name: 'EmptyCorpusError', message: 'The corpus has no usable text' } });
    expect(lines[0]).toMatchObject({ result: { answer: 'Chickamaugas', runId: items[0].executionName } });
    expect(described).toEqual([items[1].executionName]);
    expect(summary).toMatchObject({
      job: 'weekly',
      status: 'completed',
      questions: 3,
      succeeded: 2,
      failed: 1,
      answerable: 1,
      usage: { seeker: { calls: 6, inputTokens: 600, outputTokens: 60 }, reasoner: { calls: 2, inputTokens: 200, outputTokens: 20 } },
      failures: [{ index: 1, question: questions[1], error: { name: 'EmptyCorpusError' } }],
      completedAt: '2025-03-01T00:00:00.000Z',
    });
    expect(JSON.parse(await blobs.getText('results/weekly.summary.json'))).toEqual(summary);
  });
});
