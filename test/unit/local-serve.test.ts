/**
 * The local server's parts without a stack: the run launcher (background executions, bounded
 * concurrency, statuses like DescribeExecution, records across restarts), the upload URL
 * signer (signature, expiry, signed length and content type, the 500 MiB limit), its secret kept in
 * the state directory, and the token rules.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { ExecutionFailedError } from '../../local/engine/engine';
import { LocalExecutions, executionRecordKey } from '../../local/engine/executions';
import { LocalUploadSigner, MAX_LOCAL_UPLOAD_BYTES, UPLOAD_SECRET_FILE, loadUploadSecret, tokenProblem } from '../../local/services/serve';
import type { ExecutionDescription } from '../../shared/executions';
import { MAX_FILE_BYTES } from '../../shared/api/schemas';
import { ConfigurationError, EmptyCorpusError, InvalidInputError, RunNotCancellableError } from '../../shared/errors';
import type { PrepareEvent } from '../../shared/pipeline/state';

const input = (runId: string): PrepareEvent => ({ runId, question: 'Q', corpus: { prefix: 'corpora/c1/' } });

/** A promise with its resolve and reject. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Let pending I/O and promise callbacks run until `condition` holds (bounded by the test timeout). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('LocalExecutions (serve)', () => {
  let dir: string;
  let blobs: FsBlobStore;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-launcher-'));
    blobs = new FsBlobStore(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs at most maxConcurrentRuns executions at once; the others wait and are reported RUNNING', async () => {
    const gates = new Map<string, ReturnType<typeof deferred<unknown>>>();
    const running: string[] = [];
    const ended: ExecutionDescription[] = [];
    const launcher = new LocalExecutions({
      blobs,
      maxConcurrentRuns: 1,
      execute: async (event) => {
        running.push(event.runId);
        const gate = deferred<unknown>();
        gates.set(event.runId, gate);
        return gate.promise;
      },
      onEnded: (d) => ended.push(d),
    });

    await launcher.start('a', input('a'));
    await launcher.start('b', input('b'));
    await new Promise((resolve) => setImmediate(resolve));

    expect(running).toEqual(['a']);
    expect((await launcher.describe('b'))?.status).toBe('RUNNING');
    gates.get('a')?.resolve({});
    await until(() => running.length === 2);
    expect(running).toEqual(['a', 'b']);
    expect((await launcher.describe('a'))?.status).toBe('SUCCEEDED');
    // Each end is reported after its record is written; wait for a's so the order below is a's then b's.
    await until(() => ended.length === 1);
    gates.get('b')?.reject(new EmptyCorpusError('The corpus has no usable text'));
    await launcher.stop();

    expect(await launcher.describe('b')).toMatchObject({ status: 'FAILED', error: 'EmptyCorpusError', cause: 'The corpus has no usable text' });
    expect(ended.map((d) => [d.name, d.status])).toEqual([
      ['a', 'SUCCEEDED'],
      ['b', 'FAILED'],
    ]);
    expect(launcher.started).toBe(2);
  });

  it('starts a name once, also across launchers on the same bucket', async () => {
    const first = new LocalExecutions({ blobs, maxConcurrentRuns: 2, execute: async () => ({}) });

    const starts = await Promise.all([first.start('a', input('a')), first.start('a', input('a'))]);
    await first.stop();
    const second = new LocalExecutions({ blobs, maxConcurrentRuns: 2, execute: async () => ({}) });

    expect(starts.map((s) => s.started).sort()).toEqual([false, true]);
    expect(await second.start('a', input('a'))).toEqual({ started: false });
    expect((await second.describe('a'))?.status).toBe('SUCCEEDED');
    expect(second.started).toBe(0);
  });

  it('reports the error name and the Lambda error message of a failed execution', async () => {
    const cause = JSON.stringify({ errorType: 'ModelError', errorMessage: 'the model refused', trace: [] });
    const launcher = new LocalExecutions({
      blobs,
      maxConcurrentRuns: 1,
      execute: async () => Promise.reject(new ExecutionFailedError('States.ExceedToleratedFailureThreshold', cause)),
    });

    await launcher.start('a', input('a'));
    await launcher.stop();

    expect(await launcher.describe('a')).toMatchObject({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold', cause: 'the model refused' });
  });

  it('reports a run left RUNNING by a process that is gone as ABORTED, and one of a live process as RUNNING', async () => {
    // A server killed mid-run left its record RUNNING under its pid, which no longer exists.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid as number;
    await blobs.put(executionRecordKey('a'), JSON.stringify({ name: 'a', status: 'RUNNING', startedAt: '2026-01-01T00:00:00.000Z', pid: gone }));
    // A job of another process (here: this one) is running b.
    const job = new LocalExecutions({ blobs });
    const gate = deferred<unknown>();
    const running = job.run('b', () => gate.promise);
    await until(() => existsSync(path.join(dir, 'runs', '_executions', 'b.json')));
    const restarted = new LocalExecutions({ blobs, maxConcurrentRuns: 1, execute: async () => ({}) });

    expect(await restarted.describe('a')).toMatchObject({ status: 'ABORTED', error: 'ProcessStopped' });
    expect(await restarted.start('a', input('a'))).toEqual({ started: false });
    expect(await restarted.describe('b')).toMatchObject({ name: 'b', status: 'RUNNING' });
    expect(await restarted.describe('unknown')).toBeUndefined();
    gate.resolve({});
    expect(await running).toEqual({ started: true, status: 'SUCCEEDED' });
    expect(await restarted.describe('b')).toMatchObject({ status: 'SUCCEEDED', stoppedAt: expect.any(String) });
  });

  it('shares one registry between serve and job: a name serve started is not run again by a job, and the failure cause is parsed once', async () => {
    const cause = JSON.stringify({ errorType: 'EmptyCorpusError', errorMessage: 'The corpus has no usable text', trace: [] });
    const serve = new LocalExecutions({ blobs, execute: async () => Promise.reject(new ExecutionFailedError('EmptyCorpusError', cause)) });
    await serve.start('q1', input('q1'));
    await serve.stop();
    let ran = false;
    const job = new LocalExecutions({ blobs });

    expect(await job.run('q1', async () => void (ran = true))).toEqual({ started: false, status: 'FAILED' });
    expect(ran).toBe(false);
    expect(await job.describe('q1')).toMatchObject({ status: 'FAILED', error: 'EmptyCorpusError', cause: 'The corpus has no usable text' });
  });

  it('still reads the records earlier versions of serve kept under api/executions/', async () => {
    await blobs.put(
      'api/executions/old.json',
      JSON.stringify({ name: 'old', status: 'SUCCEEDED', startedAt: '2026-01-01T00:00:00.000Z', stoppedAt: '2026-01-01T00:01:00.000Z' }),
    );
    const launcher = new LocalExecutions({ blobs, execute: async () => ({}) });

    expect(await launcher.describe('old')).toMatchObject({ status: 'SUCCEEDED' });
    expect(await launcher.start('old', input('old'))).toEqual({ started: false });
  });
});

describe('LocalExecutions: list and abort (GET /v1/runs, cancel)', () => {
  let dir: string;
  let blobs: FsBlobStore;
  const reason = { error: 'RunCancelled', cause: 'Cancelled through the API' };

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-launcher-'));
    blobs = new FsBlobStore(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lists the records newest first, legacy ones included, a page at a time by start time and name', async () => {
    const record = (name: string, startedAt: string) => JSON.stringify({ name, status: 'SUCCEEDED', startedAt, stoppedAt: startedAt });
    await blobs.put(executionRecordKey('b'), record('b', '2026-01-02T00:00:00.000Z'));
    await blobs.put(executionRecordKey('a'), record('a', '2026-01-02T00:00:00.000Z'));
    await blobs.put(executionRecordKey('c'), record('c', '2026-01-03T00:00:00.000Z'));
    await blobs.put('api/executions/old.json', record('old', '2026-01-01T00:00:00.000Z'));
    const launcher = new LocalExecutions({ blobs });

    const first = await launcher.list({ limit: 2 });
    const second = await launcher.list({ limit: 2, after: first.next });

    expect(first.executions.map((e) => e.name)).toEqual(['c', 'b']);
    expect(first.next).toBe('2026-01-02T00:00:00.000Z b');
    expect(second.executions.map((e) => e.name)).toEqual(['a', 'old']);
    expect(second.next).toBeUndefined();
    await expect(launcher.list({ limit: 2, after: 'not a position at all' })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('aborts one background execution with the reason, waits for its end, and leaves the others running', async () => {
    const gates = new Map<string, ReturnType<typeof deferred<unknown>>>();
    const launcher = new LocalExecutions({
      blobs,
      maxConcurrentRuns: 2,
      execute: async (event, signal) => {
        const gate = deferred<unknown>();
        gates.set(event.runId, gate);
        signal.addEventListener('abort', () => gate.reject(new ExecutionFailedError('ExecutionAborted', 'The execution was aborted')));
        return gate.promise;
      },
    });
    await launcher.start('x', input('x'));
    await launcher.start('y', input('y'));
    await until(() => gates.size === 2);

    const aborted = await launcher.abort('x', reason);

    expect(aborted).toMatchObject({ name: 'x', status: 'ABORTED', error: 'RunCancelled', cause: 'Cancelled through the API', stoppedAt: expect.any(String) });
    expect(JSON.parse(await blobs.getText(executionRecordKey('x')))).toMatchObject({ status: 'ABORTED', error: 'RunCancelled' });
    expect(await launcher.describe('y')).toMatchObject({ status: 'RUNNING' });
    expect(await launcher.abort('x', reason)).toMatchObject({ status: 'ABORTED', error: 'RunCancelled' });
    gates.get('y')?.resolve({});
    await launcher.stop();
    expect(await launcher.describe('y')).toMatchObject({ status: 'SUCCEEDED' });
    expect(await launcher.abort('y', reason)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await launcher.abort('none', reason)).toBeUndefined();
  });

  it('aborts a run still waiting for a slot at once, while the run holding the slot goes on', async () => {
    const gate = deferred<unknown>();
    const started: string[] = [];
    const launcher = new LocalExecutions({ blobs, maxConcurrentRuns: 1, execute: async (event) => (started.push(event.runId), gate.promise) });
    await launcher.start('first', input('first'));
    await launcher.start('waiting', input('waiting'));

    const aborted = await launcher.abort('waiting', reason);

    expect(aborted).toMatchObject({ status: 'ABORTED', error: 'RunCancelled' });
    expect(await launcher.describe('first')).toMatchObject({ status: 'RUNNING' });
    gate.resolve({});
    await launcher.stop();
    expect(started).toEqual(['first']);
    expect(await launcher.describe('first')).toMatchObject({ status: 'SUCCEEDED' });
  });

  it('refuses to abort a run another live process runs (409 at the API)', async () => {
    const job = new LocalExecutions({ blobs });
    const gate = deferred<unknown>();
    const running = job.run('j', () => gate.promise);
    await until(() => existsSync(path.join(dir, 'runs', '_executions', 'j.json')));
    const serve = new LocalExecutions({ blobs, execute: async () => ({}) });

    await expect(serve.abort('j', reason)).rejects.toBeInstanceOf(RunNotCancellableError);
    gate.resolve({});
    await running;
  });
});

describe('LocalUploadSigner', () => {
  let now = new Date('2026-01-02T03:04:05Z');
  const signer = new LocalUploadSigner(Buffer.from('0123456789abcdef0123456789abcdef'), () => now);
  const presigner = signer.presigner(() => 'http://127.0.0.1:8787');

  it('issues a URL of the local upload endpoint that verifies for its key, length and content type', async () => {
    now = new Date('2026-01-02T03:04:05Z');
    const upload = await presigner.presignPut('corpora/c1/notes/a b.txt', { expiresInSeconds: 60, contentLength: 5, contentType: 'text/plain' });

    expect(upload.url).toMatch(
      /^http:\/\/127\.0\.0\.1:8787\/_local\/uploads\/corpora\/c1\/notes\/a%20b\.txt\?expires=\d+&length=5&type=text%2Fplain&signature=[0-9a-f]{64}$/,
    );
    expect(upload).toMatchObject({ method: 'PUT', headers: { 'content-length': '5', 'content-type': 'text/plain' }, expiresAt: '2026-01-02T03:05:05.000Z' });
    expect(signer.verify(new URL(upload.url), '5', 'text/plain')).toEqual({
      ok: true,
      key: 'corpora/c1/notes/a b.txt',
      contentLength: 5,
      contentType: 'text/plain',
    });
    expect(signer.verify(new URL(upload.url), '6', 'text/plain')).toEqual({ ok: false, detail: 'Content-Length must be 5, as signed' });
    expect(signer.verify(new URL(upload.url), '5', 'text/html')).toEqual({ ok: false, detail: 'Content-Type must be text/plain, as signed' });
    expect(signer.verify(new URL(upload.url.replace('length=5', 'length=50')), '50', 'text/plain')).toEqual({
      ok: false,
      detail: expect.stringMatching(/^The upload URL signature does not match: the URL was altered, or was issued by a server with another state directory/),
    });
  });

  it('refuses a URL after it expired', async () => {
    now = new Date('2026-01-02T03:04:05Z');
    const upload = await presigner.presignPut('corpora/c1/a.txt', { expiresInSeconds: 60 });

    now = new Date('2026-01-02T03:05:06Z');

    expect(signer.verify(new URL(upload.url), undefined, undefined)).toEqual({ ok: false, detail: 'The upload URL has expired' });
  });
});

describe('upload limit and signing secret', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-secret-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('announces the upload limit of the API (500 MiB, the largest readable document) to the API', () => {
    const presigner = new LocalUploadSigner(Buffer.alloc(32)).presigner(() => 'http://127.0.0.1:8787');

    expect(MAX_LOCAL_UPLOAD_BYTES).toBe(500 * 1024 * 1024);
    expect(MAX_LOCAL_UPLOAD_BYTES).toBe(MAX_FILE_BYTES);
    expect(presigner.maxContentLength).toBe(MAX_LOCAL_UPLOAD_BYTES);
  });

  it('creates the secret once under the state directory (mode 0600) and reads the same one after a restart, so old URLs verify', async () => {
    const first = await loadUploadSecret(dir);
    const url = await new LocalUploadSigner(first)
      .presigner(() => 'http://127.0.0.1:8787')
      .presignPut('corpora/c1/a.txt', { expiresInSeconds: 60, contentLength: 5 });

    const second = await loadUploadSecret(dir);

    expect(first).toHaveLength(32);
    expect(second.equals(first)).toBe(true);
    expect(statSync(path.join(dir, UPLOAD_SECRET_FILE)).mode & 0o777).toBe(0o600);
    expect(new LocalUploadSigner(second).verify(new URL(url.url), '5', undefined)).toMatchObject({ ok: true, key: 'corpora/c1/a.txt' });
  });

  it('refuses a secret file that holds no secret, saying how to recover', async () => {
    writeFileSync(path.join(dir, UPLOAD_SECRET_FILE), 'not a secret');

    const load = loadUploadSecret(dir);

    await expect(load).rejects.toThrow(ConfigurationError);
    await expect(load).rejects.toThrow(/delete it to have a new one generated/);
  });

  it.each([
    ['short', 'must have at least 16 characters (got 5)'],
    ['a token with spaces in it', 'must be printable ASCII without spaces'],
  ])('refuses the token %j', (token, problem) => {
    expect(tokenProblem(token)).toContain(problem);
  });

  it('accepts a token of 16 printable characters', () => {
    expect(tokenProblem('0123456789abcdef')).toBeUndefined();
  });
});
