/**
 * One KAR step (shared/pipeline/reason.ts) over fake ports: when k widens and when the step is
 * exhausted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseRunOptions } from '../../shared/config';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { runRecordKey } from '../../shared/pipeline/layout';
import { clearRunCaches, type RunRecord } from '../../shared/pipeline/run-record';
import { reasonStep } from '../../shared/pipeline/reason';
import type { WorkflowState } from '../../shared/pipeline/state';
import type { AgentModel, MessageStore, RunCounters, StoredStep } from '../../shared/ports';
import { NO_ANSWER, type Message } from '../../shared/types';

const usage = { calls: 1, inputTokens: 1, outputTokens: 1 };

function message(chunkIndex: number, evidence: string): Message {
  return { id: `r1-c${chunkIndex}`, round: 1, chunkIndex, score: 50, evidence, tokens: evidence.split(' ').length, quotes: [], sources: ['d.txt'] };
}

/** A pool whose top-k query returns `visible` (a GSI that lags the table) while the table counts `poolSize`. */
function fakeStore(visible: Message[], poolSize: number): MessageStore {
  const steps: StoredStep[] = [];
  return {
    topK: async (_run: string, k: number) => visible.slice(0, k),
    poolSize: async () => poolSize,
    putStep: async (_run: string, step: StoredStep) => void steps.push(step),
    getSteps: async () => steps,
    addRetry: async () => undefined,
    getCounters: async () => ({}) as RunCounters,
  } as unknown as MessageStore;
}

const refusing: AgentModel = {
  description: 'always refuses',
  seek: async () => ({ evidence: null, score: 0, spans: [], usage, warnings: [] }),
  reason: async () => ({ answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] }),
};

