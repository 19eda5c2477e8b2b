/**
 * Crash-point sweep of a run with reseek 'promising' (shared/reseek.ts; docs/ARCHITECTURE.md,
 * "Resume"), beside the sweeps of test/integration/crash-sweep.test.ts and with their child process
 * (test/support/crash-run.ts, mode `reseek`): the two-hop question over the two-hop notes with the
 * sparse model (round 1 finds the birth place and, in the capital's chunk, a filler sentence; round 2
 * re-reads only those two chunks and answers from the capital). Killed with SIGKILL at points spread
 * over the run, the first event of each phase and the writes of the chunk map and of round 2's items,
 * then resumed: each resumed result (and what each round sought) equals the uninterrupted one, and no
 * chunk reaches the model again in a round once it was recorded as sought there. A separate file: the
 * other sweeps already take about three minutes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeCorpus } from '../support/corpus';
import { comparable, events, finished, killAndResume, runChild, seeksAfterRecorded } from '../support/crash-sweep';
import { twoHopCorpus } from '../support/two-hop';

jest.setTimeout(300_000);

/** The phase of an event of the uninterrupted log. */
function phaseOf(label: string, afterSync: boolean): string {
  if (/^put corpora\/|^put runs\/sweep\/(chunks\/|run\.json|manifest\.json|reseek\/chunk-documents\.json)/.test(label)) return 'Prepare';
  if (/^put runs\/sweep\/(sync\/|reseek\/items-)/.test(label)) return 'Synchronize';
  if (label.startsWith('put runs/sweep/result.json')) return 'Finalize';
  if (/^(call reason|step )/.test(label)) return 'KAR steps';
  return afterSync ? 'round-2 seeking' : 'round-1 seeking';
}

describe('crash-point sweep of a reseek promising run', () => {
  let dir: string;
  let corpus: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-crash-reseek-'));
    corpus = writeCorpus(dir, twoHopCorpus());
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("resumes a run killed at any of 6+ points, the chunk map's and round 2's item writes included, to the uninterrupted result, with no chunk sought twice", async () => {
    // Arrange: the uninterrupted run: 7 chunks in round 1, 2 in round 2, answered in round 2
    const baseLog = path.join(dir, 'base.log');
    const base = finished(await runChild(corpus, path.join(dir, 'base-state'), 0, baseLog, 'reseek'));
    expect(base.result.answer).toBe('Fredville');
    expect(base.result.reseek).toEqual({ mode: 'promising', chunksPerRound: [7, 2] });
    const baseEvents = events(baseLog);
    const syncAt = baseEvents.findIndex((e) => e.label.startsWith('put runs/sweep/sync/'));
    const phases = baseEvents.map((e, i) => phaseOf(e.label, syncAt >= 0 && i > syncAt));
    const spread = Array.from({ length: 6 }, (_, i) => 1 + Math.round((i * (base.events - 1)) / 5));
    const firsts = [...new Set(phases)].map((phase) => phases.indexOf(phase) + 1);
    const reseekWrites = baseEvents.flatMap((e, i) => (e.label.startsWith('put runs/sweep/reseek/') ? [i + 1] : []));
    expect(reseekWrites).toHaveLength(2);
    const points = [...new Set([...spread, ...firsts, ...reseekWrites])].sort((a, b) => a - b);

    // Act: kill at each point, then resume (two at a time: 2 cores)
    const outcomes = await killAndResume(corpus, dir, points, 'reseek');

    // Assert
    let duplicateSeeks = 0;
    for (const { point, killed, resumed, log } of outcomes) {
      expect({ point, signal: killed.signal }).toEqual({ point, signal: 'SIGKILL' });
      expect({ point, result: comparable(resumed.result), reseek: resumed.result.reseek }).toEqual({
        point,
        result: comparable(base.result),
        reseek: base.result.reseek,
      });
      duplicateSeeks += seeksAfterRecorded(log);
    }
    expect(duplicateSeeks).toBe(0);
    expect(new Set(points.map((p) => phases[p - 1]))).toEqual(
      new Set(['Finalize', 'KAR steps', 'Prepare', 'Synchronize', 'round-1 seeking', 'round-2 seeking']),
    );
    process.stderr.write(`reseek crash-point sweep: ${points.length} kill points over ${base.events} events, each resumed to the uninterrupted result\n`);
  });
});
