/**
 * The DynamoDB message store against dynalite on 127.0.0.1 (the real SDK): the pool order through the
 * GSI, conditional writes, counters, steps.
 */
import { MessageAlreadyRecordedError } from '../../shared/errors';
import type { DynamoMessageStore } from '../../lambdas/adapters/dynamo-message-store';
import { startRunTable, type TestRunTable } from '../support/dynamo';
import type { Message } from '../../shared/types';

const TABLE = 'messages';

function message(round: number, chunkIndex: number, score: number): Message {
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

describe('DynamoMessageStore against dynalite', () => {
  let table: TestRunTable;
  let store: DynamoMessageStore;

  beforeAll(async () => {
    table = await startRunTable(TABLE);
    store = table.store;
  });

  afterAll(async () => {
    await table.stop();
  });

  it('returns the global top-k in pool order: score descending, then corpus order, then round', async () => {
    const run = 'order';
    const messages = [message(1, 5, 40), message(1, 2, 90), message(1, 9, 90), message(2, 2, 90), message(1, 0, 10), message(1, 7, 100)];
    for (const m of messages) await store.putMessage(run, m);

    const top = await store.topK(run, 4, 2);

    expect(top.map((m) => m.id)).toEqual(['r1-c7', 'r1-c2', 'r2-c2', 'r1-c9']);
    expect(await store.poolSize(run, 2)).toBe(6);
    expect((await store.topK(run, 100, 2)).map((m) => m.id)).toEqual(['r1-c7', 'r1-c2', 'r2-c2', 'r1-c9', 'r1-c5', 'r1-c0']);
  });

  it('bounds the pool by round: messages of later rounds stay out of an earlier round\'s top-k and count', async () => {
    // Arrange: round 2 holds the best messages (a resumed run replaying round 1 has them already)
    const run = 'rounds';
    const messages = [message(1, 0, 30), message(1, 1, 20), message(2, 0, 95), message(2, 3, 90), message(3, 1, 99), message(1, 4, 10)];
    for (const m of messages) await store.putMessage(run, m);

    // Act
    const round1 = await store.topK(run, 2, 1);
    const round2 = await store.topK(run, 3, 2);

    // Assert: the filter applies before Limit k is filled (pages on past later rounds' messages)
    expect(round1.map((m) => m.id)).toEqual(['r1-c0', 'r1-c1']);
    expect(round2.map((m) => m.id)).toEqual(['r2-c0', 'r2-c3', 'r1-c0']);
    expect((await store.topK(run, 10, 3))[0].id).toBe('r3-c1');
    expect([await store.poolSize(run, 1), await store.poolSize(run, 2), await store.poolSize(run, 3), await store.poolSize(run, 0)]).toEqual([3, 5, 6, 0]);
  });

  it('writes a message at most once per run, round and chunk', async () => {
    const run = 'once';
    await store.putMessage(run, message(1, 3, 50));

    await expect(store.putMessage(run, message(1, 3, 70))).rejects.toBeInstanceOf(MessageAlreadyRecordedError);
    expect(await store.poolSize(run, 1)).toBe(1);
    expect((await store.topK(run, 5, 1))[0].score).toBe(50);
  });

  it('keeps runs apart', async () => {
    await store.putMessage('run-a', message(1, 1, 80));
    await store.putMessage('run-b', message(1, 1, 20));

    expect((await store.topK('run-a', 10, 1)).map((m) => m.score)).toEqual([80]);
    expect((await store.topK('run-b', 10, 1)).map((m) => m.score)).toEqual([20]);
  });

  it('records which chunks were sought per round', async () => {
    const run = 'sought';
    await store.markSought(run, 1, 4, 'none');
    await store.markSought(run, 1, 1, 'message');
    await store.markSought(run, 2, 3, 'message');

    expect(await store.wasSought(run, 1, 4)).toBe(true);
    expect(await store.wasSought(run, 2, 4)).toBe(false);
    expect(await store.soughtChunks(run, 1)).toEqual([1, 4]);
    expect(await store.soughtChunks(run, 2)).toEqual([3]);
  });

  it('adds usage per role atomically and keeps warnings with an exact count', async () => {
    const run = 'usage';
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.addUsage(run, 'seeker', { calls: 1, inputTokens: 100 + i, outputTokens: 5 }, i === 3 ? ['odd'] : [])),
    );
    await store.addUsage(run, 'reasoner', { calls: 2, inputTokens: 50, outputTokens: 9 });

    const counters = await store.getCounters(run);

    expect(counters.usage.seeker).toEqual({ calls: 10, inputTokens: 1045, outputTokens: 50 });
    expect(counters.usage.reasoner).toEqual({ calls: 2, inputTokens: 50, outputTokens: 9 });
    expect(counters.warnings).toEqual(['odd']);
    expect(counters.warningCount).toBe(1);
  });

  it('adds the usage of a speculative seek to the seeker and to its round, in one update', async () => {
    const run = 'speculative';
    await store.addUsage(run, 'seeker', { calls: 1, inputTokens: 10, outputTokens: 2 });
    await Promise.all([
      store.addUsage(run, 'seeker', { calls: 1, inputTokens: 20, outputTokens: 3, modelMs: 7 }, [], { speculativeRound: 2 }),
      store.addUsage(run, 'seeker', { calls: 1, inputTokens: 30, outputTokens: 4 }, [], { speculativeRound: 2 }),
      store.addUsage(run, 'seeker', { calls: 1, inputTokens: 40, outputTokens: 5 }, [], { speculativeRound: 3 }),
    ]);

    const counters = await store.getCounters(run);

    expect(counters.usage.seeker).toEqual({ calls: 4, inputTokens: 100, outputTokens: 14, modelMs: 7 });
    expect(counters.speculativeByRound).toEqual({
      2: { calls: 2, inputTokens: 50, outputTokens: 7, modelMs: 7 },
      3: { calls: 1, inputTokens: 40, outputTokens: 5 },
    });
    expect((await store.getCounters('usage')).speculativeByRound).toEqual({});
  });

  it('returns KAR steps in sequence order and messages by id in the order asked', async () => {
    const run = 'steps';
    await store.putStep(run, { seq: 2, round: 1, k: 2, messagesUsed: 2, evidenceTokens: 20, outcome: 'answered', answer: 'A', citedMessageIds: ['r1-c1'] });
    await store.putStep(run, { seq: 1, round: 1, k: 1, messagesUsed: 1, evidenceTokens: 10, outcome: 'refused', answer: 'NO ANSWER', citedMessageIds: [] });
    await store.putMessage(run, message(1, 1, 60));
    await store.putMessage(run, message(1, 8, 70));

    expect((await store.getSteps(run)).map((s) => [s.seq, s.outcome])).toEqual([[1, 'refused'], [2, 'answered']]);
    expect((await store.getMessages(run, ['r1-c8', 'r1-c1', 'r9-c9'])).map((m) => m.id)).toEqual(['r1-c8', 'r1-c1']);
  });
});