describe('one knowledge-accumulating reasoning step', () => {
  let dir: string;
  let blobs: FsBlobStore;
  const state: WorkflowState = {
    runId: 'r',
    manifestKey: 'runs/r/manifest.json',
    chunks: 8,
    covered: 8,
    round: 1,
    k: 2,
    seq: 0,
    outcome: null,
    exhausted: false,
    poolSize: 0,
    config: {
      rounds: 1,
      concurrency: 1,
      toleratedFailurePercentage: 0,
      bestEffort: false,
      pipelineRounds: false,
      coverageCap: 8,
      karFirstK: 1,
      seekMode: 'on-demand',
    },
  };

  beforeEach(async () => {
    clearRunCaches();
    dir = mkdtempSync(path.join(tmpdir(), 'reason-step-'));
    blobs = new FsBlobStore(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function writeRecord(reasonerBudgetTokens: number): Promise<void> {
    const record = {
      runId: 'r',
      question: 'q?',
      options: parseRunOptions({ reasonerBudgetTokens }),
      documents: [],
      skipped: [],
      chunks: 8,
      tokens: 0,
      tokenizer: 't',
      createdAt: '',
    } as unknown as RunRecord;
    await blobs.put(runRecordKey('r'), JSON.stringify(record));
  }

  it('widens k when the top-k query returned fewer messages than k (a lagging index), instead of stopping', async () => {
    await writeRecord(16_000);
    const store = fakeStore([message(0, 'one short message')], 8);

    const next = await reasonStep({ state, force: false }, { blobs, store, model: refusing });

    expect(next).toMatchObject({ outcome: 'refused', exhausted: false, k: 4, poolSize: 8 });
  });

  it('stops widening when the token budget already cut the top-k', async () => {
    await writeRecord(256);
    const long = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    const store = fakeStore([message(0, long), message(1, long)], 8);

    const next = await reasonStep({ state, force: false }, { blobs, store, model: refusing });

    expect(next).toMatchObject({ outcome: 'refused', exhausted: true });
  });

  it('does not send again a step over the same messages as a refused one (round 2 found nothing new): the refusal stands', async () => {
    await writeRecord(16_000);
    const store = fakeStore([message(0, 'one short message'), message(1, 'another message')], 2);
    let calls = 0;
    const counting: AgentModel = { ...refusing, reason: async (request) => (calls++, refusing.reason(request)) };
    const round1 = await reasonStep({ state, force: false }, { blobs, store, model: counting });

    const round2 = await reasonStep({ state: { ...round1, round: 2, k: 2, outcome: null, exhausted: false }, force: false }, { blobs, store, model: counting });
    const forced = await reasonStep({ state: { ...round2, k: 2 }, force: true }, { blobs, store, model: counting });

    expect(calls).toBe(2);
    const steps = await store.getSteps('r');
    expect(steps.map((s) => [s.seq, s.round, s.outcome, s.messageIds])).toEqual([
      [1, 1, 'refused', ['r1-c0', 'r1-c1']],
      [2, 2, 'refused', ['r1-c0', 'r1-c1']],
      [3, 2, 'refused', ['r1-c0', 'r1-c1']],
    ]);
    expect(round2).toMatchObject({ outcome: 'refused', exhausted: true });
    expect(forced.seq).toBe(3);
  });

  describe('the stopping rule (shared/support.ts)', () => {
    /** A message whose one quote is its evidence. */
    const quoted = (chunkIndex: number, text: string): Message => ({
      ...message(chunkIndex, text),
      quotes: [{ documentId: 'd.txt', start: 0, end: text.length, text }],
    });
    const pool = [
      quoted(0, 'Born in 1840, Quill founded the firm in 1871.'),
      quoted(1, 'Quill died in 1903.'),
      quoted(2, 'The firm closed in 1950.'),
      quoted(3, 'Rain fell on the hills.'),
    ];
    /** A reasoning agent that answers `answers[i]` at its i-th call, citing every message given. */
    const scripted = (answers: string[]): AgentModel & { calls: number } => {
      const model = {
        calls: 0,
        description: 'scripted',
        seek: refusing.seek,
        reason: async (request: { messages: Message[] }) => {
          const answer = answers[model.calls++];
          return { answerable: true as const, answer, citedMessageIds: request.messages.map((m) => m.id), usage, warnings: [] };
        },
      };
      return model;
    };
    async function writeStop(karStop: 'first' | 'confirmed'): Promise<void> {
      const record = { runId: 'r', question: 'In what year did Quill die?', options: parseRunOptions({ karStop }), documents: [], skipped: [], chunks: 4 };
      await blobs.put(runRecordKey('r'), JSON.stringify(record));
    }
    const at = (k: number, seq: number): WorkflowState => ({ ...state, chunks: 4, covered: 4, k, seq });

    it('reads on after an answer its cited quotes do not hold, then stops at a supported one', async () => {
      await writeStop('first');
      const store = fakeStore(pool, 4);
      const model = scripted(['1000', '1903']);

      const first = await reasonStep({ state: at(1, 0), force: false }, { blobs, store, model });
      const second = await reasonStep({ state: first, force: false }, { blobs, store, model });

      expect(first).toMatchObject({ outcome: 'refused', exhausted: false, k: 2 });
      expect(second).toMatchObject({ outcome: 'answered' });
      const steps = await store.getSteps('r');
      expect(steps.map((s) => [s.k, s.outcome, s.answer])).toEqual([
        [1, 'unsupported', '1000'],
        [2, 'answered', '1903'],
      ]);
    });

    it("'confirmed' rejects an early answer the next step does not give again, and accepts one it does", async () => {
      await writeStop('confirmed');
      const store = fakeStore(pool, 4);
      // k=1: the founding year (a misreading its quote holds); k=2: the death year; k=4: the death year again.
      const model = scripted(['1871', '1903', '1903']);

      let next = await reasonStep({ state: at(1, 0), force: false }, { blobs, store, model });
      expect(next).toMatchObject({ outcome: 'refused', k: 2 });
      next = await reasonStep({ state: next, force: false }, { blobs, store, model });
      expect(next).toMatchObject({ outcome: 'refused', k: 4 });
      next = await reasonStep({ state: next, force: false }, { blobs, store, model });

      expect(next).toMatchObject({ outcome: 'answered' });
      expect((await store.getSteps('r')).map((s) => [s.k, s.outcome, s.answer])).toEqual([
        [1, 'unconfirmed', '1871'],
        [2, 'unconfirmed', '1903'],
        [4, 'answered', '1903'],
      ]);
    });

    it("'confirmed' accepts at once an answer of a step that read the whole pool", async () => {
      await writeStop('confirmed');
      const store = fakeStore(pool.slice(0, 2), 2);
      const next = await reasonStep({ state: at(2, 0), force: false }, { blobs, store, model: scripted(['1903']) });
      expect(next).toMatchObject({ outcome: 'answered' });
    });

    it('records an unsupported best-effort answer as unsupported, never as answered', async () => {
      await writeStop('first');
      const store = fakeStore(pool, 4);
      await reasonStep({ state: at(4, 0), force: true }, { blobs, store, model: scripted(['1000']) });
      expect((await store.getSteps('r')).map((s) => [s.outcome, s.forced])).toEqual([['unsupported', true]]);
    });
  });
});
