/**
 * The heartbeat of a local run (local/engine/run-heartbeat.ts) holds the seeking counts of the moment,
 * not of a beat seconds before (issue 51, item 15): a run whose seeking stops after one chunk (as a
 * kill would leave it) shows that chunk as sought in `runs/<runId>/live.json`, which `runs show` reads.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { runLiveKey, type RunHeartbeat } from '../../local/engine/run-heartbeat';
import { runLocal } from '../../local/engine/run';
import type { SeekRequest } from '../../shared/ports';
import { hundredNotes, scriptedModel, writeCorpus } from '../support/corpus';

jest.setTimeout(60_000);

it('records each seeking agent that ended in the heartbeat at once', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'extagents-heartbeat-'));
  const stop = new AbortController();
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  try {
    const scripted = scriptedModel();
    let seeks = 0;
    // The first chunk's seeking agent ends; the second waits (a kill would leave the run here).
    const model = {
      ...scripted,
      seek: async (request: SeekRequest) => {
        seeks += 1;
        if (seeks > 1) await held;
        return scripted.seek(request);
      },
    };
    const stateDir = path.join(dir, 'state');
    const running = runLocal({
      files: await resolveCorpus([writeCorpus(path.join(dir, 'corpus'), hundredNotes(5))]),
      question: 'What is the answer?',
      options: { chunkTokens: 64, rounds: 1, concurrency: 1 },
      stateDir,
      runId: 'beat-1',
      model,
      signal: stop.signal,
    }).catch(() => undefined);
    const live = path.join(stateDir, 'bucket', ...runLiveKey('beat-1').split('/'));
    let heartbeat: RunHeartbeat | undefined;
    for (let i = 0; i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      try {
        heartbeat = JSON.parse(readFileSync(live, 'utf8')) as RunHeartbeat;
      } catch {
        continue;
      }
      if ((heartbeat.seek?.done ?? 0) >= 1) break;
    }
    // Well within one timed beat (10 s): the count came with the seeking agent's end.
    expect(heartbeat?.seek).toMatchObject({ round: 1, done: 1, total: 5 });
    stop.abort();
    release();
    await running;
  } finally {
    release();
    rmSync(dir, { recursive: true, force: true });
  }
});
