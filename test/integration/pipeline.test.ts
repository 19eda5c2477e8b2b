/**
 * Pipelined rounds (run option pipelineRounds; paper 2B "Parallelism"): the synthesized workflow run
 * locally with a scripted model whose calls take a fixed time (test/support/two-hop.ts), each
 * question with and without pipelining. No timed assertion: the pipelined run's gain is shown by
 * which calls overlap (round 2's seeking agents while round 1's KAR steps run), its cost by
 * `usage.speculative`; bench/pipeline.ts measures the time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus, type CorpusFile } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import { ModelError } from '../../shared/errors';
import type { AgentModel } from '../../shared/ports';
import type { RunResult } from '../../shared/types';
import { writeCorpus } from '../support/corpus';
import { BIRTH_QUESTION, TWO_HOP_QUESTION, twoHopAnsweringModel, twoHopCorpus, withLatency, type TimedCall } from '../support/two-hop';

jest.setTimeout(120_000);

// ranking 'score': the KAR trace below follows the scripted model's relevance scores alone.
const options = { chunkTokens: 64, rounds: 2, concurrency: 2, syncMaxMessages: 4, ranking: 'score' as const };

/** What pipelining must not change. */
function comparable(result: RunResult): unknown {
  const { answer, answerable, citations, trace, rounds, chunks, poolSize, chunkFailures, skipped } = result;
  return { answer, answerable, citations, trace, rounds, chunks, poolSize, chunkFailures, skipped };
}

/** How long after the answering KAR step a speculative round may still start a seeking call (see its use). */
const STOP_MARGIN_MS = 2000;

