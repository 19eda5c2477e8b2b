/**
 * The Lambda handlers' structured logs (lambdas/handlers.ts with a Powertools Logger) and the upload
 * trigger handlers (lambdas/trigger-handlers.ts), over the local directory bucket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { makeHandlers } from '../../lambdas/handlers';
import { makeSurveyHandlers } from '../../lambdas/survey-handlers';
import { runIdOf } from '../../lambdas/logged';
import { makeIngestBatchHandler, makeJobHandlers } from '../../lambdas/trigger-handlers';
import { EmptyCorpusError, InvalidInputError } from '../../shared/errors';
import type { ExecutionLookup } from '../../shared/executions';
import type { MessageStore } from '../../shared/ports';
import { createdObjectOf, decodeS3EventKey } from '../../shared/pipeline/s3-event';

/** An S3 Object Created event as EventBridge delivers it. */
const objectCreated = (key: string, etag = '"0123abcd"') => ({
  version: '0',
  id: 'e1',
  'detail-type': 'Object Created',
  source: 'aws.s3',
  account: '123456789012',
  time: '2025-01-01T00:00:00Z',
  region: 'us-west-2',
  resources: ['arn:aws:s3:::bucket'],
  detail: { version: '0', bucket: { name: 'bucket' }, object: { key, size: 10, etag, sequencer: '00' }, reason: 'PutObject' },
});

/** Every JSON line the logger printed (Powertools writes one JSON object per line to stdout/stderr). */
function captureLogs(): { lines: () => Array<Record<string, unknown>>; restore: () => void } {
  const written: string[] = [];
  const capture = (chunk: unknown): boolean => {
    written.push(String(chunk));
    return true;
  };
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  return {
    lines: () =>
      written
        .join('')
        .split('\n')
        .filter((l) => l.trim().startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    restore: () => {
      out.mockRestore();
      err.mockRestore();
    },
  };
}

describe('structured logs of the workflow handlers', () => {
  let dir: string;
  let blobs: FsBlobStore;
  const store = {} as MessageStore; // Prepare never uses the store

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-log-'));
    blobs = new FsBlobStore(dir);
    await blobs.put('corpora/c/a.txt', 'The keeper lit the lamp of the lighthouse every evening at dusk.');
    await blobs.put('corpora/empty/a.txt', '   ');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('prints JSON lines that carry the run id and the task, for a success and for a failure with its error name', async () => {
    // Arrange
    const logs = captureLogs();
    const logger = new Logger({ serviceName: 'extagents-test', logLevel: 'INFO' });
    const handlers = makeHandlers({
      blobs,
      store,
      model: () => {
        throw new Error('no model');
      },
      logger,
    });
    try {
      // Act
      await handlers.prepare({ runId: 'run-ok', question: 'Who lit the lamp?', corpus: { prefix: 'corpora/c/' } });
      await expect(handlers.prepare({ runId: 'run-empty', question: 'Q?', corpus: { prefix: 'corpora/empty/' } })).rejects.toThrow(EmptyCorpusError);
    } finally {
      logs.restore();
    }
    // Assert
    const lines = logs.lines();
    expect(lines).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'Prepare done', service: 'extagents-test', runId: 'run-ok', task: 'Prepare' }),
      expect.objectContaining({
        level: 'ERROR',
        message: 'Prepare failed',
        runId: 'run-empty',
        task: 'Prepare',
        error: expect.objectContaining({ name: 'EmptyCorpusError' }),
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('Who lit the lamp?');
  });

  it('logs the survey handlers the same way (task, the survey id as run id, the error name)', async () => {
    // Arrange
    const logs = captureLogs();
    const logger = new Logger({ serviceName: 'extagents-test', logLevel: 'INFO' });
    const survey = makeSurveyHandlers({
      blobs,
      store,
      model: () => {
        throw new Error('no model');
      },
      logger,
    });
    try {
      // Act: a survey over a corpus without usable text fails in SurveyPrepare
      await expect(survey.prepare({ surveyId: 'survey-empty', topic: 'Lamps', corpus: 'empty', date: '2025-01-01' })).rejects.toThrow();
    } finally {
      logs.restore();
    }
    // Assert
    expect(logs.lines()).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        message: 'SurveyPrepare failed',
        runId: 'survey-empty',
        task: 'SurveyPrepare',
        error: expect.objectContaining({ name: expect.any(String) }),
      }),
    ]);
  });

  it("does not carry the previous invocation's run id into the next one (a warm container)", async () => {
    // Arrange
    const logs = captureLogs();
    const logger = new Logger({ serviceName: 'extagents-test', logLevel: 'INFO' });
    const handlers = makeHandlers({
      blobs,
      store,
      model: () => {
        throw new Error('no model');
      },
      logger,
    });
    try {
      // Act
      await handlers.prepare({ runId: 'run-first', question: 'Who lit the lamp?', corpus: { prefix: 'corpora/c/' } });
      await expect(handlers.prepare({ question: 'no run id' })).rejects.toThrow(InvalidInputError);
    } finally {
      logs.restore();
    }
    // Assert
    const [, failure] = logs.lines();
    expect(failure).toMatchObject({ level: 'ERROR', message: 'Prepare failed', task: 'Prepare' });
    expect(failure).not.toHaveProperty('runId');
  });

  it('prints nothing without a logger (the local run)', async () => {
    // Arrange
    const logs = captureLogs();
    const handlers = makeHandlers({
      blobs,
      store,
      model: () => {
        throw new Error('no model');
      },
    });
    try {
      // Act
      await handlers.prepare({ runId: 'run-quiet', question: 'Who lit the lamp?', corpus: { prefix: 'corpora/c/' } });
    } finally {
      logs.restore();
    }
    // Assert
    expect(logs.lines()).toEqual([]);
  });

  it('finds the run id of every task event shape', () => {
    expect(runIdOf({ runId: 'r1', round: 1, chunk: 0 })).toBe('r1');
    expect(runIdOf({ state: { runId: 'r2' }, force: false })).toBe('r2');
    expect(runIdOf('nonsense')).toBeUndefined();
  });
});

