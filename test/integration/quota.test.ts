/**
 * Quota-aware fan-out through the local workflow (the synthesized state machine, local/engine/run.ts):
 * Prepare derives the seeking Map's MaxConcurrency from the run's stated quota (shared/quota.ts) and
 * puts it in the state's `config.concurrency`, which the Distributed Map reads through
 * MaxConcurrencyPath; a quota that cannot carry the seeks is refused before any model call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import { ModelThrottledError, QuotaExceededError } from '../../shared/errors';
import type { AgentModel } from '../../shared/ports';
import { ANSWER_SENTENCE, scriptedModel, writeCorpus } from '../support/corpus';

jest.setTimeout(120_000);

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'extagents-quota-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A scripted model whose seeks take 40 ms, recording how many were in flight at once. */
function measuring(): { model: AgentModel; calls: () => number; mostInFlight: () => number } {
  const inner = scriptedModel({ everyChunk: true });
  let calls = 0;
  let inFlight = 0;
  let most = 0;
  return {
    model: {
      ...inner,
      seek: async (request) => {
        calls += 1;
        inFlight += 1;
        most = Math.max(most, inFlight);
        try {
          await new Promise((resolve) => setTimeout(resolve, 40));
          return await inner.seek(request);
        } finally {
          inFlight -= 1;
        }
      },
      reason: (request) => ((calls += 1), inner.reason(request)),
    },
    calls: () => calls,
    mostInFlight: () => most,
  };
}

const corpus = (): Record<string, string> => ({
  'a.txt': 'The harvest was abundant in the district. '.repeat(60),
  'b.txt': `The roads were repaired in the valley. ${ANSWER_SENTENCE}`,
});

describe('a run with a stated quota', () => {
  it('seeks at the MaxConcurrency derived from it, not at its own concurrency, and reports how', async () => {
    const files = await resolveCorpus([writeCorpus(dir, corpus())]);
    const { model, mostInFlight } = measuring();

    // 150 requests/min × 1 s a seek / 60 = 2.5 seeks in flight -> MaxConcurrency 2 (of 8).
    const result = await runLocal({
      files,
      question: 'What is the answer?',
      options: { chunkTokens: 64, rounds: 1, concurrency: 8, quotaRequestsPerMinute: 150, seekLatencySeconds: 1 },
      model,
      stateDir: path.join(dir, 'state'),
    });

    expect(result.chunks).toBeGreaterThanOrEqual(6);
    expect(result.concurrency).toMatchObject({ concurrency: 2, requested: 8, boundBy: 'requestsPerMinute', byRequests: 2.5, throttledCalls: 0 });
    expect(mostInFlight()).toBe(2);
  });

  it('seeks at its own concurrency without a quota', async () => {
    const files = await resolveCorpus([writeCorpus(dir, corpus())]);
    const { model, mostInFlight } = measuring();

    const result = await runLocal({
      files,
      question: 'What is the answer?',
      options: { chunkTokens: 64, rounds: 1, concurrency: 4 },
      model,
      stateDir: path.join(dir, 'state'),
    });

    expect(result.concurrency).toMatchObject({ concurrency: 4, boundBy: 'concurrency', warnings: [] });
    expect(mostInFlight()).toBe(4);
  });

  it('is refused before any model call when one seek counts more tokens than the quota of a minute', async () => {
    const files = await resolveCorpus([writeCorpus(dir, corpus())]);
    const { model, calls } = measuring();

    const failure = await runLocal({
      files,
      question: 'What is the answer?',
      options: { chunkTokens: 64, quotaTokensPerMinute: 500 },
      model,
      stateDir: path.join(dir, 'state'),
    }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(QuotaExceededError);
    expect((failure as Error).message).toMatch(/^Refused before any model call: one seek counts [\d,]+ tokens against a quota of 500 tokens per minute/);
    expect(calls()).toBe(0);
  });

  it('reports the throttled calls that still happen and the seconds the seeking agents waited for their retries', async () => {
    const files = await resolveCorpus([writeCorpus(dir, corpus())]);
    const inner = scriptedModel({ everyChunk: true });
    const attempts = new Map<number, number>();
    // Chunks 0 and 1 are throttled twice each, then answer.
    const model: AgentModel = {
      ...inner,
      seek: async (request) => {
        const n = (attempts.get(request.chunk.index) ?? 0) + 1;
        attempts.set(request.chunk.index, n);
        if (request.chunk.index <= 1 && n <= 2) throw new ModelThrottledError('ThrottlingException: Too many tokens');
        return inner.seek(request);
      },
    };

    // The Retry's intervals are replaced by 300 ms (without jitter): 4 waits of at least 0.3 s.
    const result = await runLocal({
      files,
      question: 'What is the answer?',
      options: { chunkTokens: 64, rounds: 1, quotaRequestsPerMinute: 600, seekLatencySeconds: 1 },
      model,
      retryIntervalMs: 300,
      stateDir: path.join(dir, 'state'),
    });

    expect(result.chunkFailures).toEqual([]);
    expect(result.concurrency?.throttledCalls).toBe(4);
    expect(result.retries.byError).toEqual({ ModelThrottledError: 4 });
    expect(result.concurrency?.throttleWaitSeconds).toBeGreaterThanOrEqual(1.2);
    expect(result.concurrency?.throttleWaitSeconds).toBeLessThan(10);
  });
});
