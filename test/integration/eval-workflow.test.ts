/**
 * The eval's `extagents` strategies run the product's workflow (local/engine/eval-workflow.ts): on a
 * fixture, the strategy's answer, citations and model calls equal those of `runLocal` (what
 * `extagents ask` runs) over the same documents and options.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { localWorkflowRunner } from '../../local/engine/eval-workflow';
import { runLocal } from '../../local/engine/run';
import { chunkCorpus } from '../../shared/chunking';
import { DEFAULT_STRATEGY_OPTIONS, STRATEGY_FUNCTIONS } from '../../eval/strategies';
import { ExtractiveReader } from '../../shared/extractive';
import type { SourceDocument } from '../../shared/types';
import { TWO_HOP_QUESTION, twoHopCorpus, twoHopSparseModel } from '../support/two-hop';

jest.setTimeout(120_000);

const DOCUMENTS: SourceDocument[] = [
  { id: 'Golden Gate Bridge', text: 'The Golden Gate Bridge is a suspension bridge. It opened to traffic in May 1937. Joseph Strauss was its chief engineer.' },
  { id: 'Bay Bridge', text: 'The San Francisco–Oakland Bay Bridge opened in November 1936. It carries Interstate 80.' },
  { id: 'Filler/notes', text: 'Note 1. The harvest was abundant in the district, and the roads were repaired in the valley.' },
];
const QUESTION = 'Who was the chief engineer of the Golden Gate Bridge?';

describe('eval extagents through the product workflow', () => {
  it('gives the same answer, citations and calls as runLocal on the same documents and options', async () => {
    const chunkTokens = 64;
    const options = { ...DEFAULT_STRATEGY_OPTIONS, rounds: 2, bestEffort: false };

    const strategy = await STRATEGY_FUNCTIONS.extagents({
      question: QUESTION,
      documents: DOCUMENTS,
      chunks: chunkCorpus(DOCUMENTS, { chunkTokens }),
      model: new ExtractiveReader(),
      options,
      chunkTokens,
      workflow: localWorkflowRunner,
    });

    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'extagents-parity-'));
    try {
      const corpus = path.join(dir, 'corpus');
      await fs.mkdir(corpus);
      for (const [i, d] of DOCUMENTS.entries()) await fs.writeFile(path.join(corpus, `d${String(i).padStart(6, '0')}.txt`), d.text);
      const direct = await runLocal({
        files: await resolveCorpus([corpus]),
        question: QUESTION,
        options: {
          chunkTokens,
          rounds: 2,
          reasonerBudgetTokens: options.reasonerBudgetTokens,
          syncBudgetTokens: options.syncBudgetTokens,
          syncMaxMessages: options.syncMaxMessages,
          bestEffort: false,
          concurrency: options.callConcurrency,
        },
        model: new ExtractiveReader(),
        stateDir: path.join(dir, 'state'),
      });

      expect(strategy.prediction).toBe(direct.answer);
      expect(strategy.answerable).toBe(direct.answerable);
      expect(strategy.prediction.length).toBeGreaterThan(0);
      // One recorded call per model call of the run: seeks in round stages, one stage per KAR step that
      // called the model (a step over the same messages as a refused one reuses its refusal, no call).
      expect(strategy.calls.filter((c) => c.role === 'seeker')).toHaveLength(direct.usage.seeker.calls);
      expect(strategy.calls.filter((c) => c.role === 'reasoner')).toHaveLength(direct.usage.reasoner.calls);
      const reusedSteps = direct.warnings.filter((w) => w.includes('its reply reused, no model call')).length;
      expect(new Set(strategy.calls.filter((c) => c.role === 'reasoner').map((c) => c.stage)).size).toBe(direct.trace.length - reusedSteps);
      // The final context names the eval's documents, not the run's file names.
      expect(strategy.finalContext.length).toBeGreaterThan(0);
      for (const m of strategy.finalContext) for (const q of m.quotes) expect(DOCUMENTS.map((d) => d.id)).toContain(q.documentId);
      const cited = direct.citations.map((c) => DOCUMENTS[Number(c.documentId.slice(1, 7))].id);
      expect(strategy.finalContext.flatMap((m) => m.quotes.map((q) => q.documentId))).toEqual(expect.arrayContaining(cited));
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

/** A strategy of the workflow asked without one (no `workflow` runner in its input). */
const withoutWorkflow = (strategy: 'extagents-grow' | 'extagents-reseek') =>
  STRATEGY_FUNCTIONS[strategy]({
    question: QUESTION,
    documents: DOCUMENTS,
    chunks: chunkCorpus(DOCUMENTS, { chunkTokens: 64 }),
    model: new ExtractiveReader(),
    options: DEFAULT_STRATEGY_OPTIONS,
  });

