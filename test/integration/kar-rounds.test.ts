/**
 * The run option karRounds (shared/pipeline/reason.ts `deferredToLastRound`) through the synthesized
 * workflow run locally: `each` (the default) reads after round 1 and ends there when it answers;
 * `last` seeks every round first, each after synchronization, and runs KAR once, over the pool of all
 * rounds; the eval's in-memory loop (eval/strategies/extagents.ts) takes the same path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import { hundredNotes, scriptedModel, writeCorpus } from '../support/corpus';

jest.setTimeout(120_000);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-kar-rounds-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('karRounds', () => {
  it("'each' answers after round 1; 'last' seeks round 2 first and reads once, over both rounds", async () => {
    const files = await resolveCorpus([writeCorpus(path.join(dir, 'corpus'), hundredNotes(8))]);
    const run = (karRounds: 'each' | 'last', name: string) => {
      const seeks: number[] = [];
      const statuses: string[] = [];
      const model = scriptedModel({ everyChunk: true });
      const counting = { ...model, seek: (req: Parameters<typeof model.seek>[0]) => (seeks.push(req.round), model.seek(req)) };
      return runLocal({
        files,
        question: 'What is the answer?',
        options: { chunkTokens: 64, rounds: 2, karRounds },
        stateDir: path.join(dir, name),
        model: counting,
        retryIntervalMs: 0,
        onProgress: (e) => {
          if (e.type === 'status' && e.phase === 'reasoning') statuses.push(`r${e.round}`);
        },
      }).then((result) => ({ result, seeks, statuses }));
    };

    const each = await run('each', 'each');
    const last = await run('last', 'last');

    // The same answer; 'each' never reached round 2, 'last' read only after it.
    expect(each.result.answer).toBe('saffron');
    expect(last.result.answer).toBe('saffron');
    expect(each.result.trace.map((s) => s.round)).toEqual([1]);
    expect(last.result.trace.map((s) => s.round)).toEqual([2]);
    expect(each.seeks.filter((r) => r === 2)).toHaveLength(0);
    expect(last.seeks.filter((r) => r === 2)).toHaveLength(last.result.chunks);
    expect(last.result.rounds).toBe(2);
    // The progress says no KAR step of round 1 under 'last' (none runs).
    expect(each.statuses).toEqual(['r1']);
    expect(last.statuses).toEqual(['r2']);
    expect(last.result.warnings.filter((w) => /karRounds/.test(w))).toEqual([]);
  });

  it("says 'last' has no effect with one round", async () => {
    const files = await resolveCorpus([writeCorpus(path.join(dir, 'corpus'), hundredNotes(4))]);
    const result = await runLocal({
      files,
      question: 'What is the answer?',
      options: { chunkTokens: 64, rounds: 1, karRounds: 'last' },
      stateDir: path.join(dir, 'one'),
      model: scriptedModel(),
      retryIntervalMs: 0,
    });
    expect(result.answer).toBe('saffron');
    expect(result.warnings).toContain("karRounds 'last' has no effect with rounds 1 (the only round is the last)");
  });
});
