/**
 * Model faults at the level of one task, through the real handlers (lambdas/handlers.ts) on the
 * local stack (dynalite, directory bucket): context overflow is shrunk once then fails naming the
 * chunk or the KAR step, transient errors are counted and rethrown unchanged, and a seek retried
 * after a timeout writes its message at most once.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLocalStack, type LocalStack } from '../../local/engine/stack';
import { ContextOverflowError, ModelThrottledError } from '../../shared/errors';
import type { AgentModel, ReasonRequest, SeekRequest } from '../../shared/ports';
import type { WorkflowState } from '../../shared/pipeline/state';
import { scriptedModel, writeCorpus, hundredNotes } from '../support/corpus';

jest.setTimeout(60_000);

/** A model whose behaviour each test sets. */
class SwitchableModel implements AgentModel {
  readonly description = 'switchable (tests)';
  inner: AgentModel = scriptedModel({ everyChunk: true });
  readonly seeks: SeekRequest[] = [];
  readonly reasons: ReasonRequest[] = [];
  seek(request: SeekRequest) {
    this.seeks.push(request);
    return this.inner.seek(request);
  }
  reason(request: ReasonRequest) {
    this.reasons.push(request);
    return this.inner.reason(request);
  }
}

const overflow = (): never => {
  throw new ContextOverflowError("Bedrock Converse: input exceeds the model's context window");
};

