/**
 * The one progress style of the long commands (local/cli/progress.ts), without a terminal: a counted
 * task is a line at its start, at every further 10% and at its end; other events are lines; a
 * disabled Progress (`--no-progress`, `--json`) writes nothing; a run's progress events
 * (shared/progress.ts) as lines and counted tasks; the ETA and the key of an event.
 */
import { Progress, progressLine, progressSummary, RunProgressReporter } from '../../local/cli/progress';
import { estimateRemainingMs, progressEventKey, type RunPhase, type RunSeekEvent, type RunStatusEvent } from '../../shared/progress';

function fakeStream(): { stream: NodeJS.WriteStream; lines: () => string[] } {
  const written: string[] = [];
  const stream = { isTTY: false, write: (chunk: string) => written.push(chunk) > 0 } as unknown as NodeJS.WriteStream;
  return { stream, lines: () => written.join('').trimEnd().split('\n') };
}

describe('Progress without a terminal', () => {
  it('writes a counted task at its start, every 10% and its end, with the latest detail', () => {
    const { stream, lines } = fakeStream();
    const progress = new Progress(true, stream);
    const task = progress.task('round 1 seeking agents', 40, 'chunks');
    for (let done = 1; done <= 40; done++) task.update(done, done === 40 ? '2 failed' : undefined);

    expect(lines()[0]).toBe('round 1 seeking agents: 0/40 chunks');
    expect(lines()).toHaveLength(11);
    expect(lines()[1]).toBe('round 1 seeking agents: 4/40 chunks');
    expect(lines()[10]).toBe('round 1 seeking agents: 40/40 chunks (2 failed)');
  });

  it('writes every item of a small task, and other events as lines of their own', () => {
    const { stream, lines } = fakeStream();
    const progress = new Progress(true, stream);
    const task = progress.task('job', 2, 'questions');
    task.update(1, 'question 1: SUCCEEDED');
    progress.line('note');
    task.update(2, 'question 0: FAILED');

    expect(lines()).toEqual(['job: 0/2 questions', 'job: 1/2 questions (question 1: SUCCEEDED)', 'note', 'job: 2/2 questions (question 0: FAILED)']);
  });

  it('writes nothing when disabled', () => {
    const { stream, lines } = fakeStream();
    const progress = new Progress(false, stream);
    progress.task('eval', 3, 'records').update(3, 'x');
    progress.line('hidden');
    progress.stop();

    expect(lines()).toEqual(['']);
  });
});

