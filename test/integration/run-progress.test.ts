/**
 * Progress for every phase, in one vocabulary (shared/progress.ts): a two-round run of the scripted
 * two-hop model (test/support/two-hop.ts: every KAR step refuses, so the run synchronizes, seeks
 * round 2 and ends with the best-effort answer) reports preparing, each round's seeking, each KAR
 * step, the synchronization, the best-effort answer, finalize and the end, in that order, to the
 * library's `onProgress` and, as server-sent events, to a client of `serve`; and `runs show` tells a
 * run whose process is alive ("running") from one whose process was killed ("interrupted").
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../local/cli/cli';
import { resolveCorpus } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import { describeRun } from '../../local/engine/runs';
import { startServer } from '../../local/services/serve';
import type { RunProgressEvent } from '../../shared/progress';
import type { AgentModel, SeekResult } from '../../shared/ports';
import { RunProgressTracker } from '../../local/engine/run-progress';
import { InvalidInputError, ModelTimeoutError, ModelUnavailableError } from '../../shared/errors';
import { TWO_HOP_OPTIONS, TWO_HOP_QUESTION, twoHopCorpus, twoHopModel } from '../support/two-hop';
import { hundredNotes, writeCorpus } from '../support/corpus';

jest.setTimeout(120_000);

const REPO = path.resolve(__dirname, '..', '..');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-progress-'));
});
afterEach(() => {
  jest.restoreAllMocks();
  process.exitCode = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The phases a run went through, as one word each, consecutive repeats merged: `status:<phase>` for
 * each status change, `seek:<round>`, `sync:<round>`, `kar:<seq>` (`kar:<seq>:forced`), `end:<status>`.
 */
function phases(events: Array<Exclude<RunProgressEvent, { type: 'info' }>>): string[] {
  const words = events.map((e) => {
    switch (e.type) {
      case 'status':
        return `status:${e.phase}${e.round === undefined ? '' : `:${e.round}`}`;
      case 'seek':
        return `seek:${e.round}`;
      case 'sync':
        return `sync:${e.round}`;
      case 'kar':
        return `kar:${e.seq}${e.forced ? ':forced' : ''}`;
      case 'end':
        return `end:${e.status}`;
    }
  });
  return words.filter((w, i) => w !== words[i - 1]);
}

/** The words of `seen` that are not, in order, a subsequence of `expected` (greedy): none when every word comes in its place. */
function unmatched(seen: string[], expected: string[]): string[] {
  let at = 0;
  const out: string[] = [];
  for (const word of seen) {
    const found = expected.indexOf(word, at);
    if (found < 0) out.push(word);
    else at = found + 1;
  }
  return out;
}

/** The phases of the two-hop run, given its KAR steps: each round's steps (all refused), then the best-effort answer. */
function expectedPhases(karSteps: Array<{ seq: number; round: number; forced?: boolean }>): string[] {
  const steps = (round: number): string[] =>
    karSteps.filter((s) => s.round === round && !s.forced).flatMap((s) => [`status:reasoning:${round}`, `kar:${s.seq}`]);
  const forced = karSteps.filter((s) => s.forced);
  return [
    'status:preparing',
    'status:seeking:1',
    'seek:1',
    ...steps(1),
    'status:synchronizing:1',
    'sync:1',
    'status:seeking:2',
    'seek:2',
    ...steps(2),
    ...forced.flatMap((s) => [`status:answering:${s.round}`, `kar:${s.seq}:forced`]),
    'status:finalizing',
    'status:finished',
    'end:SUCCEEDED',
  ];
}

/** The two-hop run through runLocal with `model`, every progress event pushed to `events`; `extra` adds request fields. */
async function runTwoHop(model: AgentModel, events: RunProgressEvent[], extra: { retryIntervalMs?: number } = {}) {
  const files = await resolveCorpus([writeCorpus(dir, twoHopCorpus())]);
  return runLocal({
    files,
    question: TWO_HOP_QUESTION,
    options: TWO_HOP_OPTIONS,
    stateDir: path.join(dir, 'state'),
    model,
    ...extra,
    onProgress: (e) => events.push(e),
  });
}