describe('model faults in one task', () => {
  let dir: string;
  let stack: LocalStack;
  let model: SwitchableModel;
  let state: WorkflowState;
  let run = 0;
  let runId: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-pipeline-'));
    model = new SwitchableModel();
    stack = await startLocalStack({ stateDir: path.join(dir, 'state'), model });
    const corpus = writeCorpus(dir, hundredNotes(6));
    for (const name of Object.keys(hundredNotes(6))) await stack.blobs.put(`corpora/c/${name}`, readFileSync(path.join(corpus, name)));
  });
  afterAll(async () => {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    model.inner = scriptedModel({ everyChunk: true });
    model.seeks.length = 0;
    model.reasons.length = 0;
    runId = `r${++run}`;
    state = await stack.handlers.prepare({
      runId,
      question: 'What is the answer?',
      corpus: { prefix: 'corpora/c/' },
      options: { chunkTokens: 64, rounds: 2, syncBudgetTokens: 1000 },
    });
    expect(state.chunks).toBe(6);
  });

  /** Seek every chunk of round 1 and synchronize: round 2 then carries 6 synchronized messages. */
  async function toRoundTwo(): Promise<WorkflowState> {
    for (let chunk = 0; chunk < state.chunks; chunk++) await stack.handlers.seek({ runId, round: 1, chunk });
    return stack.handlers.synchronize({ ...state, outcome: 'refused', exhausted: true, poolSize: 6 });
  }

  it('sends a round-2 seek once more with half the synchronized messages when its prompt overflows', async () => {
    // Arrange
    await toRoundTwo();
    const scripted = scriptedModel({ everyChunk: true });
    let calls = 0;
    model.inner = { description: 'overflows once', seek: async (r) => (++calls === 1 ? overflow() : scripted.seek(r)), reason: scripted.reason };

    // Act
    const outcome = await stack.handlers.seek({ runId, round: 2, chunk: 1 });

    // Assert: sought (the scripted agent quotes what it quoted in round 1, so no new message joins the pool)
    expect(outcome).toEqual({ chunk: 1, outcome: 'none' });
    const [full, smaller] = model.seeks.slice(-2).map((r) => r.synchronized);
    const tokens = (ms: typeof full) => ms.reduce((sum, m) => sum + m.tokens, 0);
    expect(full).toHaveLength(6);
    expect(smaller.length).toBeLessThan(full.length);
    expect(tokens(smaller)).toBeLessThanOrEqual(tokens(full) / 2);
    expect(smaller.map((m) => m.id)).toEqual(full.slice(0, smaller.length).map((m) => m.id)); // the best ones kept
    const { warnings } = await stack.store.getCounters(runId);
    expect(warnings).toContain('chunk 1, round 2: the same quotes as its message r1-c1: not added to the pool again');
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^chunk 1, round 2: context window exceeded; sent once more with the synchronized messages shrunk from 6 \(\d+ tokens\) to \d \(\d+ tokens\)$/,
      ),
    );
  });

  it('fails a round-2 seek whose prompt overflows twice with an error naming the chunk, after exactly two model calls', async () => {
    // Arrange
    await toRoundTwo();
    model.inner = { description: 'always overflows', seek: async () => overflow(), reason: async () => overflow() };
    const before = model.seeks.length;

    // Act
    const failure = await stack.handlers.seek({ runId, round: 2, chunk: 4 }).catch((e: unknown) => e);

    // Assert
    expect(failure).toBeInstanceOf(ContextOverflowError);
    expect((failure as Error).message).toMatch(
      /^Chunk 4 \(round 2, \d+ tokens of corpus text\) exceeds the seeking model's context window even with the synchronized messages shrunk from 6/,
    );
    expect(model.seeks.length - before).toBe(2);
    expect(await stack.store.seekFailures(runId, 2)).toEqual([{ chunk: 4, error: 'ContextOverflowError', message: (failure as Error).message }]);
    expect((await stack.store.seekState(runId, 2, 4)).sought).toBe(false);
  });

  it('sends a KAR step once more with half its evidence when the prompt overflows, and records the smaller step', async () => {
    // Arrange: 6 messages in the pool, k = 4
    await toRoundTwo();
    const scripted = scriptedModel();
    let calls = 0;
    model.inner = { description: 'overflows once', seek: scripted.seek, reason: async (r) => (++calls === 1 ? overflow() : scripted.reason(r)) };

    // Act
    const next = await stack.handlers.reason({ state: { ...state, k: 4 }, force: false });

    // Assert
    const [full, smaller] = model.reasons.map((r) => r.messages);
    expect(full).toHaveLength(4);
    expect(smaller.length).toBeLessThan(4);
    expect(smaller.length).toBeGreaterThan(0);
    expect(next.seq).toBe(1);
    const [step] = await stack.store.getSteps(runId);
    expect(step).toMatchObject({ k: 4, messagesUsed: smaller.length });
    const { warnings } = await stack.store.getCounters(runId);
    expect(warnings).toContainEqual(expect.stringMatching(/^KAR step 1: context window exceeded; sent once more with its evidence shrunk from 4 message\(s\)/));
  });

  it('trims a single message too long for half the budget instead of dropping it', async () => {
    // Arrange: k = 1, so the only way to shrink is to trim the one message's evidence
    await toRoundTwo();
    const scripted = scriptedModel();
    let calls = 0;
    model.inner = { description: 'overflows once', seek: scripted.seek, reason: async (r) => (++calls === 1 ? overflow() : scripted.reason(r)) };

    // Act
    await stack.handlers.reason({ state: { ...state, k: 1 }, force: false });

    // Assert
    const [[full], [trimmed]] = model.reasons.map((r) => r.messages);
    expect(trimmed.id).toBe(full.id);
    expect(trimmed.evidence.length).toBeGreaterThan(0);
    expect(trimmed.evidence.length).toBeLessThan(full.evidence.length);
    expect(full.evidence.startsWith(trimmed.evidence)).toBe(true);
  });

  it('fails a KAR step whose prompt overflows twice with an error naming the step, after exactly two model calls', async () => {
    // Arrange
    await toRoundTwo();
    model.inner = { description: 'always overflows', seek: async () => overflow(), reason: async () => overflow() };

    // Act
    const failure = await stack.handlers.reason({ state: { ...state, k: 2 }, force: false }).catch((e: unknown) => e);

    // Assert
    expect(failure).toBeInstanceOf(ContextOverflowError);
    expect((failure as Error).message).toMatch(
      /^KAR step 1 \(round 1, k=2\) exceeds the reasoning model's context window even with its evidence shrunk from 2 message\(s\)/,
    );
    expect((failure as Error).message).toMatch(/reasonerBudgetTokens/);
    expect(model.reasons).toHaveLength(2);
    expect(await stack.store.getSteps(runId)).toEqual([]);
  });

  it('counts a transient model error and rethrows it unchanged for the workflow to retry', async () => {
    // Arrange
    const throttled = new ModelThrottledError('Bedrock Converse throttled');
    model.inner = { description: 'throttled', seek: async () => Promise.reject(throttled), reason: async () => Promise.reject(throttled) };

    // Act
    const seekFailure = await stack.handlers.seek({ runId, round: 1, chunk: 0 }).catch((e: unknown) => e);
    await stack.handlers.seek({ runId, round: 1, chunk: 1 }).catch(() => undefined);
    model.inner = scriptedModel({ everyChunk: true });
    await stack.handlers.seek({ runId, round: 1, chunk: 1 });
    model.inner = { description: 'throttled', seek: async () => Promise.reject(throttled), reason: async () => Promise.reject(throttled) };
    const reasonFailure = await stack.handlers.reason({ state, force: false }).catch((e: unknown) => e);

    // Assert
    expect(seekFailure).toBe(throttled);
    expect(reasonFailure).toBe(throttled);
    const counters = await stack.store.getCounters(runId);
    expect(counters.transientErrors).toEqual({ byRole: { seeker: 2, reasoner: 1 }, byError: { ModelThrottledError: 3 } });
  });

  it('writes the message of a seek retried after a timeout at most once', async () => {
    // Arrange: the first attempt writes its record, then "times out" before the task returns
    const recordSeek = stack.store.recordSeek.bind(stack.store);
    const spy = jest.spyOn(stack.store, 'recordSeek').mockImplementationOnce(async (...args) => {
      await recordSeek(...args);
      throw Object.assign(new Error('Task timed out after 300.00 seconds'), { name: 'States.Timeout' });
    });
    const firstAttempt = await stack.handlers.seek({ runId, round: 1, chunk: 5 }).catch((e: unknown) => e);
    spy.mockRestore();
    expect((firstAttempt as Error).name).toBe('States.Timeout');
    const firstMessage = (await stack.store.topK(runId, 10, 99)).find((m) => m.chunkIndex === 5);
    model.inner = {
      ...scriptedModel(),
      seek: async (r) => ({
        evidence: `a different reply for chunk ${r.chunk.index}`,
        score: 99,
        spans: [],
        usage: { calls: 1, inputTokens: 1, outputTokens: 1 },
        warnings: [],
      }),
    };

    // Act: the retry, and a duplicate running at the same time
    const outcomes = await Promise.all([stack.handlers.seek({ runId, round: 1, chunk: 5 }), stack.handlers.seek({ runId, round: 1, chunk: 5 })]);

    // Assert: one message, the first one written
    expect(outcomes.map((o) => ('outcome' in o ? o.outcome : o.status))).toEqual(['already-done', 'already-done']);
    const pool = await stack.store.topK(runId, 10, 99);
    expect(pool.filter((m) => m.chunkIndex === 5)).toEqual([firstMessage]);
    expect(await stack.store.poolSize(runId, 99)).toBe(1);
    expect((await stack.store.seekState(runId, 1, 5)).sought).toBe(true);
  });
});