describe('eval extagents-grow (the coverage extension) through the product workflow', () => {
  it('seeks only the first tranche when the reasoner answers from it, and answers as the full read does', async () => {
    const chunkTokens = 64;
    const options = { ...DEFAULT_STRATEGY_OPTIONS, rounds: 1, bestEffort: false };
    const fillers: SourceDocument[] = Array.from({ length: 10 }, (_, i) => ({
      id: `Filler ${i}`,
      text: `Note ${i}. The harvest number ${i} was abundant in the district, and the roads were repaired in the valley near the mill. `.repeat(4),
    }));
    const documents = [...fillers, { id: 'Golden Gate Bridge', text: 'Joseph Strauss was the chief engineer of the Golden Gate Bridge, a suspension bridge.' }];
    const input = {
      question: QUESTION,
      documents,
      chunks: chunkCorpus(documents, { chunkTokens }),
      model: new ExtractiveReader(),
      options,
      chunkTokens,
      workflow: localWorkflowRunner,
    };
    const full = await STRATEGY_FUNCTIONS.extagents(input);
    const grow = await STRATEGY_FUNCTIONS['extagents-grow']({ ...input, model: new ExtractiveReader() });

    const seeks = (r: typeof full) => r.calls.filter((c) => c.role === 'seeker').length;
    expect(input.chunks.length).toBeGreaterThanOrEqual(10);
    expect(seeks(full)).toBe(input.chunks.length);
    expect(seeks(grow)).toBe(4); // coverageFirstChunks' default: the first tranche sufficed
    expect(grow.answerable).toBe(true);
    expect(grow.prediction).toBe(full.prediction);
    expect(grow.prediction).toMatch(/Strauss/);
  });

  it('refuses outside the workflow (coverage is a run option of Prepare, not of the in-memory method)', async () => {
    await expect(withoutWorkflow('extagents-grow')).rejects.toThrow(/only through the workflow/);
  });
});

describe('eval extagents-reseek (later rounds that re-read only promising chunks) through the product workflow', () => {
  it('re-reads in round 2 only the chunks that found something, and answers as the full re-read does', async () => {
    // Arrange: the two-hop notes with the sparse scripted model (test/support/two-hop.ts): round 1 finds
    // the birth place and a filler sentence of the capital's note; round 2 gives the capital
    const chunkTokens = 64;
    const options = { ...DEFAULT_STRATEGY_OPTIONS, rounds: 2, bestEffort: false };
    const documents: SourceDocument[] = Object.entries(twoHopCorpus()).map(([id, text]) => ({ id, text }));
    const input = {
      question: TWO_HOP_QUESTION,
      documents,
      chunks: chunkCorpus(documents, { chunkTokens }),
      model: twoHopSparseModel({ capitalFiller: true }),
      options,
      chunkTokens,
      workflow: localWorkflowRunner,
    };

    // Act
    const full = await STRATEGY_FUNCTIONS.extagents(input);
    const reseek = await STRATEGY_FUNCTIONS['extagents-reseek']({ ...input, model: twoHopSparseModel({ capitalFiller: true }) });

    // Assert: round 2 re-reads 2 chunks instead of all of them; the same answer
    const seeks = (r: typeof full) => r.calls.filter((c) => c.role === 'seeker').length;
    expect(seeks(full)).toBe(2 * input.chunks.length);
    expect(seeks(reseek)).toBe(input.chunks.length + 2);
    expect(reseek.prediction).toBe('Fredville');
    expect(reseek.prediction).toBe(full.prediction);
  });

  it('refuses outside the workflow (reseek is a run option of the workflow, not of the in-memory method)', async () => {
    await expect(withoutWorkflow('extagents-reseek')).rejects.toThrow(/only through the workflow/);
  });
});
