/**
 * Which chunks a round >= 2 seeks (run option `reseek`; docs/CONCEPTS.md, "Later rounds that re-read only
 * promising chunks"). `all`, the paper: every chunk a round covers (every chunk, or the chunks a
 * `coverage: 'grow'` run covered). `promising`, an extension of the method, not the paper's: round
 * r + 1 seeks only
 *
 * - the chunks whose seeking agent recorded a message in round r (it found something), and
 * - the chunks of the messages synchronized into round r + 1 (the global top-K snapshot that every
 *   seeking agent of that round reads), and every chunk that holds a part of a document one of those
 *   messages came from (`Message.sources`),
 *
 * both among the chunks the run covers. A chunk that found nothing in round r and shares no document
 * with the synchronized messages is not read again: the synchronized messages are the only thing a
 * later round adds to its prompt, and the rule bets that they change the reply only where they
 * concern the chunk's own documents or where the chunk already had something to say.
 *
 * An empty set (round r found nothing and no message was synchronized: `syncMaxMessages` or
 * `syncBudgetTokens` 0) skips the round: nothing new can enter the pool, whose KAR the reasoning agent
 * has just refused at every k (shared/pipeline/synchronize.ts).
 *
 * Pure and deterministic (ascending chunk indexes, no duplicates), so a replayed Synchronize writes the
 * same items.
 */
import { InvalidInputError } from './errors';

/** The reseek modes: `all`, every covered chunk in every round (the paper); `promising`, the rule above. */
export const RESEEK_MODES = ['all', 'promising'] as const;
export type ReseekMode = (typeof RESEEK_MODES)[number];

/** What the rule reads of a synchronized message. */
export interface SynchronizedSource {
  chunkIndex: number;
  /** Ids of the documents its evidence came from. */
  sources: readonly string[];
}

export interface PromisingChunksInput {
  /** The chunks the run covers (every chunk, or a grow run's coverage), any order. */
  covered: readonly number[];
  /** The chunks whose seeking agent recorded a message in the round just ended. */
  found: readonly number[];
  /** The messages synchronized into the next round. */
  synchronized: readonly SynchronizedSource[];
  /**
   * The documents of each chunk: `chunkDocuments[i]` the indexes into `documentIds` of the documents
   * chunk i holds a part of (Prepare writes it, shared/pipeline/layout.ts `reseekDocumentsKey`).
   */
  chunkDocuments: readonly (readonly number[])[];
  /** The run's document ids (the run record's `documents`), indexed as `chunkDocuments` indexes them. */
  documentIds: readonly string[];
}

/**
 * The chunks round r + 1 seeks under `reseek: 'promising'` (the rule of this module), ascending.
 * @throws InvalidInputError when a covered chunk has no entry in `chunkDocuments` (a map of another run).
 */
export function promisingChunks(input: PromisingChunksInput): number[] {
  const { covered, chunkDocuments, documentIds } = input;
  const documentIndex = new Map(documentIds.map((id, i) => [id, i]));
  const topDocuments = new Set<number>();
  for (const message of input.synchronized) {
    for (const source of message.sources) {
      const index = documentIndex.get(source);
      if (index !== undefined) topDocuments.add(index);
    }
  }
  const named = new Set([...input.found, ...input.synchronized.map((m) => m.chunkIndex)]);
  const chosen: number[] = [];
  for (const chunk of new Set(covered)) {
    const documents = chunkDocuments[chunk];
    if (documents === undefined) throw new InvalidInputError(`chunk ${chunk} has no documents in the run's chunk map (${chunkDocuments.length} chunks)`);
    if (named.has(chunk) || documents.some((d) => topDocuments.has(d))) chosen.push(chunk);
  }
  return chosen.sort((a, b) => a - b);
}

/**
 * The documents of each chunk as indexes into `documentIds` (what Prepare writes for a promising run).
 * @param segments per chunk, the document ids of its segments (in chunk order).
 * @throws InvalidInputError for a document id that is not in `documentIds`.
 */
export function chunkDocumentIndexes(segments: readonly (readonly string[])[], documentIds: readonly string[]): number[][] {
  const documentIndex = new Map(documentIds.map((id, i) => [id, i]));
  return segments.map((ids, chunk) =>
    [...new Set(ids)].map((id) => {
      const index = documentIndex.get(id);
      if (index === undefined) throw new InvalidInputError(`chunk ${chunk} holds document ${id}, which is not among the run's documents`);
      return index;
    }),
  );
}
