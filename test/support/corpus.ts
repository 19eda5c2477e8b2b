/**
 * Test corpora on disk and a scripted model, shared by the workflow tests.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../../shared/ports';
import { NO_ANSWER } from '../../shared/types';

/** A note of about 40 tokens that mentions nothing the questions ask about; two never fit one 64-token chunk. */
export const note = (i: number): string =>
  `Note ${i}. The harvest was abundant in district ${i}, the roads were repaired and the postal service ` +
  `extended its routes to the new towns of the valley.`;

/** The sentence that answers "What is the answer?". */
export const ANSWER_SENTENCE = 'The answer is saffron.';

/**
 * Write `files` (name -> text or bytes) under `<dir>/corpus` and return that directory.
 */
export function writeCorpus(dir: string, files: Record<string, string | Uint8Array>): string {
  const root = path.join(dir, 'corpus');
  for (const [name, body] of Object.entries(files)) {
    const file = path.join(root, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, body);
  }
  return root;
}

/**
 * `count` one-chunk documents at chunkTokens 64 (`n000.txt`, …); the last one holds
 * {@link ANSWER_SENTENCE}.
 */
export function hundredNotes(count = 100): Record<string, string> {
  const docs: Record<string, string> = {};
  for (let i = 0; i < count; i++) docs[`n${String(i).padStart(3, '0')}.txt`] = note(i);
  docs[`n${String(count - 1).padStart(3, '0')}.txt`] = `Note ${count - 1}. ${ANSWER_SENTENCE}`;
  return docs;
}

const usage = { calls: 1, inputTokens: 10, outputTokens: 2 };

/**
 * A scripted model: a seeking agent returns {@link ANSWER_SENTENCE} (score 90, quoted) from the chunk
 * that holds it and nothing elsewhere; the reasoning agent answers "saffron" citing the first message
 * when it is given one, and refuses otherwise. `everyChunk` makes every chunk yield a message (its
 * first 40 characters, score 10), so that the pool holds one message per chunk.
 */
export function scriptedModel(options: { everyChunk?: boolean } = {}): AgentModel {
  return {
    description: 'scripted model (tests)',
    async seek(req: SeekRequest): Promise<SeekResult> {
      const start = req.chunk.text.indexOf(ANSWER_SENTENCE);
      if (start >= 0) return { evidence: ANSWER_SENTENCE, score: 90, spans: [{ start, end: start + ANSWER_SENTENCE.length }], usage, warnings: [] };
      if (options.everyChunk) {
        const evidence = req.chunk.text.slice(0, 40);
        return { evidence, score: 10, spans: [{ start: 0, end: evidence.length }], usage, warnings: [] };
      }
      return { evidence: null, score: 0, spans: [], usage, warnings: [] };
    },
    async reason(req: ReasonRequest): Promise<ReasonResult> {
      const best = req.messages.find((m) => m.evidence.includes('saffron'));
      if (!best) return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
      return { answerable: true, answer: 'saffron', citedMessageIds: [best.id], usage, warnings: [] };
    },
  };
}
