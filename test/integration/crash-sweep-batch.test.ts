/**
 * Crash-point sweep of batch seeking (run option seekMode 'batch'; shared/pipeline/seek-batch.ts):
 * the two-hop question of the crash sweep (test/integration/crash-sweep.test.ts) with each round
 * sought as one job of the local batch runner, killed with SIGKILL at points spread over the run
 * (the submission, the records run by the job, the collection, KAR, round 2, Finalize), then
 * resumed. Each resumed run must equal the uninterrupted one, the round's job must be submitted
 * once, and no record may reach the model again once its output was written: a kill loses at most
 * the record in flight.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeCorpus } from '../support/corpus';
import { comparable, events, finished, killAndResume, runChild } from '../support/crash-sweep';
import { twoHopCorpus } from '../support/two-hop';

jest.setTimeout(300_000);

/** A comparable result without the seeker's model time (wall time of the replayed calls: noise, not a count). */
function withoutTime(result: unknown): unknown {
  return JSON.parse(JSON.stringify(result, (key, value: unknown) => (key === 'modelMs' ? undefined : value)));
}

/** Kill points spread evenly over the run, besides the first event of each batch step. */
const POINTS = 12;

describe('crash-point sweep of batch seeking', () => {
  let dir: string;
  let corpus: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-crash-batch-'));
    corpus = writeCorpus(dir, twoHopCorpus());
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('resumes a batch run killed at any point to the uninterrupted result, submitting each job once and running no written record again', async () => {
    // Arrange: the uninterrupted run; its record calls and job submissions
    const baseLog = path.join(dir, 'base.log');
    const base = finished(await runChild(corpus, path.join(dir, 'base-state'), 0, baseLog, 'batch'));
    expect(base.result.answer).toBe('Fredville');
    expect(base.result.batch?.rounds.map((r) => r.mode)).toEqual(['batch', 'batch']);
    const baseEvents = events(baseLog);
    const records = (log: string) => events(log).filter((e) => e.label.startsWith('call record')).length;
    const baseRecords = records(baseLog);
    expect(baseRecords).toBe(14); // 7 chunks, 2 rounds
    const isJob = (label: string) => /^put runs\/sweep\/batch\/r\d\/p0\/job\.json$/.test(label);
    const labels = baseEvents.map((e) => e.label);
    const firsts = [
      labels.findIndex((l) => l.startsWith('put runs/sweep/batch/r1/p0/records.json')),
      labels.findIndex(isJob),
      labels.findIndex((l) => l.startsWith('call record')),
      labels.findIndex((l) => l.startsWith('put runs/sweep/batch/r1/p0/output/')),
      labels.findIndex((l) => l.startsWith('sought r1')),
      labels.findIndex((l) => l.startsWith('put runs/sweep/batch/r2/')),
    ].map((i) => i + 1);
    expect(firsts.every((p) => p > 0)).toBe(true);
    const spread = Array.from({ length: POINTS }, (_, i) => 1 + Math.round((i * (base.events - 1)) / (POINTS - 1)));
    const points = [...new Set([...spread, ...firsts])].sort((a, b) => a - b);

    // Act
    const outcomes = await killAndResume(corpus, dir, points, 'batch', 'batch-');

    // Assert
    let redone = 0;
    for (const { point, killed, resumed, log } of outcomes) {
      expect({ point, signal: killed.signal }).toEqual({ point, signal: 'SIGKILL' });
      expect({ point, result: withoutTime(comparable(resumed.result)) }).toEqual({ point, result: withoutTime(comparable(base.result)) });
      expect({ point, batch: resumed.result.batch }).toEqual({ point, batch: base.result.batch });
      // Each round's job submitted once across the killed and the resumed process
      const jobs = events(log).filter((e) => isJob(e.label)).length;
      expect({ point, jobs }).toEqual({ point, jobs: 2 });
      // At most the record in flight at the kill runs again
      const again = records(log) - baseRecords;
      expect({ point, again: again <= 1 }).toEqual({ point, again: true });
      redone += again;
    }
    process.stderr.write(
      `batch crash sweep: ${points.length} kill points over ${base.events} events; every resumed result identical; ` +
        `each job submitted once; ${redone} record call(s) redone in all (in flight at the kill)\n`,
    );
  });
});