describe('the upload trigger handlers', () => {
  let dir: string;
  let blobs: FsBlobStore;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-trig-'));
    blobs = new FsBlobStore(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * The ingest queue's batch as the SQS event source mapping delivers it ("Using Lambda with Amazon
   * SQS", example event): one message per event, the EventBridge event as its body.
   */
  const batch = (bodies: unknown[]) => ({
    Records: bodies.map((body, i) => ({
      messageId: `m${i}`,
      receiptHandle: `h${i}`,
      body: typeof body === 'string' ? body : JSON.stringify(body),
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: '1735689600000', SenderId: 'AIDAEXAMPLE', ApproximateFirstReceiveTimestamp: '1735689600001' },
      messageAttributes: {},
      md5OfBody: '0123456789abcdef0123456789abcdef',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-west-2:123456789012:IngestQueue',
      awsRegion: 'us-west-2',
    })),
  });

  /** The bucket, counting how often each corpus is listed (once per ingestion of it). */
  function countingBlobs(failPrefix?: string): { store: FsBlobStore; listings: Map<string, number> } {
    const listings = new Map<string, number>();
    const store = new FsBlobStore(dir);
    const list = store.list.bind(store);
    store.list = async (prefix: string) => {
      listings.set(prefix, (listings.get(prefix) ?? 0) + 1);
      if (prefix === failPrefix) throw new Error('SlowDown: please reduce your request rate');
      return list(prefix);
    };
    return { store, listings };
  }

  it('ingests each corpus of a queued batch once, however many of its uploads the batch holds, and ignores other keys', async () => {
    // Arrange
    await blobs.put('corpora/reports/a.txt', 'The harbour was dredged and the quay repaired before the winter storms.');
    await blobs.put('corpora/reports/b.txt', 'The lighthouse keeper logged every ship that passed the point.');
    await blobs.put('corpora/letters/c.txt', 'Dear Anna, the orchard is in bloom and the bees are back.');
    const { store, listings } = countingBlobs();
    const ingest = makeIngestBatchHandler({ blobs: store, chunkTokens: 64 });
    const events = [
      objectCreated('corpora/reports/a.txt'),
      objectCreated('corpora/reports/b.txt'),
      objectCreated('corpora/loose.txt'),
      objectCreated('corpora/letters/c.txt'),
    ];
    // Act
    const first = await ingest(batch(events));
    const again = await ingest(batch([objectCreated('corpora/reports/a.txt')]));
    // Assert
    expect(first).toEqual({ batchItemFailures: [] });
    expect(again).toEqual({ batchItemFailures: [] });
    expect(Object.fromEntries(listings)).toEqual({ 'corpora/reports/': 2, 'corpora/letters/': 1 });
    const reports = JSON.parse(await blobs.getText('cache/corpora/reports/ingestion.json')) as { totals: { files: number; chunks: number } };
    expect(reports.totals).toMatchObject({ files: 2, chunks: 1 });
    expect(await blobs.exists('cache/corpora/letters/ingestion.json')).toBe(true);
  });

  it('reports as failed only the messages of a corpus whose ingestion failed, and those that are not Object Created events', async () => {
    // Arrange
    await blobs.put('corpora/reports/a.txt', 'The harbour was dredged and the quay repaired before the winter storms.');
    await blobs.put('corpora/letters/c.txt', 'Dear Anna, the orchard is in bloom and the bees are back.');
    const { store } = countingBlobs('corpora/letters/');
    const ingest = makeIngestBatchHandler({ blobs: store, chunkTokens: 64 });
    const deleted = { ...objectCreated('corpora/reports/a.txt'), 'detail-type': 'Object Deleted' };
    // Act
    const response = await ingest(
      batch([objectCreated('corpora/reports/a.txt'), objectCreated('corpora/letters/c.txt'), 'not json {', deleted, objectCreated('corpora/letters/c.txt')]),
    );
    // Assert: m1 and m4 (letters) failed to ingest; m2 and m3 can never be ingested (dead-lettered after the receives)
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(await blobs.exists('cache/corpora/reports/ingestion.json')).toBe(true);
    expect(await blobs.exists('cache/corpora/letters/ingestion.json')).toBe(false);
  });

  it('reports every message of an all-failed batch instead of throwing, and logs each rejection and each failed corpus once', async () => {
    // Arrange
    await blobs.put('corpora/letters/c.txt', 'Dear Anna, the orchard is in bloom and the bees are back.');
    const { store, listings } = countingBlobs('corpora/letters/');
    const logs = captureLogs();
    const logger = new Logger({ serviceName: 'extagents-test', logLevel: 'INFO' });
    const ingest = makeIngestBatchHandler({ blobs: store, chunkTokens: 64, logger });
    // Act
    let response: Awaited<ReturnType<typeof ingest>>;
    try {
      response = await ingest(batch([objectCreated('corpora/letters/c.txt'), 'not json {', objectCreated('corpora/letters/d.txt')]));
    } finally {
      logs.restore();
    }
    // Assert
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm0' }, { itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }] });
    expect(Object.fromEntries(listings)).toEqual({ 'corpora/letters/': 1 });
    expect(logs.lines()).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        message: 'Ingest rejected a queued message: not an S3 Object Created event',
        task: 'Ingest',
        messageId: 'm1',
        error: expect.stringMatching(/^SyntaxError: /),
      }),
      expect.objectContaining({
        level: 'ERROR',
        message: 'Ingest failed; its events will be received again',
        task: 'Ingest',
        corpusId: 'letters',
        events: 2,
        error: 'Error: SlowDown: please reduce your request rate',
      }),
    ]);
  });

  it('logs one outcome per corpus with the number of its events in the batch', async () => {
    // Arrange
    await blobs.put('corpora/reports/a.txt', 'The harbour was dredged and the quay repaired before the winter storms.');
    const logs = captureLogs();
    const logger = new Logger({ serviceName: 'extagents-test', logLevel: 'INFO' });
    const ingest = makeIngestBatchHandler({ blobs, chunkTokens: 64, logger });
    // Act
    try {
      await ingest(batch([objectCreated('corpora/reports/a.txt'), objectCreated('corpora/reports/a.txt'), objectCreated('loose.txt')]));
    } finally {
      logs.restore();
    }
    // Assert
    expect(logs.lines()).toEqual([
      expect.objectContaining({
        level: 'INFO',
        message: 'Ingest ignored the object',
        result: expect.objectContaining({ outcome: 'ignored', key: 'loose.txt' }),
      }),
      expect.objectContaining({
        level: 'INFO',
        message: 'Ingest ingested',
        task: 'Ingest',
        result: expect.objectContaining({ corpusId: 'reports', events: 2, chunks: 1 }),
      }),
    ]);
  });

  it('ingests the corpora of a batch one at a time, in the order the batch first names them', async () => {
    // Arrange
    await blobs.put('corpora/reports/a.txt', 'The harbour was dredged and the quay repaired before the winter storms.');
    await blobs.put('corpora/letters/c.txt', 'Dear Anna, the orchard is in bloom and the bees are back.');
    const store = new FsBlobStore(dir);
    const list = store.list.bind(store);
    const started: string[] = [];
    let running = 0;
    let most = 0;
    store.list = async (prefix: string) => {
      started.push(prefix);
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 20));
      running -= 1;
      return list(prefix);
    };
    const ingest = makeIngestBatchHandler({ blobs: store, chunkTokens: 64 });
    // Act
    const response = await ingest(
      batch([objectCreated('corpora/letters/c.txt'), objectCreated('corpora/reports/a.txt'), objectCreated('corpora/letters/c.txt')]),
    );
    // Assert
    expect(response).toEqual({ batchItemFailures: [] });
    expect(started).toEqual(['corpora/letters/', 'corpora/reports/']);
    expect(most).toBe(1);
  });

  it('refuses an event that is not an SQS batch, naming the field', async () => {
    // Arrange
    const ingest = makeIngestBatchHandler({ blobs, chunkTokens: 64 });
    // Act
    const run = ingest(objectCreated('corpora/reports/a.txt'));
    // Assert
    await expect(run).rejects.toThrow(InvalidInputError);
    await expect(run).rejects.toThrow('Records');
  });

  it('decodes event keys as S3 encodes them (+ for a space, %XX as UTF-8) before using them', async () => {
    // Arrange: the corpus "reports" named with an encoded letter (%70 = p); a job file with a "+"
    await blobs.put('corpora/reports/annual report 2024é.txt', 'The harbour was dredged before the winter storms.');
    const ingest = makeIngestBatchHandler({ blobs, chunkTokens: 64 });
    const jobs = makeJobHandlers({
      blobs,
      executions: { describe: async (name) => ({ name, status: 'RUNNING', startedAt: '2025-03-01T00:00:00.000Z' }) } as ExecutionLookup,
    });

    // Act
    const decoded = createdObjectOf(objectCreated('corpora/re%70orts/annual+report+2024%C3%A9.txt')).key;
    const ingested = await ingest(batch([objectCreated('corpora/re%70orts/annual+report+2024%C3%A9.txt')]));
    const job = await jobs.plan(objectCreated('jobs/night%2Brun.json')).catch((e: unknown) => e);
    const malformed = (() => {
      try {
        return createdObjectOf(objectCreated('corpora/reports/100%.txt'));
      } catch (error) {
        return error;
      }
    })();

    // Assert
    expect(decoded).toBe('corpora/reports/annual report 2024é.txt');
    expect(decodeS3EventKey('a%2Bb+c.txt')).toBe('a+b c.txt');
    expect(ingested).toEqual({ batchItemFailures: [] });
    expect(await blobs.exists('cache/corpora/reports/ingestion.json')).toBe(true);
    expect((job as Error).message).toContain('"jobs/night+run.json"');
    expect(malformed).toBeInstanceOf(InvalidInputError);
    expect((malformed as Error).message).toBe('The S3 event\'s object key "corpora/reports/100%.txt" is not URL-encoded UTF-8 (a malformed % sequence)');
  });

  it('plans a job from its upload event with the ETag (quotes removed) in the job id, and writes its results', async () => {
    // Arrange
    await blobs.put('jobs/nightly.json', JSON.stringify({ corpus: 'reports', questions: [{ question: 'What was repaired?' }] }));
    const executions: ExecutionLookup = {
      describe: async (name) => ({ name, status: 'FAILED', startedAt: '2025-03-01T00:00:00.000Z', error: 'ModelThrottledError', cause: 'too many requests' }),
    };
    const jobs = makeJobHandlers({ blobs, executions });
    // Act
    const state = await jobs.plan(objectCreated('jobs/nightly.json', '"abc"'));
    const again = await jobs.plan(objectCreated('jobs/nightly.json', 'abc'));
    const output = await jobs.results(state);
    // Assert
    expect(again.jobId).toBe(state.jobId);
    expect(state).toMatchObject({ name: 'nightly', questions: 1, itemsKey: `runs/_jobs/${state.jobId}/items.json` });
    expect(output).toEqual({ job: 'nightly', questions: 1, succeeded: 0, failed: 1, answerable: 0, resultsKey: 'results/nightly.jsonl' });
    await expect(jobs.results({ jobId: state.jobId })).rejects.toThrow(InvalidInputError);
  });
});
