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
      // One recorded call per model call of the run: seeks in round stages, one stage per KAR step.
      expect(strategy.calls.filter((c) => c.role === 'seeker')).toHaveLength(direct.usage.seeker.calls);
      expect(strategy.calls.filter((c) => c.role === 'reasoner')).toHaveLength(direct.usage.reasoner.calls);
      expect(new Set(strategy.calls.filter((c) => c.role === 'reasoner').map((c) => c.stage)).size).toBe(direct.trace.length);
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
