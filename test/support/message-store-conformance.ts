/**
 * The conformance suite of the message store port (shared/ports.ts `MessageStore`): the rules the
 * method needs of any store, run against each implementation (the DynamoDB one against dynalite,
 * test/integration/dynamo-message-store.test.ts; the in-memory one, test/unit/memory-message-store.test.ts):
 * the pool order and its round and coverage bounds, one seek record per run, round and chunk, the
 * sought and message chunks, failures and throttle waits, the counters' sums and warning order, KAR
 * steps, messages by id, and the pages of the pool.
 */
import type { MessageStore } from '../../shared/ports';
import type { Message } from '../../shared/types';

export function message(round: number, chunkIndex: number, score: number): Message {
  return {
    id: `r${round}-c${chunkIndex}`,
    round,
    chunkIndex,
    score,
    evidence: `evidence of chunk ${chunkIndex} round ${round}`,
    tokens: 7,
    quotes: [{ documentId: 'doc.txt', start: chunkIndex * 10, end: chunkIndex * 10 + 5, text: 'abcde' }],
    sources: ['doc.txt'],
  };
}

export const NO_USAGE = { calls: 0, inputTokens: 0, outputTokens: 0 };

/** Record a seek that found `m` (no usage, no warnings). */
export async function put(store: MessageStore, run: string, m: Message): Promise<'recorded' | 'already-recorded'> {
  return store.recordSeek(run, { round: m.round, chunkIndex: m.chunkIndex, message: m, usage: NO_USAGE, warnings: [] });
}

/**
 * Declare the suite's tests in the calling `describe`.
 * @param storeOf the store under test (called in each test, after the caller's `beforeAll`).
 */
