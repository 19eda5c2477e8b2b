/**
 * Later rounds that re-read only promising chunks (run option reseek 'promising'; shared/reseek.ts):
 * the synthesized workflow run locally over the two-hop notes (test/support/two-hop.ts; one note a
 * chunk at chunkTokens 64) and over a long document, with scripted seeking agents that stay quiet where
 * they find nothing, against the paper's re-read of every chunk (reseek 'all').
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus, type CorpusFile } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import { formatResult } from '../../local/cli/format';
import type { RunOptionsInput } from '../../shared/config';
import type { AgentModel } from '../../shared/ports';
import type { RunResult } from '../../shared/types';
import { writeCorpus } from '../support/corpus';
import { TWO_HOP_QUESTION, twoHopAtlasCorpus, twoHopCorpus, twoHopSparseModel } from '../support/two-hop';

jest.setTimeout(120_000);

const options = { chunkTokens: 64, rounds: 2, concurrency: 2, syncMaxMessages: 4, ranking: 'score' as const };

/** Which chunk each seeking agent read, per round, with the chunk's text (to find the birth and capital chunks). */
function recording(model: AgentModel): { model: AgentModel; sought: Array<{ round: number; chunk: number; text: string }> } {
  const sought: Array<{ round: number; chunk: number; text: string }> = [];
  return {
    sought,
    model: {
      description: model.description,
      seek: (req) => {
        sought.push({ round: req.round, chunk: req.chunk.index, text: req.chunk.text });
        return model.seek(req);
      },
      reason: (req) => model.reason(req),
    },
  };
}

