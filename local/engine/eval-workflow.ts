/**
 * The eval's `WorkflowRunner` (eval/strategies/types.ts): one question through the product's
 * workflow exactly as `extagents ask` runs it (`runLocal`: a local stack, the synthesized state
 * machine, dynalite in memory, the corpus in a local bucket), with the strategy's model.
 *
 * Each document becomes one corpus file named by its position (`d000000.txt`, …): the eval's
 * document ids are titles or paths that need not be valid corpus keys, and position names keep the
 * corpus order, so Prepare makes the same chunks as the eval's `chunkCorpus`. `originalId` maps the
 * run's document ids back. Every call gets a fresh temporary state directory, removed afterwards.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowRunner } from '../../eval/strategies/types';
import { resolveCorpus } from './corpus';
import { runLocal } from './run';

/** The run's file name of the document at `index`. */
const fileName = (index: number): string => `d${String(index).padStart(6, '0')}.txt`;

/** Run one eval question through `runLocal` (see the file comment). */
export const localWorkflowRunner: WorkflowRunner = async ({ question, documents, options, model }) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'extagents-eval-run-'));
  try {
    const corpus = path.join(dir, 'corpus');
    await fs.mkdir(corpus);
    const ids = new Map<string, string>();
    await Promise.all(
      documents.map(async (d, i) => {
        ids.set(fileName(i), d.id);
        await fs.writeFile(path.join(corpus, fileName(i)), d.text);
      }),
    );
    const originalId = (id: string): string => ids.get(id) ?? id;
    const result = await runLocal({ files: await resolveCorpus([corpus]), question, options, model, stateDir: path.join(dir, 'state'), persistent: false });
    return {
      result: {
        ...result,
        citations: result.citations.map((c) => ({ ...c, documentId: originalId(c.documentId) })),
      },
      originalId,
    };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
};
