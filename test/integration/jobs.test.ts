/**
 * Upload triggers in local mode (local/engine/uploads.ts): a corpus ingested once, then a job of three
 * questions run on the synthesized workflow (aws-local-stepfunctions, dynalite, directory bucket,
 * offline extractive reader), results in input order; a duplicate delivery starts nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ExtractiveReader } from '../../shared/extractive';
import type { AgentModel, ReasonRequest, SeekRequest } from '../../shared/ports';
import { runRecordKey } from '../../shared/pipeline/layout';
import { loadJob, type JobResultLine, type JobSummary } from '../../shared/pipeline/jobs';
import type { RunRecord } from '../../shared/pipeline/run-record';
import { startLocalStack, type LocalStack } from '../../local/engine/stack';
import { ingestLocalCorpus, planLocalJob, runJob, submitJobFile } from '../../local/engine/uploads';

jest.setTimeout(120_000);

/** The extractive reader, counting its calls. */
class CountingModel implements AgentModel {
  readonly description = 'extractive, counted';
  seeks = 0;
  private readonly inner = new ExtractiveReader();
  seek(request: SeekRequest) {
    this.seeks += 1;
    return this.inner.seek(request);
  }
  reason(request: ReasonRequest) {
    return this.inner.reason(request);
  }
}

const filler = (i: number): string =>
  `Report ${i}. The harvest of the year was abundant and the treasury received its customary revenues. ` +
  `Roads were repaired in several districts and the postal service extended its routes to new towns.`;