describe('pipelined rounds (pipelineRounds)', () => {
  let dir: string;
  let files: CorpusFile[];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-pipeline-'));
    files = await resolveCorpus([writeCorpus(dir, twoHopCorpus())]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (question: string, pipelineRounds: boolean, latency: { seekMs: number; reasonMs: number }) => {
    const calls: TimedCall[] = [];
    const seekRounds = new Set<string>();
    const result = await runLocal({
      files,
      question,
      options: { ...options, pipelineRounds },
      stateDir: path.join(dir, `state-${pipelineRounds}`),
      model: withLatency(twoHopAnsweringModel(), latency, calls),
      onProgress: (p) => {
        if (p.type === 'seek') seekRounds.add(`${p.round}${p.speculative ? ' speculative' : ''}`);
      },
    });
    return { result, calls, seekRounds: [...seekRounds] };
  };

  it('answers a question that needs round 2 as the unpipelined run does, seeking round 2 during round 1 KAR, with no speculative call left over', async () => {
    // Arrange
    const latency = { seekMs: 20, reasonMs: 40 };

    // Act
    const plain = await run(TWO_HOP_QUESTION, false, latency);
    const pipelined = await run(TWO_HOP_QUESTION, true, latency);

    // Assert: the same answer, citations and KAR trace (round 1: k = 1, 2, 4, then the whole pool, refused; round 2: k = 2 answered)
    expect(pipelined.result.answer).toBe('Fredville');
    expect(comparable(pipelined.result)).toEqual(comparable(plain.result));
    const chunks = plain.result.chunks;
    expect(pipelined.result.trace.map((s) => [s.round, s.k, s.outcome])).toEqual([
      [1, 1, 'refused'],
      [1, 2, 'refused'],
      [1, 4, 'refused'],
      [1, chunks, 'refused'],
      [2, 1, 'refused'],
      [2, 2, 'answered'],
    ]);
    // Every chunk sought once per round in both; round 2 was used, so nothing is speculative.
    expect(pipelined.result.usage.seeker.calls).toBe(2 * chunks);
    expect(plain.result.usage.seeker.calls).toBe(2 * chunks);
    expect(pipelined.result.usage.speculative).toEqual({ calls: 0, inputTokens: 0, outputTokens: 0 });
    expect(plain.result.usage.speculative).toBeUndefined();
    // Fewer sequential steps: pipelined, round 2's seeking agents ran while round 1's KAR steps did
    // (a round-2 seek started before the last round-1 KAR step ended); unpipelined, none did.
    const overlapped = ({ calls }: { calls: TimedCall[] }): number => {
      const round1Kar = calls.filter((c) => c.role === 'reasoner').slice(0, 4);
      const lastKarEnd = Math.max(...round1Kar.map((c) => c.end));
      return calls.filter((c) => c.role === 'seeker' && c.round === 2 && c.start < lastKarEnd).length;
    };
    expect(overlapped(pipelined)).toBeGreaterThan(0);
    expect(overlapped(plain)).toBe(0);
    // The progress names the speculative round.
    expect(pipelined.seekRounds).toEqual(['1', '2 speculative']);
    expect(plain.seekRounds).toEqual(['1', '2']);
  });

  it('answers a question answered in round 1 as the unpipelined run does, and reports the stopped round-2 calls as speculative', async () => {
    // Arrange: one slow KAR step, so that round 2's speculative seeking agents run meanwhile
    const latency = { seekMs: 5, reasonMs: 400 };

    // Act
    const plain = await run(BIRTH_QUESTION, false, latency);
    const pipelined = await run(BIRTH_QUESTION, true, latency);

    // Assert
    expect(pipelined.result.answer).toBe('Freedonia');
    expect(comparable(pipelined.result)).toEqual(comparable(plain.result));
    expect(pipelined.result.trace.map((s) => [s.round, s.k, s.outcome])).toEqual([[1, 1, 'answered']]);
    const chunks = plain.result.chunks;
    expect(plain.result.usage.seeker.calls).toBe(chunks);
    const speculative = pipelined.result.usage.speculative;
    expect(speculative?.calls).toBeGreaterThan(0);
    expect(speculative?.calls).toBeLessThanOrEqual(chunks);
    // Counted in the same atomic update as the seeker's usage: every seeker call beyond round 1's is speculative.
    expect(pipelined.result.usage.seeker.calls - chunks).toBe(speculative?.calls);
    // The speculative round is stopped at the answer: no round-2 call starts once the stop has had
    // time to reach the Map Run (recording the KAR step, the Fail state, the Parallel stopping its
    // other branch: milliseconds, but a loaded 2-core CI machine needs a margin).
    const answeredAt = Math.max(...pipelined.calls.filter((c) => c.role === 'reasoner').map((c) => c.end));
    expect(pipelined.calls.filter((c) => c.role === 'seeker' && c.round === 2 && c.start > answeredAt + STOP_MARGIN_MS)).toEqual([]);
  });

  it('resumes a pipelined run aborted in its speculative round to the result of an uninterrupted one, seeking no chunk twice', async () => {
    // Arrange: the first execution is aborted when round 2's first (speculative) seeking agent starts
    const stateDir = path.join(dir, 'state-resume');
    const controller = new AbortController();
    const answering = twoHopAnsweringModel();
    const aborting = withLatency(
      {
        description: 'aborts at the first round-2 seek',
        seek: async (req) => {
          if (req.round === 2) controller.abort();
          return answering.seek(req);
        },
        reason: (req) => answering.reason(req),
      },
      { seekMs: 5, reasonMs: 40 },
    );
    const plain = await run(TWO_HOP_QUESTION, false, { seekMs: 0, reasonMs: 0 });
    const stopped = await runLocal({
      files,
      question: TWO_HOP_QUESTION,
      options: { ...options, pipelineRounds: true },
      stateDir,
      runId: 'p1',
      model: aborting,
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect((stopped as { error?: string }).error).toBe('ExecutionAborted');

    // Act
    const resumed = await runLocal({
      files,
      question: TWO_HOP_QUESTION,
      options: { ...options, pipelineRounds: true },
      stateDir,
      runId: 'p1',
      model: twoHopAnsweringModel(),
    });

    // Assert: the uninterrupted result; every chunk sought once per round over both executions
    expect(comparable(resumed)).toEqual(comparable(plain.result));
    expect(resumed.usage.seeker.calls).toBe(2 * plain.result.chunks);
    expect(resumed.usage.speculative?.calls).toBe(0);
  });

  describe('when the speculative round fails', () => {
    /** The answering model whose round-2 seek of chunk 0 throws a ModelError `failures` times. */
    const failingRound2 = (failures: number): AgentModel => {
      const inner = twoHopAnsweringModel();
      let left = failures;
      return {
        description: `round 2 of chunk 0 fails ${failures} time(s)`,
        seek: async (req) => {
          if (req.round === 2 && req.chunk.index === 0 && left > 0) {
            left -= 1;
            throw new ModelError('injected failure of chunk 0 in round 2');
          }
          return inner.seek(req);
        },
        reason: (req) => inner.reason(req),
      };
    };
    const seekings: string[] = [];
    const runWith = (model: AgentModel, pipelineRounds: boolean, stateDir: string) => {
      seekings.length = 0;
      return runLocal({
        files,
        question: TWO_HOP_QUESTION,
        options: { ...options, pipelineRounds },
        stateDir: path.join(dir, stateDir),
        model,
        onProgress: (p) => {
          const label = p.type === 'seek' ? `${p.round}${p.speculative ? ' speculative' : ''}` : undefined;
          if (label !== undefined && seekings[seekings.length - 1] !== label) seekings.push(label);
        },
      });
    };

    it('seeks round 2 again the ordinary way (only the chunks not sought) and answers as the unpipelined run', async () => {
      // Act: the speculative round fails (no failure tolerated among 7 chunks); the ordinary one succeeds
      const plain = await runWith(twoHopAnsweringModel(), false, 'state-fail-plain');
      const pipelined = await runWith(failingRound2(1), true, 'state-fail-once');

      // Assert: round 2 sought speculatively, then again (only chunk 0 left), then answered
      expect(seekings).toEqual(['1', '2 speculative', '2']);
      expect(comparable(pipelined)).toEqual(comparable(plain));
      expect(pipelined.usage.seeker.calls).toBe(2 * plain.chunks);
      expect(pipelined.usage.speculative?.calls).toBe(0);
    });

    it('fails the run as the unpipelined run fails when round 2 fails again', async () => {
      // Act
      const plain = await runWith(failingRound2(Infinity), false, 'state-fail-plain-always').catch((e: unknown) => e);
      const pipelined = await runWith(failingRound2(Infinity), true, 'state-fail-always').catch((e: unknown) => e);

      // Assert
      expect(plain).toBeInstanceOf(ModelError);
      expect(pipelined).toBeInstanceOf(ModelError);
      expect((pipelined as Error).message).toBe((plain as Error).message);
    });
  });
});