describe("a run's progress events as the CLI shows them", () => {
  const status = (phase: RunPhase, extra: Partial<RunStatusEvent> = {}): RunStatusEvent => ({
    type: 'status',
    runId: 'r1',
    status: 'RUNNING',
    phase,
    question: 'q?',
    chunks: 4,
    tokens: 900,
    ...extra,
  });
  const seek = (done: number, extra: Partial<RunSeekEvent> = {}): RunSeekEvent => ({
    type: 'seek',
    round: 1,
    done,
    failed: 0,
    total: 4,
    messages: done,
    etaMs: done === 0 ? null : 1000 * (4 - done),
    ...extra,
  });

  it('gives every phase a line of its own, and none to seeking counts, the seeking status and the end', () => {
    expect(progressLine(status('preparing'))).toBe('preparing: reading and chunking the corpus');
    expect(progressLine(status('reasoning', { round: 2, k: 4 }))).toBe('round 2: KAR step with k=4 (the reasoning agent reads the top 4 messages)');
    expect(progressLine(status('reasoning', { round: 1, k: 1 }))).toBe('round 1: KAR step with k=1 (the reasoning agent reads the top message)');
    expect(progressLine(status('synchronizing', { round: 1 }))).toBe('round 1: synchronizing the pool for round 2');
    expect(progressLine(status('answering', { round: 2, k: 8 }))).toBe('round 2: best-effort answer from the best evidence (no round answered)');
    expect(progressLine(status('finalizing'))).toBe('finalizing: citations and the result');
    expect(progressLine({ type: 'sync', round: 1, messages: 1 })).toBe('round 1: synchronized 1 message for the seeking agents of round 2');
    expect(progressLine({ type: 'sync', round: 2 })).toBe('round 2: synchronized for the seeking agents of round 3');
    expect(progressLine({ type: 'kar', seq: 3, round: 1, k: 4, messagesUsed: 3, evidenceTokens: 120, outcome: 'refused' })).toBe(
      'KAR step 3 (round 1, k=4): read 3 messages (120 tokens): refused',
    );
    expect(progressLine({ type: 'kar', seq: 4, round: 2, k: 8, messagesUsed: 1, evidenceTokens: 1, outcome: 'answered', forced: true })).toBe(
      'KAR step 4 (round 2, k=8, best-effort): read 1 message (1 token): answered',
    );
    expect(progressLine({ type: 'info', message: 'run r1: 2 corpus file(s)' })).toBe('run r1: 2 corpus file(s)');
    for (const silent of [status('seeking', { round: 1 }), status('finished'), seek(1), { type: 'end', status: 'SUCCEEDED' } as const])
      expect(progressLine(silent)).toBeUndefined();
  });

  it('says "chunk" for a corpus of one chunk, live and in a run\'s summary', () => {
    const { stream, lines } = fakeStream();
    const reporter = new RunProgressReporter(new Progress(true, stream));
    for (const event of [status('seeking', { round: 1 }), seek(0, { total: 1, etaMs: null }), seek(1, { total: 1, etaMs: 0 })]) reporter.onProgress(event);

    expect(lines()).toEqual(['round 1 seeking agents: 0/1 chunk (0 messages)', 'round 1 seeking agents: 1/1 chunk (1 message)']);
    expect(progressSummary({ seek: seek(0, { total: 1, etaMs: null }) })).toBe('round 1 seeking agents: 0/1 chunk (0 messages)');
  });

  it("shows a round's seeking as a counted task with its messages, failures and ETA, then the next phase as a line", () => {
    const { stream, lines } = fakeStream();
    const reporter = new RunProgressReporter(new Progress(true, stream));
    for (const event of [
      status('preparing'),
      status('seeking', { round: 1 }),
      seek(0),
      seek(1),
      seek(2, { failed: 1 }),
      seek(3),
      seek(4, { etaMs: 0 }),
      status('reasoning', { round: 1, k: 1 }),
    ])
      reporter.onProgress(event);
    // a speculative round (pipelined) is its own task, resumed where it was after a line
    reporter.onProgress(seek(2, { round: 2, speculative: true }));
    reporter.onProgress({ type: 'kar', seq: 1, round: 1, k: 1, messagesUsed: 1, evidenceTokens: 9, outcome: 'refused' });
    reporter.onProgress(seek(3, { round: 2, speculative: true }));

    expect(lines()).toEqual([
      'preparing: reading and chunking the corpus',
      'round 1 seeking agents: 0/4 chunks (0 messages)',
      'round 1 seeking agents: 1/4 chunks (1 message, ETA 3s)',
      'round 1 seeking agents: 2/4 chunks (2 messages, 1 failed, ETA 2s)',
      'round 1 seeking agents: 3/4 chunks (3 messages, ETA 1s)',
      'round 1 seeking agents: 4/4 chunks (4 messages)',
      'round 1: KAR step with k=1 (the reasoning agent reads the top message)',
      'round 2 seeking agents (speculative, beside the KAR steps): 2/4 chunks (2 messages, ETA 2s)',
      'KAR step 1 (round 1, k=1): read 1 message (9 tokens): refused',
      'round 2 seeking agents (speculative, beside the KAR steps): 3/4 chunks (3 messages, ETA 1s)',
    ]);
  });

  it('sums up the latest progress in one phrase (runs show): the seeking counts while seeking, else the phase', () => {
    expect(progressSummary({ status: status('seeking', { round: 1 }), seek: seek(1) })).toBe('round 1 seeking agents: 1/4 chunks (1 message, ETA 3s)');
    expect(progressSummary({ status: status('reasoning', { round: 1, k: 2 }), seek: seek(4, { etaMs: 0 }) })).toBe(
      'round 1: KAR step with k=2 (the reasoning agent reads the top 2 messages)',
    );
    expect(progressSummary({})).toBeUndefined();
  });
});

describe('estimateRemainingMs', () => {
  it('projects the pace of the measured items onto those left, and knows nothing before the first', () => {
    expect(estimateRemainingMs({ elapsedMs: 3000, measured: 3, done: 3, total: 10 })).toBe(7000);
    // items skipped at once (a resumed run) count as done but not in the pace
    expect(estimateRemainingMs({ elapsedMs: 2000, measured: 1, done: 51, total: 100 })).toBe(98_000);
    expect(estimateRemainingMs({ elapsedMs: 10, measured: 0, done: 40, total: 100 })).toBeNull();
    expect(estimateRemainingMs({ elapsedMs: 0, measured: 0, done: 0, total: 0 })).toBe(0);
    expect(estimateRemainingMs({ elapsedMs: 5000, measured: 10, done: 10, total: 10 })).toBe(0);
  });
});

describe('progressEventKey', () => {
  it('names what an event replaces: the status, a round, a step, the end', () => {
    expect(progressEventKey({ type: 'seek', round: 2, done: 1, failed: 0, total: 3, messages: 0, etaMs: null })).toBe('seek:2');
    expect(progressEventKey({ type: 'sync', round: 1 })).toBe('sync:1');
    expect(progressEventKey({ type: 'kar', seq: 7, round: 2, k: 4, messagesUsed: 4, evidenceTokens: 80, outcome: 'refused' })).toBe('kar:7');
    expect(progressEventKey({ type: 'status', runId: 'r', status: 'RUNNING', phase: 'seeking', question: null, chunks: null, tokens: null })).toBe('status');
    expect(progressEventKey({ type: 'end', status: 'FAILED' })).toBe('end');
  });
});
