/**
 * Crash-point sweep (docs/ARCHITECTURE.md, "Resume"): one two-round question through the local
 * workflow in a child process (test/support/crash-run.ts), killed with SIGKILL at event n — a model
 * call as it starts, a blob or message-store write as it completes — for points spread over the
 * whole run (Prepare, round-1 seeking, KAR steps, Synchronize, round-2 seeking, AnswerBestEffort,
 * Finalize), then resumed with the same run id and state directory. Each resumed run must equal the
 * uninterrupted one (answer, citations, trace with its rounds, pool, chunks, failures), and no chunk
 * may reach the model again in a round once it was recorded as sought there. The scripted model's
 * answer depends on round 2 (test/support/two-hop.ts), so a resume that skips or misreads round 2
 * cannot pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeCorpus } from '../support/corpus';
import { comparable, events, finished, killAndResume, runChild, seeksAfterRecorded } from '../support/crash-sweep';
import { TWO_HOP_OPTIONS, twoHopCorpus } from '../support/two-hop';

jest.setTimeout(300_000);

/** Kill points spread evenly over the run (the issue asks for at least 20, over all phases). */
const POINTS = 22;

/** The phase of the run an event of the uninterrupted log belongs to (for the coverage figure). */
function phaseOf(label: string, afterSync: boolean): string {
  if (/^put corpora\/|^put runs\/sweep\/(chunks\/|run\.json|manifest\.json)/.test(label)) return 'Prepare';
  if (label.startsWith('put runs/sweep/sync/')) return 'Synchronize';
  if (label.startsWith('put runs/sweep/result.json')) return 'Finalize';
  if (/forced/.test(label)) return 'AnswerBestEffort';
  if (/^(call reason|step )/.test(label)) return 'KAR steps';
  return afterSync ? 'round-2 seeking' : 'round-1 seeking';
}

/** Each kill was a SIGKILL, each resumed run equals the uninterrupted one, and no chunk was sought again once recorded. */
function expectResumedToBase(outcomes: Awaited<ReturnType<typeof killAndResume>>, base: ReturnType<typeof finished>): void {
  let duplicateSeeks = 0;
  for (const { point, killed, resumed, log } of outcomes) {
    expect({ point, signal: killed.signal }).toEqual({ point, signal: 'SIGKILL' });
    expect({ point, result: comparable(resumed.result) }).toEqual({ point, result: comparable(base.result) });
    duplicateSeeks += seeksAfterRecorded(log);
  }
  expect(duplicateSeeks).toBe(0);
}