export function describeMessageStoreConformance(storeOf: () => MessageStore): void {
  describe('the message store contract', () => {
    let store: MessageStore;
    beforeEach(() => {
      store = storeOf();
    });

    it('returns the global top-k in pool order: score descending, then corpus order, then round', async () => {
      const run = 'order';
      const messages = [message(1, 5, 40), message(1, 2, 90), message(1, 9, 90), message(2, 2, 90), message(1, 0, 10), message(1, 7, 100)];
      for (const m of messages) await put(store, run, m);

      const top = await store.topK(run, 4, 2);

      expect(top.map((m) => m.id)).toEqual(['r1-c7', 'r1-c2', 'r2-c2', 'r1-c9']);
      expect(await store.poolSize(run, 2)).toBe(6);
      expect((await store.topK(run, 100, 2)).map((m) => m.id)).toEqual(['r1-c7', 'r1-c2', 'r2-c2', 'r1-c9', 'r1-c5', 'r1-c0']);
    });

    it("bounds the pool by round: messages of later rounds stay out of an earlier round's top-k and count", async () => {
      // Arrange: round 2 holds the best messages (a resumed run replaying round 1 has them already)
      const run = 'rounds';
      const messages = [message(1, 0, 30), message(1, 1, 20), message(2, 0, 95), message(2, 3, 90), message(3, 1, 99), message(1, 4, 10)];
      for (const m of messages) await put(store, run, m);

      // Act
      const round1 = await store.topK(run, 2, 1);
      const round2 = await store.topK(run, 3, 2);

      // Assert: the filter applies before Limit k is filled (pages on past later rounds' messages)
      expect(round1.map((m) => m.id)).toEqual(['r1-c0', 'r1-c1']);
      expect(round2.map((m) => m.id)).toEqual(['r2-c0', 'r2-c3', 'r1-c0']);
      expect((await store.topK(run, 10, 3))[0].id).toBe('r3-c1');
      expect([await store.poolSize(run, 1), await store.poolSize(run, 2), await store.poolSize(run, 3), await store.poolSize(run, 0)]).toEqual([3, 5, 6, 0]);
    });

    it("bounds the pool by coverage: messages sought at a larger coverage stay out of a smaller one's top-k and count", async () => {
      // Arrange: a grow run's second tranche (coverage 2) holds the best message; a message without a coverage (a full run's) counts everywhere
      const run = 'coverage';
      const at = (m: Message, covered?: number) =>
        store.recordSeek(run, {
          round: m.round,
          chunkIndex: m.chunkIndex,
          message: m,
          usage: NO_USAGE,
          warnings: [],
          ...(covered !== undefined && { covered }),
        });
      await at(message(1, 4, 30), 1);
      await at(message(1, 6, 95), 2);
      await at(message(1, 1, 90), 4);
      await at(message(1, 2, 10));

      // Act / Assert
      expect((await store.topK(run, 5, 1, 1)).map((m) => m.id)).toEqual(['r1-c4', 'r1-c2']);
      expect((await store.topK(run, 1, 1, 2)).map((m) => m.id)).toEqual(['r1-c6']);
      expect((await store.topK(run, 5, 1)).map((m) => m.id)).toEqual(['r1-c6', 'r1-c1', 'r1-c4', 'r1-c2']);
      expect([await store.poolSize(run, 1, 1), await store.poolSize(run, 1, 2), await store.poolSize(run, 1, 4), await store.poolSize(run, 1)]).toEqual([
        2, 3, 4, 4,
      ]);
    });

    it('records a seek at most once per run, round and chunk: the first record stands, message or not', async () => {
      const run = 'once';
      expect(await put(store, run, message(1, 3, 50))).toBe('recorded');
      expect(await store.recordSeek(run, { round: 1, chunkIndex: 4, usage: { calls: 1, inputTokens: 10, outputTokens: 1 }, warnings: [] })).toBe('recorded');

      // A duplicated task, with or without a message, changes nothing and counts nothing
      const again = await Promise.all([
        put(store, run, message(1, 3, 70)),
        store.recordSeek(run, { round: 1, chunkIndex: 3, usage: { calls: 1, inputTokens: 99, outputTokens: 9 }, warnings: ['late'] }),
        put(store, run, message(1, 4, 90)),
      ]);

      expect(again).toEqual(['already-recorded', 'already-recorded', 'already-recorded']);
      expect(await store.poolSize(run, 1)).toBe(1);
      expect((await store.topK(run, 5, 1))[0].score).toBe(50);
      const counters = await store.getCounters(run);
      expect(counters.usage.seeker).toEqual({ calls: 1, inputTokens: 10, outputTokens: 1 });
      expect(counters.warningCount).toBe(0);
    });

    it('refuses a message recorded under another round or chunk', async () => {
      await expect(store.recordSeek('wrong', { round: 1, chunkIndex: 2, message: message(1, 3, 50), usage: NO_USAGE, warnings: [] })).rejects.toThrow(
        'Message r1-c3 does not belong to round 1, chunk 2',
      );
    });

    it('keeps runs apart', async () => {
      await put(store, 'run-a', message(1, 1, 80));
      await put(store, 'run-b', message(1, 1, 20));

      expect((await store.topK('run-a', 10, 1)).map((m) => m.score)).toEqual([80]);
      expect((await store.topK('run-b', 10, 1)).map((m) => m.score)).toEqual([20]);
    });

    it('records which chunks were sought per round', async () => {
      const run = 'sought';
      await store.recordSeek(run, { round: 1, chunkIndex: 4, usage: NO_USAGE, warnings: [] });
      await put(store, run, message(1, 1, 50));
      await put(store, run, message(2, 3, 50));

      expect((await store.seekState(run, 1, 4)).sought).toBe(true);
      expect((await store.seekState(run, 2, 4)).sought).toBe(false);
      expect(await store.soughtChunks(run, 1)).toEqual([1, 4]);
      expect(await store.soughtChunks(run, 2)).toEqual([3]);
      // The chunks that found something (reseek promising): messages only, not the seek record of chunk 4
      expect(await store.messageChunks(run, 1)).toEqual([1]);
      expect(await store.messageChunks(run, 2)).toEqual([3]);
      expect(await store.messageChunks(run, 3)).toEqual([]);
      // The Seek task's one read: sought by a seek record or by a message, and the failure beside it.
      await store.recordSeekFailure(run, 2, 4, { error: 'ModelThrottledError', message: 'slow down', at: 5 });
      expect(await store.seekState(run, 1, 4)).toEqual({ sought: true });
      expect(await store.seekState(run, 1, 1)).toEqual({ sought: true });
      expect(await store.seekState(run, 2, 4)).toEqual({ sought: false, lastFailure: { chunk: 4, error: 'ModelThrottledError', message: 'slow down', at: 5 } });
      expect(await store.seekState(run, 2, 9)).toEqual({ sought: false });
    });

    it("gives a chunk's last failure with its time, and sums the throttle waits in the counters", async () => {
      const run = 'throttle-waits';
      await store.recordSeekFailure(run, 1, 2, { error: 'ModelThrottledError', message: 'slow down', at: 1_700_000_000_000 });
      await store.recordSeekFailure(run, 1, 3, { error: 'ModelError', message: 'old record, no time' });
      await store.addThrottleWait(run, 1500);
      await store.addThrottleWait(run, 2250.4);

      expect(await store.lastSeekFailure(run, 1, 2)).toEqual({ chunk: 2, error: 'ModelThrottledError', message: 'slow down', at: 1_700_000_000_000 });
      expect(await store.lastSeekFailure(run, 1, 3)).toEqual({ chunk: 3, error: 'ModelError', message: 'old record, no time' });
      expect(await store.lastSeekFailure(run, 2, 2)).toBeUndefined();
      expect((await store.getCounters(run)).throttleWaitMs).toBe(3750);
      expect((await store.getCounters('no-such-run')).throttleWaitMs).toBe(0);
    });

    it("sums the seek records' and KAR steps' usage and warnings at read time", async () => {
      // Arrange: 10 seeking agents at once (no shared item), 3 with a message; two KAR steps
      const run = 'usage';
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.recordSeek(run, {
            round: i < 8 ? 1 : 2,
            chunkIndex: 9 - i,
            ...(i % 4 === 0 && { message: message(i < 8 ? 1 : 2, 9 - i, 40) }),
            usage: { calls: 1, inputTokens: 100 + i, outputTokens: 5, ...(i === 2 && { modelMs: 12.4, cacheReadInputTokens: 30 }) },
            warnings: i === 3 ? ['c6 odd', 'c6 odder'] : i === 9 ? ['c0 r2'] : i === 7 ? ['c2'] : [],
          }),
        ),
      );
      const step = (seq: number) => ({
        seq,
        round: 1,
        k: seq,
        messagesUsed: seq,
        evidenceTokens: 10,
        outcome: 'refused' as const,
        answer: 'NO ANSWER',
        citedMessageIds: [],
      });
      // Step 2 written first: the warnings still come in step order. Step 1 is then written again by
      // another path of a resumed run (its first usage replaced, not added).
      await store.putStep(run, step(2), { usage: { calls: 1, inputTokens: 5, outputTokens: 1, modelMs: 3 }, warnings: [] });
      await store.putStep(run, step(1), { usage: { calls: 9, inputTokens: 999, outputTokens: 99 }, warnings: ['lost path'] });
      await store.putStep(run, step(1), { usage: { calls: 2, inputTokens: 50, outputTokens: 9 }, warnings: ['step 1'] });

      // Act
      const counters = await store.getCounters(run);

      // Assert: exact sums; warnings of seek records by round then chunk, then of the steps
      expect(counters.usage.seeker).toEqual({ calls: 10, inputTokens: 1045, outputTokens: 50, modelMs: 12, cacheReadInputTokens: 30 });
      expect(counters.usage.reasoner).toEqual({ calls: 3, inputTokens: 55, outputTokens: 10, modelMs: 3 });
      expect(counters.warnings).toEqual(['c2', 'c6 odd', 'c6 odder', 'c0 r2', 'step 1']);
      expect(counters.warningCount).toBe(5);
      expect(await store.soughtChunks(run, 1)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
      expect(await store.soughtChunks(run, 2)).toEqual([0, 1]);
    });

    it("gives the seeking agents' usage per round (what Finalize reports of speculative rounds)", async () => {
      const run = 'by-round';
      await Promise.all([
        store.recordSeek(run, { round: 1, chunkIndex: 0, usage: { calls: 1, inputTokens: 10, outputTokens: 2 }, warnings: [] }),
        store.recordSeek(run, {
          round: 2,
          chunkIndex: 0,
          message: message(2, 0, 60),
          usage: { calls: 1, inputTokens: 20, outputTokens: 3, modelMs: 7 },
          warnings: [],
        }),
        store.recordSeek(run, { round: 2, chunkIndex: 1, usage: { calls: 1, inputTokens: 30, outputTokens: 4 }, warnings: [] }),
        store.recordSeek(run, { round: 3, chunkIndex: 1, usage: { calls: 1, inputTokens: 40, outputTokens: 5 }, warnings: [] }),
      ]);

      const counters = await store.getCounters(run);

      expect(counters.usage.seeker).toEqual({ calls: 4, inputTokens: 100, outputTokens: 14, modelMs: 7 });
      expect(counters.seekerByRound).toEqual({
        1: { calls: 1, inputTokens: 10, outputTokens: 2 },
        2: { calls: 2, inputTokens: 50, outputTokens: 7, modelMs: 7 },
        3: { calls: 1, inputTokens: 40, outputTokens: 5 },
      });
      expect((await store.getCounters('no-such-run')).seekerByRound).toEqual({});
    });

    it('returns KAR steps in sequence order and messages by id in the order asked', async () => {
      const run = 'steps';
      await store.putStep(run, { seq: 2, round: 1, k: 2, messagesUsed: 2, evidenceTokens: 20, outcome: 'answered', answer: 'A', citedMessageIds: ['r1-c1'] });
      await store.putStep(run, { seq: 1, round: 1, k: 1, messagesUsed: 1, evidenceTokens: 10, outcome: 'refused', answer: 'NO ANSWER', citedMessageIds: [] });
      await put(store, run, message(1, 1, 60));
      await put(store, run, message(1, 8, 70));

      expect((await store.getSteps(run)).map((s) => [s.seq, s.outcome])).toEqual([
        [1, 'refused'],
        [2, 'answered'],
      ]);
      expect((await store.getMessages(run, ['r1-c8', 'r1-c1', 'r9-c9'])).map((m) => m.id)).toEqual(['r1-c8', 'r1-c1']);
    });

    it('pages the pool in pool order, optionally of one round, with a cursor it refuses when malformed', async () => {
      const run = 'pages';
      for (const m of [message(1, 0, 50), message(1, 1, 80), message(2, 0, 70), message(2, 5, 80), message(1, 9, 10)]) await put(store, run, m);

      const first = await store.listMessages(run, { limit: 2 });
      const second = await store.listMessages(run, { limit: 2, after: first.next });
      const last = await store.listMessages(run, { limit: 2, after: second.next });
      const round2 = await store.listMessages(run, { round: 2, limit: 10 });

      expect([...first.messages, ...second.messages, ...last.messages].map((m) => m.id)).toEqual(['r1-c1', 'r2-c5', 'r2-c0', 'r1-c0', 'r1-c9']);
      expect(first.next).toBeDefined();
      expect(last.next).toBeUndefined();
      expect(round2.messages.map((m) => m.id)).toEqual(['r2-c5', 'r2-c0']);
      await expect(store.listMessages(run, { limit: 2, after: 'not-a-cursor' })).rejects.toThrow('Invalid message cursor');
    });

    it('counts transient errors per role and per error name', async () => {
      const run = 'transient';
      await store.countTransientError(run, 'seeker', 'ModelThrottledError');
      await store.countTransientError(run, 'seeker', 'ModelThrottledError');
      await store.countTransientError(run, 'reasoner', 'ModelTimeoutError');

      expect((await store.getCounters(run)).transientErrors).toEqual({
        byRole: { seeker: 2, reasoner: 1 },
        byError: { ModelThrottledError: 2, ModelTimeoutError: 1 },
      });
      expect((await store.getCounters('no-such-run')).transientErrors).toEqual({ byRole: { seeker: 0, reasoner: 0 }, byError: {} });
    });
  });
}
