/**
 * A two-hop question whose answer depends on round 2 (global knowledge synchronization): the crash
 * sweep's fixture (test/integration/crash-sweep.test.ts, test/support/crash-run.ts).
 *
 * The corpus is eight notes of one chunk each (chunkTokens 64; two never share a chunk). One says where Ada Quill was born
 * (Freedonia); another, among filler, names the capital of Freedonia. In round 1 the seeking agent of
 * the capital's chunk does not know the country matters and returns only filler; in round 2, given
 * the synchronized message that names Freedonia, it returns the capital. The reasoning agent never
 * answers unforced, so every run goes through all KAR steps of both rounds and ends with the
 * best-effort answer, whose text depends on round 2: "Fredville" with round 2's message, "Freedonia"
 * without it. A resume that skipped or misread round 2 cannot pass.
 */
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../../shared/ports';
import { NO_ANSWER } from '../../shared/types';
import { note } from './corpus';

export const TWO_HOP_QUESTION = 'What is the capital of the country where Ada Quill was born?';
export const TWO_HOP_OPTIONS = { chunkTokens: 64, rounds: 2, concurrency: 2, bestEffort: true, syncMaxMessages: 4 } as const;

const BIRTH = 'Ada Quill was born in Freedonia.';
const CAPITAL = 'The capital of Freedonia is Fredville.';

/** The eight notes: `n0.txt` … `n7.txt`; n2 holds the birth place, n5 the capital (after filler). */
export function twoHopCorpus(): Record<string, string> {
  const docs: Record<string, string> = {};
  for (let i = 0; i < 8; i++) docs[`n${i}.txt`] = note(i);
  docs['n2.txt'] = `Note 2. ${BIRTH}`;
  docs['n5.txt'] = `Note 5. Rain fell on district 5. ${CAPITAL}`;
  return docs;
}

const usage = { calls: 1, inputTokens: 10, outputTokens: 2 };

/** The two-hop scripted model (see the file comment); deterministic, so a replay sees the same replies. */
export function twoHopModel(): AgentModel {
  const quote = (req: SeekRequest, text: string, score: number): SeekResult => {
    const start = req.chunk.text.indexOf(text);
    return { evidence: text, score, spans: [{ start, end: start + text.length }], usage, warnings: [] };
  };
  return {
    description: 'two-hop scripted model (tests)',
    async seek(req: SeekRequest): Promise<SeekResult> {
      if (req.chunk.text.includes(BIRTH)) return quote(req, BIRTH, 90);
      const knowsCountry = req.synchronized.some((m) => m.evidence.includes('Freedonia'));
      if (req.chunk.text.includes(CAPITAL) && knowsCountry) return quote(req, CAPITAL, 95);
      // Filler: the chunk's first sentence, low score, so that the pool has one message per chunk.
      const first = req.chunk.text.slice(0, req.chunk.text.indexOf('.', 8) + 1);
      return quote(req, first, 10 + (req.chunk.index % 5));
    },
    async reason(req: ReasonRequest): Promise<ReasonResult> {
      if (!req.force) return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
      const capital = req.messages.find((m) => m.evidence.includes(CAPITAL));
      const birth = req.messages.find((m) => m.evidence.includes(BIRTH));
      if (capital && birth) return { answerable: true, answer: 'Fredville', citedMessageIds: [capital.id, birth.id], usage, warnings: [] };
      if (birth) return { answerable: true, answer: 'Freedonia', citedMessageIds: [birth.id], usage, warnings: [] };
      return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
    },
  };
}