describe('progress of every phase', () => {
  it("reaches the library's onProgress in workflow order, with counts, messages, ETA and each KAR step", async () => {
    // Arrange
    const events: RunProgressEvent[] = [];

    // Act
    const result = await runTwoHop(twoHopModel(), events);

    // Assert: every phase, in order
    const state = events.filter((e): e is Exclude<RunProgressEvent, { type: 'info' }> => e.type !== 'info');
    const steps = result.trace.map((s, i) => ({ ...s, seq: i + 1 }));
    expect(steps.some((s) => s.forced)).toBe(true);
    expect(phases(state)).toEqual(expectedPhases(steps));
    expect(events[0]).toMatchObject({ type: 'info', message: expect.stringMatching(/^run run-/) as unknown });
    // Seeking: each chunk as it ends, counts that only grow, the round's messages, an ETA that reaches 0
    for (const round of [1, 2]) {
      const seeks = state.filter((e) => e.type === 'seek' && e.round === round) as Array<Extract<RunProgressEvent, { type: 'seek' }>>;
      expect(seeks.map((s) => s.done)).toEqual(Array.from({ length: result.chunks + 1 }, (_, i) => i));
      expect(seeks.every((s) => s.total === result.chunks && s.failed === 0)).toBe(true);
      expect(seeks[0].etaMs).toBeNull();
      expect(seeks.at(-1)?.etaMs).toBe(0);
      expect(seeks.slice(1, -1).every((s) => typeof s.etaMs === 'number' && s.etaMs >= 0)).toBe(true);
    }
    const lastSeek = (round: number) => state.filter((e) => e.type === 'seek' && e.round === round).at(-1) as Extract<RunProgressEvent, { type: 'seek' }>;
    expect(lastSeek(1).messages + lastSeek(2).messages).toBe(result.poolSize);
    // Synchronization names the snapshot's size; each KAR step its k, the messages read and its outcome, as the trace has them
    expect(state.find((e) => e.type === 'sync')).toEqual({ type: 'sync', round: 1, messages: expect.any(Number) as unknown });
    const kar = state.filter((e) => e.type === 'kar').map(({ type: _type, seq: _seq, ...step }) => step);
    expect(kar).toEqual(result.trace);
    // The status knows the corpus once Prepare is done, and the end the answer
    expect(state.find((e) => e.type === 'status' && e.phase === 'seeking')).toMatchObject({
      chunks: result.chunks,
      tokens: expect.any(Number) as unknown,
      question: TWO_HOP_QUESTION,
    });
    expect(state.at(-1)).toEqual({ type: 'end', status: 'SUCCEEDED', answer: result.answer, answerable: result.answerable });
  });

  it('announces no KAR step and no best-effort answer when no seeking agent found anything (the empty pool makes no model call)', async () => {
    const events: RunProgressEvent[] = [];
    const usage = { calls: 1, inputTokens: 1, outputTokens: 1 };
    const finding = { ...twoHopModel(), seek: async (): Promise<SeekResult> => ({ evidence: null, score: 0, spans: [], usage, warnings: [] }) };

    const result = await runTwoHop(finding, events);

    const seen = phases(events.filter((e): e is Exclude<RunProgressEvent, { type: 'info' }> => e.type !== 'info'));
    expect(result).toMatchObject({ answerable: false, poolSize: 0, trace: [] });
    expect(seen.filter((w) => /^(status:(reasoning|answering)|kar:)/.test(w))).toEqual([]);
    expect(seen.at(-1)).toBe('end:SUCCEEDED');
  });

  it('reaches a client of serve as server-sent events in the same order and vocabulary', async () => {
    // Arrange
    const token = 'progress-test-token-0123456789abcdef';
    const server = await startServer({ stateDir: path.join(dir, 'state'), port: 0, token, model: twoHopModel(), retryIntervalMs: 1 });
    try {
      for (const [name, text] of Object.entries(twoHopCorpus())) await server.stack.blobs.put(`corpora/twohop/${name}`, text);
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const started = await fetch(`${server.url}/v1/runs`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ question: TWO_HOP_QUESTION, corpus: { id: 'twohop' }, options: TWO_HOP_OPTIONS }),
      });
      const { runId } = (await started.json()) as { runId: string };

      // Act: the stream from the start, until the server closes it after `end`
      const text = await (await fetch(`${server.url}/v1/runs/${runId}/events`, { headers })).text();
      const run = (await (await fetch(`${server.url}/v1/runs/${runId}`, { headers })).json()) as {
        result: { trace: Array<{ round: number; forced?: boolean }> };
      };

      // Assert: the events as the library gets them (`event:` is the type, `data:` the rest)
      const events = text
        .split('\n\n')
        .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: /^data: (.*)$/m.exec(block)?.[1] }))
        .filter((b) => b.event !== undefined)
        .map((b) => ({ type: b.event, ...(JSON.parse(b.data ?? '{}') as object) }) as Exclude<RunProgressEvent, { type: 'info' }>);
      const steps = run.result.trace.map((s, i) => ({ ...s, seq: i + 1 }));
      // The stream samples the run (the hub reads its tracker when a client waits): every phase is
      // there in order, though a phase shorter than a read may be missed; the KAR steps and the end never.
      const seen = phases(events);
      const expected = expectedPhases(steps);
      expect(seen.filter((w) => /^(kar|sync|end|seek)/.test(w))).toEqual(expected.filter((w) => /^(kar|sync|end|seek)/.test(w)));
      expect(unmatched(seen, expected)).toEqual([]);
      const seek1 = events.filter((e) => e.type === 'seek' && e.round === 1).at(-1);
      expect(seek1).toMatchObject({ done: seek1?.type === 'seek' ? seek1.total : -1, failed: 0, etaMs: 0 });
      expect(events.find((e) => e.type === 'sync')).toMatchObject({ round: 1, messages: expect.any(Number) as unknown });
    } finally {
      await server.stop();
    }
  });
});

