/**
 * Faults injected into the synthesized workflow run locally (local/engine/run.ts): throttled model calls,
 * chunks that fail permanently, prompts over the context window. Each ends with a clear outcome:
 * the run completes and reports the retries, a tolerated failure is listed with its error, or the
 * execution fails with a cause that names what failed. Retry backoff is replaced by 0 ms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { formatResult } from '../../local/cli/format';
import { runLocal } from '../../local/engine/run';
import { MODEL_RETRY } from '../../infra/extagents-workflow';
import { ContextOverflowError, ModelError, SeekingFailedError } from '../../shared/errors';
import { FaultInjectingModel } from '../support/fault-injecting-model';
import { hundredNotes, scriptedModel, writeCorpus } from '../support/corpus';

jest.setTimeout(120_000);

describe('the local workflow under injected model faults', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-faults-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const hundredChunks = async () => resolveCorpus([writeCorpus(dir, hundredNotes())]);
  const options = { chunkTokens: 64, rounds: 1, concurrency: 8, toleratedFailurePercentage: 5 };

  it('completes a run with 30% of model calls throttled and reports every retry', async () => {
    // Arrange
    const model = new FaultInjectingModel(scriptedModel(), { throttleRate: 0.3, seed: 7 });

    // Act
    const result = await runLocal({
      files: await hundredChunks(),
      question: 'What is the answer?',
      options,
      stateDir: path.join(dir, 'state'),
      model,
      retryIntervalMs: 0,
    });

    // Assert: nothing lost, every injected throttle counted once
    expect(result.chunks).toBe(100);
    expect(result.answer).toBe('saffron');
    expect(result.chunkFailures).toEqual([]);
    expect(new Set(model.soughtChunks).size).toBe(100);
    const injected = model.injected.throttled.seeker + model.injected.throttled.reasoner;
    expect(injected).toBeGreaterThan(20); // ~30% of at least 100 calls
    expect(result.retries).toEqual({
      total: injected,
      byRole: { seeker: model.injected.throttled.seeker, reasoner: model.injected.throttled.reasoner },
      byError: { ModelThrottledError: injected },
    });
    expect(result.usage.seeker.calls).toBe(100); // throttled calls never reached the model
    expect(formatResult(result, 0)).toContain(
      `Retried model errors: ${injected} (seeker ${model.injected.throttled.seeker}, reasoner ${model.injected.throttled.reasoner}; ModelThrottledError ${injected})`,
    );
  });

  it('tolerates one chunk out of 100 that fails permanently and lists it with its error', async () => {
    // Arrange
    const model = new FaultInjectingModel(scriptedModel(), { failingChunks: [37] });

    // Act
    const result = await runLocal({
      files: await hundredChunks(),
      question: 'What is the answer?',
      options,
      stateDir: path.join(dir, 'state'),
      model,
      retryIntervalMs: 0,
    });

    // Assert
    expect(result.answer).toBe('saffron');
    expect(result.chunkFailures.map((f) => f.chunk)).toEqual([37]);
    expect(result.chunkFailures).toEqual([{ chunk: 37, round: 1, error: 'ModelError', message: 'injected permanent failure of chunk 37' }]);
    expect(model.injected.permanent).toBe(1); // ModelError is not retried
    expect(formatResult(result, 0)).toContain('chunk 37 (round 1): ModelError: injected permanent failure of chunk 37');
  });

  it('fails the execution with a cause naming the failed chunks when more fail than tolerated', async () => {
    // Arrange: 6 of 100 chunks fail, 5% tolerated
    const failing = [3, 11, 19, 42, 64, 88];
    const model = new FaultInjectingModel(scriptedModel(), { failingChunks: failing, permanentError: (c) => new ModelError(`chunk ${c} is broken`) });

    // Act
    const failure = await runLocal({
      files: await hundredChunks(),
      question: 'What is the answer?',
      options,
      stateDir: path.join(dir, 'state'),
      model,
      retryIntervalMs: 0,
    }).catch((error: unknown) => error);

    // Assert
    // The errors the seeking agents recorded, whole, with their chunks (not the Map Run's envelope)
    expect(failure).toBeInstanceOf(SeekingFailedError);
    const { message } = failure as SeekingFailedError;
    expect(message).toMatch(/^Too many seeking agents failed in round 1 \(6 of the 100 chunk\(s\) of round 1, more than the tolerated 5%; the run stopped\): /);
    expect(message).toContain('ModelError (chunk 3): chunk 3 is broken; ModelError (chunk 11): chunk 11 is broken');
    expect(message).toMatch(/; and 1 other error\(s\)$/);
  });

  it('fails a throttled chunk only after the bounded retries, and lists it', async () => {
    // Arrange: every seek of every chunk is throttled for a one-chunk corpus
    const files = await resolveCorpus([writeCorpus(dir, { 'only.txt': 'The answer is saffron.' })]);
    const model = new FaultInjectingModel(scriptedModel(), { throttleRate: 1, throttledRoles: ['seeker'] });

    // Act
    const result = await runLocal({
      files,
      question: 'What is the answer?',
      options: { ...options, toleratedFailurePercentage: 100 },
      stateDir: path.join(dir, 'state'),
      model,
      retryIntervalMs: 0,
    });

    // Assert: 1 attempt + MODEL_RETRY.maxAttempts retries, then the chunk is listed, never a loop
    expect(model.injected.throttled.seeker).toBe(1 + (MODEL_RETRY.maxAttempts ?? 0));
    expect(result.retries.total).toBe(1 + (MODEL_RETRY.maxAttempts ?? 0));
    expect(result.chunkFailures.map((f) => f.chunk)).toEqual([0]);
    expect(result.chunkFailures[0]).toMatchObject({ chunk: 0, error: 'ModelThrottledError' });
    expect(result.answer).toBe('NO ANSWER');
  });

  it('fails the execution with an error naming the KAR step when the reasoning prompt overflows even halved', async () => {
    // Arrange
    const model = new FaultInjectingModel(scriptedModel(), { overflowReasoning: true });

    // Act
    const failure = await runLocal({
      files: await hundredChunks(),
      question: 'What is the answer?',
      options,
      stateDir: path.join(dir, 'state'),
      model,
      retryIntervalMs: 0,
    }).catch((error: unknown) => error);

    // Assert: sent twice (as is, then halved), never retried by the workflow
    expect(failure).toBeInstanceOf(ContextOverflowError);
    expect((failure as Error).message).toMatch(/^KAR step 1 \(round 1, k=1\) exceeds the reasoning model's context window/);
    expect(model.injected.overflow).toBe(2);
  });

  it('fails a chunk whose prompt exceeds the context window once, with an error naming the chunk, and goes on', async () => {
    // Arrange
    const model = new FaultInjectingModel(scriptedModel(), { overflowChunks: [12] });

    // Act
    const result = await runLocal({
      files: await hundredChunks(),
      question: 'What is the answer?',
      options,
      stateDir: path.join(dir, 'state'),
      model,
      retryIntervalMs: 0,
    });

    // Assert: sent once, not retried as is (round 1 has nothing to shrink but the chunk itself)
    expect(model.injected.overflow).toBe(1);
    expect(result.answer).toBe('saffron');
    expect(result.chunkFailures.map((f) => f.chunk)).toEqual([12]);
    expect(result.chunkFailures[0]).toMatchObject({ chunk: 12, error: 'ContextOverflowError' });
    expect(result.chunkFailures[0].message).toMatch(/^Chunk 12 \(round 1, \d+ tokens of corpus text\) exceeds the seeking model's context window/);
    expect(result.chunkFailures[0].message).toMatch(/chunkTokens.*now 64/);
  });
});

describe("the reasoning agent's reply withheld by the provider's content filter (issue 51, item 12)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-filtered-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is its own KAR outcome, and the run ends there: no wider step, no round 2, no best-effort answer', async () => {
    // Arrange: the seeking agents answer (the two-hop corpus); every reasoning reply is withheld.
    const { LlmAgents } = await import('../../shared/llm/agents');
    const { CONTENT_FILTERED } = await import('../../shared/ports');
    const { TWO_HOP_OPTIONS, TWO_HOP_QUESTION, twoHopChatModel, twoHopCorpus } = await import('../support/two-hop');
    const scripted = twoHopChatModel();
    let reasonerCalls = 0;
    const agents = new LlmAgents({
      seeker: scripted.chat,
      reasoner: {
        modelId: 'filtering-reasoner',
        complete: async () => {
          reasonerCalls += 1;
          return { text: '', stopReason: CONTENT_FILTERED, filteredBy: 'guardrail_intervened', inputTokens: 50, outputTokens: 0 };
        },
      },
    });

    // Act
    const result = await runLocal({
      files: await resolveCorpus([writeCorpus(path.join(dir, 'corpus'), twoHopCorpus())]),
      question: TWO_HOP_QUESTION,
      options: TWO_HOP_OPTIONS,
      stateDir: path.join(dir, 'state'),
      model: agents,
      retryIntervalMs: 0,
    });

    // Assert: one reasoning call, its outcome `filtered`; round 1's seeks only; said in the result.
    expect(result.answerable).toBe(false);
    expect(result.trace.map((s) => [s.round, s.k, s.outcome])).toEqual([[1, 1, 'filtered']]);
    expect(reasonerCalls).toBe(1);
    expect(result.usage.seeker.calls).toBe(result.chunks);
    expect(result.warnings.join('\n')).toMatch(/content filter withheld the reasoning agent's reply at KAR step 1 \(round 1, k=1\); the run refuses there/);
  });
});