describe('a job uploaded to jobs/ in local mode', () => {
  let dir: string;
  let stack: LocalStack;
  let model: CountingModel;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-jobs-it-'));
    model = new CountingModel();
    stack = await startLocalStack({ stateDir: path.join(dir, 'state'), model, retryIntervalMs: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ingests the corpus once, runs every question, writes results in input order, and starts nothing twice on a duplicate delivery', async () => {
    // Arrange: a small corpus, ingested with the chunk size the job uses
    const files: Record<string, string> = {
      'a.txt': [
        filler(1),
        'A part of the Cherokees, known by the name of Chickamaugas, inhabiting five villages on the Tennessee River, raided the frontier.',
        filler(2),
      ].join('\n\n'),
      'b.txt': [filler(3), 'The lighthouse at Cape Henlopen was finished in the autumn and its lamp was lit by the keeper Abraham Hargis.', filler(4)].join(
        '\n\n',
      ),
      'c.txt': [filler(5), filler(6)].join('\n\n'),
    };
    const corpusFiles = Object.entries(files).map(([id, text]) => {
      const file = path.join(dir, id);
      writeFileSync(file, text);
      return { id, path: file };
    });
    const ingested = await ingestLocalCorpus(stack.blobs, 'frontier', corpusFiles, { chunkTokens: 128 });
    expect(ingested.outcome).toBe('ingested');
    const again = await ingestLocalCorpus(stack.blobs, 'frontier', corpusFiles, { chunkTokens: 128 });
    expect(again.outcome).toBe('unchanged');

    const questions = [
      'By what name was the part of the Cherokees living in five villages on the Tennessee River known?',
      'Who lit the lamp of the lighthouse at Cape Henlopen?',
      'What did the treasury receive?',
    ];
    const jobFile = path.join(dir, 'weekly.json');
    writeFileSync(
      jobFile,
      JSON.stringify({ corpus: 'frontier', questions: questions.map((question) => ({ question })), options: { chunkTokens: 128, rounds: 1 } }),
    );
    const key = await submitJobFile(stack.blobs, jobFile);

    // Act: the upload event, then a duplicate delivery of the same event
    const first = await runJob(stack, key, { concurrency: 2 });
    const seeksAfterFirst = model.seeks;
    const second = await runJob(stack, key, { concurrency: 2 });

    // Assert: every question ran once, in input order in the results
    expect(key).toBe('jobs/weekly.json');
    expect(first).toMatchObject({ started: 3, alreadyStarted: 0 });
    const lines = (await stack.blobs.getText('results/weekly.jsonl'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as JobResultLine);
    expect(lines.map((l) => [l.index, l.question, l.status])).toEqual(questions.map((q, i) => [i, q, 'succeeded']));
    const answers = lines.map((l) => (l.status === 'succeeded' ? l.result.answer : ''));
    expect(answers[0]).toContain('Chickamaugas');
    expect(answers[1]).toContain('Abraham Hargis');
    const summary = JSON.parse(await stack.blobs.getText('results/weekly.summary.json')) as JobSummary;
    expect(summary).toMatchObject({ job: 'weekly', status: 'completed', questions: 3, succeeded: 3, failed: 0, failures: [] });
    expect(summary.answerable).toBeGreaterThanOrEqual(2);
    expect(summary.usage.seeker.calls).toBe(seeksAfterFirst);

    // Assert: each run reused the ingested chunks
    for (const line of lines) {
      const record = JSON.parse(await stack.blobs.getText(runRecordKey(line.runId))) as RunRecord;
      expect(record.chunkCache).toEqual({ key: (ingested as { ingestion: { cacheKey: string } }).ingestion.cacheKey, hit: true });
    }

    // Assert: the duplicate delivery started nothing and wrote the same results
    expect(second).toMatchObject({ jobId: first.jobId, started: 0, alreadyStarted: 3 });
    expect(model.seeks).toBe(seeksAfterFirst);
    expect({ ...second.summary, completedAt: '' }).toEqual({ ...first.summary, completedAt: '' });
  });

  it('runs again a question whose execution was left RUNNING by a process that is gone (a killed job), and no other', async () => {
    // Arrange: a job of two questions, its execution records as a killed `job` process leaves them:
    // question 1 RUNNING under a pid that no longer exists, question 2 RUNNING under a live one
    writeFileSync(path.join(dir, 'k.txt'), [filler(7), 'The lighthouse at Cape Henlopen was lit by the keeper Abraham Hargis.'].join('\n\n'));
    await ingestLocalCorpus(stack.blobs, 'killed', [{ id: 'k.txt', path: path.join(dir, 'k.txt') }], { chunkTokens: 128 });
    const jobFile = path.join(dir, 'killjob.json');
    writeFileSync(
      jobFile,
      JSON.stringify({
        corpus: 'killed',
        questions: [{ question: 'Who lit the lamp of the lighthouse at Cape Henlopen?' }, { question: 'Who kept it?' }],
        options: { chunkTokens: 128, rounds: 1 },
      }),
    );
    const key = await submitJobFile(stack.blobs, jobFile);
    const state = await planLocalJob(stack.blobs, key);
    const { items } = await loadJob(stack.blobs, state.jobId);
    const gone = spawnSync(process.execPath, ['-e', '0']).pid as number;
    await stack.blobs.put(`runs/_executions/${items[0].executionName}.json`, JSON.stringify({ status: 'RUNNING', pid: gone }));
    await stack.blobs.put(`runs/_executions/${items[1].executionName}.json`, JSON.stringify({ status: 'RUNNING', pid: process.pid }));

    // Act
    const outcome = await runJob(stack, key, { concurrency: 1 });

    // Assert: the interrupted question ran and answered; the live one was not started twice
    expect(outcome).toMatchObject({ started: 1, alreadyStarted: 1 });
    const lines = (await stack.blobs.getText('results/killjob.jsonl'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as JobResultLine);
    expect(lines[0].status).toBe('succeeded');
    expect(lines[0].status === 'succeeded' && lines[0].result.answer).toContain('Abraham Hargis');
    expect(lines[1].status).toBe('failed');
  });

  it("rejects a job whose corpus points into the service's own data at planning time, before any question runs", async () => {
    // Arrange: runs/ holds the previous test's run objects, which a job must never read as a corpus
    const jobFile = path.join(dir, 'internal.json');
    writeFileSync(jobFile, JSON.stringify({ corpus: { prefix: 'runs/' }, questions: [{ question: 'What is in there?' }] }));
    const key = await submitJobFile(stack.blobs, jobFile);
    const seeksBefore = model.seeks;
    // Act
    const run = runJob(stack, key);
    // Assert
    await expect(run).rejects.toThrow("Invalid job file: corpus.prefix: prefix must not point into runs/ (the service's own data)");
    const summary = JSON.parse(await stack.blobs.getText('results/internal.summary.json')) as JobSummary;
    expect(summary).toMatchObject({ status: 'rejected', questions: 0 });
    expect(model.seeks).toBe(seeksBefore);
    expect(await stack.blobs.exists('results/internal.jsonl')).toBe(false);
  });
});
