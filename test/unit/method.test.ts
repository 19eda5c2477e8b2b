/**
 * The method's pure steps (shared/method.ts), shared by the workflow, the survey and the eval: a
 * reply becomes the same message wherever it is sought, and the KAR and synchronization budgets
 * follow one rule.
 */
import { chunkCorpus } from '../../shared/chunking';
import {
  FORCED_MAX_MESSAGES,
  MAX_EVIDENCE_CHARS,
  MESSAGE_OVERHEAD_TOKENS,
  afterRefusal,
  buildMessage,
  fitForReasoning,
  halveForReasoning,
  halveSynchronized,
  sameCitations,
  synchronizationSnapshot,
} from '../../shared/method';
import type { AgentModel } from '../../shared/ports';
import { seekRound } from '../../shared/survey/survey';
import type { Message } from '../../shared/types';

const DOCS = [
  { id: 'a.txt', text: 'Alpha bridge opened in 1937. Its engineer was Strauss.' },
  { id: 'b.txt', text: 'Beta tunnel opened in 1950.' },
];

function message(id: string, score: number, tokens: number, chunkIndex = 0): Message {
  return { id, round: 1, chunkIndex, score, evidence: 'w '.repeat(tokens).trim(), tokens, quotes: [], sources: ['a.txt'] };
}

describe('buildMessage', () => {
  const [chunk] = chunkCorpus(DOCS, { chunkTokens: 200 });

  it('returns null for a reply without evidence (null, empty or white space)', () => {
    for (const evidence of [null, '', '  \n']) expect(buildMessage(chunk, 1, 'r1-c0', { evidence, spans: [], score: 40 }).message).toBeNull();
  });

  it("maps spans to document quotes and names the quotes' documents as sources", () => {
    const start = chunk.text.indexOf('Beta tunnel');
    const { message: m } = buildMessage(chunk, 2, 'r2-c0', { evidence: 'Beta tunnel opened in 1950.', spans: [{ start, end: start + 11 }], score: 80 });
    expect(m).toMatchObject({ id: 'r2-c0', round: 2, chunkIndex: 0, score: 80, sources: ['b.txt'] });
    expect(m?.quotes).toEqual([{ documentId: 'b.txt', start: 0, end: 11, text: 'Beta tunnel' }]);
    expect(m?.tokens).toBeGreaterThan(0);
  });

  it('without quotes, the sources are every document of the chunk', () => {
    const { message: m } = buildMessage(chunk, 1, 'r1-c0', { evidence: 'opened', spans: [], score: 10 });
    expect(m?.sources).toEqual(['a.txt', 'b.txt']);
  });

  it('bounds the evidence and says so', () => {
    const { message: m, warnings } = buildMessage(chunk, 1, 'r1-c0', { evidence: 'x'.repeat(MAX_EVIDENCE_CHARS + 5), spans: [], score: 10 });
    expect(m?.evidence).toHaveLength(MAX_EVIDENCE_CHARS);
    expect(warnings).toEqual([expect.stringContaining('MAX_EVIDENCE_CHARS')]);
  });

  it("is what the survey's seeking round stores too (same bound, same warning)", async () => {
    const seeker = {
      seek: async () => ({
        evidence: 'y'.repeat(MAX_EVIDENCE_CHARS + 1),
        spans: [],
        score: 60,
        usage: { calls: 1, inputTokens: 1, outputTokens: 1 },
        warnings: [],
      }),
    } as unknown as AgentModel;
    const round = await seekRound([chunk], { query: 'q', round: 1, synchronized: [], idPrefix: 'r1-', concurrency: 1 }, seeker);
    expect(round.messages[0].evidence).toHaveLength(MAX_EVIDENCE_CHARS);
    expect(round.messages[0].id).toBe('r1-c0');
    expect(round.warnings).toEqual([expect.stringMatching(/^chunk 0: .*MAX_EVIDENCE_CHARS/)]);
  });
});

describe('synchronization', () => {
  const pool = [message('m1', 90, 100), message('m2', 80, 100), message('m3', 70, 100)];

  it('takes at most syncMaxMessages, fitted to syncBudgetTokens, and nothing when either bound is 0', () => {
    expect(synchronizationSnapshot(pool, { syncMaxMessages: 2, syncBudgetTokens: 10_000 }).map((m) => m.id)).toEqual(['m1', 'm2']);
    expect(synchronizationSnapshot(pool, { syncMaxMessages: 3, syncBudgetTokens: 250 }).map((m) => m.id)).toEqual(['m1', 'm2']);
    expect(synchronizationSnapshot(pool, { syncMaxMessages: 0, syncBudgetTokens: 250 })).toEqual([]);
    expect(synchronizationSnapshot(pool, { syncMaxMessages: 3, syncBudgetTokens: 0 })).toEqual([]);
  });

  it('halves the snapshot by evidence tokens on a context overflow', () => {
    const smaller = halveSynchronized(pool);
    expect(smaller.before).toBe(300);
    expect(smaller.tokens).toBeLessThanOrEqual(150);
    expect(smaller.messages[0].id).toBe('m1');
  });
});

describe('knowledge-accumulating reasoning', () => {
  it('fits a step with the per-message overhead', () => {
    const fitted = fitForReasoning([message('m1', 90, 100), message('m2', 80, 100)], 2 * (100 + MESSAGE_OVERHEAD_TOKENS));
    expect(fitted).toMatchObject({ tokens: 2 * (100 + MESSAGE_OVERHEAD_TOKENS), truncated: false });
    expect(fitForReasoning([message('m1', 90, 100), message('m2', 80, 100)], 150).truncated).toBe(true);
  });

  it('halves a step but keeps a single message (trimmed) rather than sending nothing', () => {
    const one = fitForReasoning([message('m1', 90, 100)], 1000);
    const halved = halveForReasoning(one);
    expect(halved.messages).toHaveLength(1);
    expect(halved.tokens).toBeLessThanOrEqual(MESSAGE_OVERHEAD_TOKENS + 50);
  });

  it('doubles k after a refusal, and ends the round when k covered the pool or the budget cut the step', () => {
    expect(afterRefusal(1, 5, false)).toEqual({ k: 2, exhausted: false });
    expect(afterRefusal(4, 5, false)).toEqual({ k: 5, exhausted: false });
    expect(afterRefusal(5, 5, false)).toEqual({ k: 5, exhausted: true });
    expect(afterRefusal(2, 5, true)).toEqual({ k: 4, exhausted: true });
    expect(FORCED_MAX_MESSAGES).toBeGreaterThan(0);
  });
});

describe('sameCitations (a round-2 message that repeats its chunk)', () => {
  const q = (documentId: string, start: number, end: number) => ({ documentId, start, end, text: 'x'.repeat(end - start) });
  it('matches the same set of quoted ranges in any order, whatever the evidence', () => {
    expect(sameCitations({ quotes: [q('a', 0, 5), q('b', 3, 9)] }, { quotes: [q('b', 3, 9), q('a', 0, 5)] })).toBe(true);
    expect(sameCitations({ quotes: [q('a', 0, 5)] }, { quotes: [q('a', 0, 5), q('a', 7, 9)] })).toBe(false);
    expect(sameCitations({ quotes: [q('a', 0, 5)] }, { quotes: [q('a', 0, 6)] })).toBe(false);
    expect(sameCitations({ quotes: [] }, { quotes: [] })).toBe(false);
  });
});