describe('model calls the workflow retries, said as they happen (issue 37 #11)', () => {
  it('says a failed seek with its error and the retry policy, one line for a burst of the same error, and the run still answers', async () => {
    // Arrange: every chunk's first seek fails as a server that is down does; the workflow retries each
    const inner = twoHopModel();
    const failed = new Set<number>();
    const model = {
      ...inner,
      seek: (req: Parameters<typeof inner.seek>[0]) => {
        if (req.round === 1 && !failed.has(req.chunk.index)) {
          failed.add(req.chunk.index);
          return Promise.reject(new ModelUnavailableError('connect ECONNREFUSED 10.1.2.3:8000 (http://10.1.2.3:8000/v1)'));
        }
        return inner.seek(req);
      },
    };
    const events: RunProgressEvent[] = [];

    // Act
    const result = await runTwoHop(model, events, { retryIntervalMs: 0 });

    // Assert
    const lines = events.flatMap((e) => (e.type === 'info' && e.message.includes('ModelUnavailableError') ? [e.message] : []));
    expect(result.answer).toBe('Fredville');
    expect(failed.size).toBe(result.chunks);
    expect(result.retries.byError.ModelUnavailableError).toBe(result.chunks);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^seeking agent of chunk \d+ \(round 1\): ModelUnavailableError: connect ECONNREFUSED 10\.1\.2\.3:8000 .*; the workflow retries it \(up to 6 times, after at most 2, 4, 8, 16, 32, 60 s\)$/,
    );
  });

  it('counts the failures within 10 s of a line into the next one, and says nothing of an error the workflow does not retry', async () => {
    let now = 0;
    const emitted: RunProgressEvent[] = [];
    const tracker = new RunProgressTracker({
      runId: 'r1',
      question: 'Who?',
      store: { getSteps: () => Promise.resolve([]), poolSize: () => Promise.resolve(0) },
      blobs: { getText: () => Promise.reject(new Error('not read')) },
      emit: (e) => emitted.push(e),
      now: () => now,
    });
    const fail = (at: number, chunk: number, error: Error) => {
      now = at;
      tracker.callbacks.onTaskFailed('seek', { runId: 'r1', round: 1, chunk }, error);
    };

    fail(0, 0, new ModelTimeoutError('no reply in 120 s'));
    fail(1_000, 1, new ModelTimeoutError('no reply in 120 s'));
    fail(2_000, 2, new ModelTimeoutError('no reply in 120 s'));
    fail(3_000, 3, new InvalidInputError('bad chunk'));
    fail(12_000, 4, new ModelTimeoutError('no reply in 120 s'));

    await tracker.flush();

    const lines = emitted.flatMap((e) => (e.type === 'info' ? [e.message] : []));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^seeking agent of chunk 0 \(round 1\): ModelTimeoutError: no reply in 120 s; the workflow retries it/);
    expect(lines[1]).toMatch(/^seeking agent of chunk 4 \(round 1\): ModelTimeoutError: .*; 2 more attempt\(s\) failed so since the last such line$/);
  });
});

describe('runs show of a run without a result', () => {
  it('says "running" while its process lives and "interrupted" once it was killed', async () => {
    // Arrange: a child process runs an ask that stalls after 5 seeks, and is killed later
    const stateDir = path.join(dir, 'state');
    const corpus = writeCorpus(dir, hundredNotes());
    const child = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(REPO, 'test/support/killable-run.ts'), corpus, stateDir, 'live-1', '5'], {
      cwd: REPO,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (data: Buffer) => {
          if (data.toString().includes('STALLED')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`the child exited (${code}) before stalling: ${stderr}`)));
      });
      const stdout: string[] = [];
      jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => stdout.push(String(chunk)) > 0);
      const show = async (): Promise<string> => {
        stdout.length = 0;
        await main(['node', 'extagents', 'runs', 'show', 'live-1', '--state-dir', stateDir]);
        return stdout.join('');
      };

      // Act
      const whileAlive = await show();
      const aliveRun = await describeRun(stateDir, 'live-1');
      child.kill('SIGKILL');
      await exited;
      const afterKill = await show();
      const killedRun = await describeRun(stateDir, 'live-1');

      // Assert
      expect(whileAlive).toMatch(new RegExp(`^run live-1: running in process ${child.pid} since .*: round 1 seeking agents: \\d+/100 chunks`));
      expect(aliveRun.status).toBe('RUNNING');
      expect(afterKill).toMatch(
        new RegExp(`^run live-1: interrupted: its process ${child.pid} stopped after .*; resume it with 'extagents ask \\.\\.\\. --run-id live-1'`),
      );
      expect(killedRun.status).toBe('ABORTED');
      expect(killedRun.live?.state).toBe('interrupted');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