describe('crash-point sweep: a run killed at any point resumes to the same result', () => {
  let dir: string;
  let corpus: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-crash-'));
    corpus = writeCorpus(dir, twoHopCorpus());
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the uninterrupted result after a SIGKILL at each of 22+ points in every phase, with no chunk sought twice', async () => {
    // Arrange: the uninterrupted run, its event count and the phase of each event
    const baseLog = path.join(dir, 'base.log');
    const base = finished(await runChild(corpus, path.join(dir, 'base-state'), 0, baseLog));
    expect(base.result.answer).toBe('Fredville'); // round 2's evidence decides the answer
    expect(base.result.trace.some((s) => s.round === 2)).toBe(true);
    const baseEvents = events(baseLog);
    expect(baseEvents).toHaveLength(base.events);
    const syncAt = baseEvents.findIndex((e) => e.label.startsWith('put runs/sweep/sync/'));
    const phases = baseEvents.map((e, i) => phaseOf(e.label, syncAt >= 0 && i > syncAt));
    // Points spread evenly over the run, plus the first event of each phase (Synchronize is one write).
    const spread = Array.from({ length: POINTS }, (_, i) => 1 + Math.round((i * (base.events - 1)) / (POINTS - 1)));
    const firsts = [...new Set(phases)].map((phase) => phases.indexOf(phase) + 1);
    const points = [...new Set([...spread, ...firsts])].sort((a, b) => a - b);
    const baseCalls = {
      seek: baseEvents.filter((e) => e.label.startsWith('call seek')).length,
      reason: baseEvents.filter((e) => e.label.startsWith('call reason')).length,
    };

    // Act: kill at each point, then resume (two points at a time: 2 cores)
    const outcomes = await killAndResume(corpus, dir, points);

    // Assert
    let identical = 0;
    let duplicateSeeks = 0;
    let redoneReasonerCalls = 0;
    for (const { point, killed, resumed, log } of outcomes) {
      expect({ point, signal: killed.signal }).toEqual({ point, signal: 'SIGKILL' });
      expect({ point, result: comparable(resumed.result) }).toEqual({ point, result: comparable(base.result) });
      identical += 1;
      // No chunk of a round reaches the model after it was recorded as sought in that round.
      duplicateSeeks += seeksAfterRecorded(log);
      const all = events(log);
      // Calls redone: at most those in flight at the kill (seekers: the concurrency; reasoner: 1).
      const seeks = all.filter((e) => e.label.startsWith('call seek')).length - baseCalls.seek;
      const reasons = all.filter((e) => e.label.startsWith('call reason')).length - baseCalls.reason;
      expect({ point, seeks: seeks <= TWO_HOP_OPTIONS.concurrency, reasons: reasons <= 1 }).toEqual({ point, seeks: true, reasons: true });
      redoneReasonerCalls += reasons;
    }
    expect(duplicateSeeks).toBe(0);
    const covered = new Set(points.map((p) => phases[p - 1]));
    expect([...covered].sort()).toEqual(['AnswerBestEffort', 'Finalize', 'KAR steps', 'Prepare', 'Synchronize', 'round-1 seeking', 'round-2 seeking'].sort());
    process.stderr.write(
      `crash-point sweep: ${points.length} kill points over ${base.events} events (${[...covered].join(', ')}); ` +
        `${identical} resumed results identical to the uninterrupted run; ${duplicateSeeks} chunks sent to the model again ` +
        `after being recorded; ${redoneReasonerCalls} reasoner calls redone (in flight at the kill)\n`,
    );
  });

  it('resumes a grow run (coverage grow) killed at any of 12+ points, GrowCoverage and every tranche included, to the uninterrupted result, with no chunk sought twice', async () => {
    // Arrange: the uninterrupted grow run: coverage 1, 2, 4, 7 in round 1, then round 2 over the 7
    const baseLog = path.join(dir, 'grow-base.log');
    const base = finished(await runChild(corpus, path.join(dir, 'grow-base-state'), 0, baseLog, 'grow'));
    expect(base.result.answer).toBe('Fredville');
    expect(base.result.coverage).toEqual({ mode: 'grow', covered: 7, cap: 7, tranches: 4 });
    const baseEvents = events(baseLog);
    const syncAt = baseEvents.findIndex((e) => e.label.startsWith('put runs/sweep/sync/'));
    const growPhase = (label: string, i: number): string => {
      if (/^put runs\/sweep\/coverage\/(order\.json|items-0-1\.json)/.test(label)) return 'Prepare';
      if (/^put runs\/sweep\/coverage\/items-[1-9]/.test(label)) return 'GrowCoverage';
      if (label.startsWith('put runs/sweep/coverage/items-0-')) return 'Synchronize';
      return phaseOf(label, syncAt >= 0 && i > syncAt);
    };
    const phases = baseEvents.map((e, i) => growPhase(e.label, i));
    const spread = Array.from({ length: 12 }, (_, i) => 1 + Math.round((i * (base.events - 1)) / 11));
    // The first event of each phase, and the first write of each GrowCoverage (a kill right after a tranche is written).
    const firsts = [...new Set(phases)].map((phase) => phases.indexOf(phase) + 1);
    const grows = phases.flatMap((phase, i) => (phase === 'GrowCoverage' ? [i + 1] : []));
    const points = [...new Set([...spread, ...firsts, ...grows])].sort((a, b) => a - b);

    // Act
    const outcomes = await killAndResume(corpus, dir, points, 'grow', 'grow-');

    // Assert
    let duplicateSeeks = 0;
    for (const { point, killed, resumed, log } of outcomes) {
      expect({ point, signal: killed.signal }).toEqual({ point, signal: 'SIGKILL' });
      expect({ point, result: comparable(resumed.result), coverage: resumed.result.coverage }).toEqual({
        point,
        result: comparable(base.result),
        coverage: base.result.coverage,
      });
      duplicateSeeks += seeksAfterRecorded(log);
    }
    expect(duplicateSeeks).toBe(0);
    expect(new Set(points.map((p) => phases[p - 1]))).toEqual(
      new Set(['AnswerBestEffort', 'Finalize', 'GrowCoverage', 'KAR steps', 'Prepare', 'Synchronize', 'round-1 seeking', 'round-2 seeking']),
    );
  });

  it('resumes a pipelined run (pipelineRounds) killed at any of 10 points to the uninterrupted result, with no chunk sought twice', async () => {
    // Arrange: the uninterrupted pipelined run (the event order of its parallel branches varies from run to run)
    const base = finished(await runChild(corpus, path.join(dir, 'pipe-base-state'), 0, path.join(dir, 'pipe-base.log'), 'pipeline'));
    expect(base.result.answer).toBe('Fredville');
    expect(base.result.usage.speculative).toEqual({ calls: 0, inputTokens: 0, outputTokens: 0 }); // round 2 was needed
    const points = Array.from({ length: 10 }, (_, i) => 1 + Math.round((i * (base.events - 2)) / 9));

    // Act
    const outcomes = await killAndResume(corpus, dir, points, 'pipeline', 'pipe-');

    // Assert
    expectResumedToBase(outcomes, base);
  });

  it('resumes a follow-up run (synchronization follow-up) killed at any of 10 points to the uninterrupted result, its follow-up question included', async () => {
    // Arrange: the uninterrupted run asks one follow-up question, recorded with round 1's last step
    const baseLog = path.join(dir, 'follow-base.log');
    const base = finished(await runChild(corpus, path.join(dir, 'follow-base-state'), 0, baseLog, 'follow-up'));
    expect(base.result.answer).toBe('Fredville');
    expect(base.result.trace.filter((s) => s.followUp !== undefined)).toHaveLength(1);
    const baseEvents = events(baseLog);
    const asked = baseEvents.findIndex((e) => e.label.startsWith('call follow-up')) + 1;
    expect(asked).toBeGreaterThan(0);
    // Points spread over the run, and the follow-up call itself and the writes right after it.
    const spread = Array.from({ length: 7 }, (_, i) => 1 + Math.round((i * (base.events - 1)) / 6));
    const points = [...new Set([...spread, asked, asked + 1, asked + 2])].sort((a, b) => a - b);

    // Act
    const outcomes = await killAndResume(corpus, dir, points, 'follow-up', 'follow-');

    // Assert
    expectResumedToBase(outcomes, base);
  });
});