describe('later rounds that re-read only promising chunks (reseek promising)', () => {
  let dir: string;
  let notes: CorpusFile[];
  let atlas: CorpusFile[];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-reseek-'));
    notes = await resolveCorpus([writeCorpus(path.join(dir, 'notes'), twoHopCorpus())]);
    atlas = await resolveCorpus([writeCorpus(path.join(dir, 'atlas'), twoHopAtlasCorpus())]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (name: string, files: CorpusFile[], model: AgentModel, extra: RunOptionsInput) => {
    const rec = recording(model);
    const stateDir = path.join(dir, `state-${name}`);
    const result: RunResult = await runLocal({ files, question: TWO_HOP_QUESTION, options: { ...options, ...extra }, stateDir, runId: name, model: rec.model });
    const read = (key: string): unknown => JSON.parse(readFileSync(path.join(stateDir, 'bucket', key), 'utf8'));
    const round = (r: number): number[] =>
      rec.sought
        .filter((s) => s.round === r)
        .map((s) => s.chunk)
        .sort((a, b) => a - b);
    const chunkOf = (text: string): number => rec.sought.find((s) => s.text.includes(text))?.chunk ?? -1;
    return { result, round, read, chunkOf };
  };

  it('seeks in round 2 only the chunks that found something in round 1, and answers as the full re-read does', async () => {
    // Arrange: round 1 finds the birth place and, in the capital's chunk, a filler sentence; the other chunks find nothing
    const model = () => twoHopSparseModel({ capitalFiller: true });

    // Act
    const all = await run('notes-all', notes, model(), {});
    const promising = await run('notes-promising', notes, model(), { reseek: 'promising' });

    // Assert: round 2 re-reads 2 chunks instead of every one, and the synchronized birth place gives the capital
    const birth = promising.chunkOf('Ada Quill was born');
    const capital = promising.chunkOf('The capital of Freedonia');
    const chunks = all.result.chunks;
    expect(all.round(2)).toHaveLength(chunks);
    expect(promising.round(1)).toHaveLength(chunks);
    expect(promising.round(2)).toEqual([birth, capital].sort((a, b) => a - b));
    expect(promising.read('runs/notes-promising/reseek/items-round-2.json')).toEqual(promising.round(2).map((chunk) => ({ chunk })));
    expect(promising.result.answer).toBe('Fredville');
    expect(promising.result.citations).toEqual(all.result.citations);
    expect(promising.result.trace).toEqual(all.result.trace);
    expect(promising.result.usage.seeker.calls).toBe(chunks + 2);
    expect(all.result.usage.seeker.calls).toBe(2 * chunks);
    expect(promising.result.reseek).toEqual({ mode: 'promising', chunksPerRound: [chunks, 2] });
    expect(promising.result.chunkFailures).toEqual([]);
    expect(all.result.reseek).toBeUndefined();
  });

  it("re-reads every chunk of a synchronized message's document, which found nothing in round 1", async () => {
    // Arrange: the birth place opens atlas.txt, the capital closes it chunks later; only the birth place is found in round 1
    const model = () => twoHopSparseModel({ capitalFiller: false });

    // Act
    const all = await run('atlas-all', atlas, model(), {});
    const promising = await run('atlas-promising', atlas, model(), { reseek: 'promising' });

    // Assert: round 2 reads atlas.txt's chunks (birth place to capital), not the notes
    const birth = promising.chunkOf('Ada Quill was born');
    const capital = promising.chunkOf('The capital of Freedonia');
    expect(capital - birth).toBeGreaterThanOrEqual(2);
    const atlasChunks = Array.from({ length: capital - birth + 1 }, (_, i) => birth + i);
    expect(promising.round(2)).toEqual(atlasChunks);
    expect(promising.round(2).length).toBeLessThan(all.round(2).length);
    expect([promising.result.answer, all.result.answer]).toEqual(['Fredville', 'Fredville']);
    expect(promising.result.citations).toEqual(all.result.citations);
  });

  it('loses the bridge when the chunk that needs the synchronized fact found nothing and shares no document with it', async () => {
    // Arrange: the notes corpus, the capital's chunk silent in round 1
    const model = () => twoHopSparseModel({ capitalFiller: false });

    // Act
    const all = await run('lose-all', notes, model(), { bestEffort: true });
    const lost = await run('lose-promising', notes, model(), { bestEffort: true, reseek: 'promising' });

    // Assert: the full re-read finds the capital in round 2; the promising one re-reads the birth chunk only
    expect(all.result.answer).toBe('Fredville');
    expect(lost.round(2)).toEqual([lost.chunkOf('Ada Quill was born')]);
    expect(lost.result.answer).toBe('Freedonia');
  });

  it.each([false, true])(
    'skips a round whose rule chooses no chunk (nothing found, nothing synchronized), pipelined %s, and answers best-effort from the pool',
    async (pipelineRounds) => {
      // Arrange: no synchronized messages; the seeking agents of rounds >= 2 find nothing
      const model = twoHopSparseModel({ capitalFiller: false, quietAfterRound1: true });

      // Act: three rounds: round 2 re-reads the birth chunk (found in round 1) and finds nothing, so round 3 has no chunk
      const name = `skip-${String(pipelineRounds)}`;
      const skip = await run(name, notes, model, { reseek: 'promising', rounds: 3, syncMaxMessages: 0, bestEffort: true, pipelineRounds });

      // Assert: no seek in round 3, its empty item list, and the best-effort answer from round 1's message
      const birth = skip.chunkOf('Ada Quill was born');
      expect(skip.round(2)).toEqual([birth]);
      expect(skip.round(3)).toEqual([]);
      expect(skip.read(`runs/${name}/reseek/items-round-3.json`)).toEqual([]);
      expect(skip.result.reseek).toEqual({ mode: 'promising', chunksPerRound: [skip.result.chunks, 1, 0] });
      // What ask and runs show print
      expect(formatResult(skip.result)).toContain('Reseek (promising): chunks sought per round of 7: round 1: 7, round 2: 1, round 3: skipped');
      expect(skip.result.rounds).toBe(3);
      expect(skip.result.chunkFailures).toEqual([]);
      expect(skip.result.answer).toBe('Freedonia');
      // KAR ran over rounds 1 and 2 only, then the forced answer
      expect(skip.result.trace.filter((s) => !s.forced).every((s) => s.round <= 2)).toBe(true);
      expect(skip.result.trace.at(-1)).toMatchObject({ forced: true });
    },
  );

  it('composes with coverage grow: rounds >= 2 choose among the chunks covered', async () => {
    // Act: grow from one chunk up to 4 (coverage 1, 2, 4: the birth place and the capital rank first), then promising
    const promising = await run('grow-promising', notes, twoHopSparseModel({ capitalFiller: true }), {
      coverage: 'grow',
      coverageFirstChunks: 1,
      coverageMaxChunks: 4,
      reseek: 'promising',
    });

    // Assert: round 1 read the 4 covered chunks; round 2 only the two of them that found something
    const birth = promising.chunkOf('Ada Quill was born');
    const capital = promising.chunkOf('The capital of Freedonia');
    expect(promising.round(1)).toHaveLength(4);
    expect(promising.round(2)).toEqual([birth, capital].sort((a, b) => a - b));
    expect(promising.result.answer).toBe('Fredville');
    expect(promising.result.coverage).toMatchObject({ covered: 4, cap: 4 });
    expect(promising.result.reseek).toEqual({ mode: 'promising', chunksPerRound: [4, 2] });
    expect(promising.result.chunkFailures).toEqual([]);
  });

  it('refuses an unknown reseek mode before any model call', async () => {
    const refused = await run('bad', notes, twoHopSparseModel({ capitalFiller: true }), { reseek: 'some' as 'all' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      name: 'InvalidRunOptionsError',
      message: expect.stringMatching(/reseek: Invalid option: expected one of "all"\|"promising"/),
    });
  });
});
