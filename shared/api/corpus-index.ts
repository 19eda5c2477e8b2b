/**
 * Token counts of a corpus's files: the one place where the API reads what ingestion (the S3
 * upload trigger, shared/pipeline/ingest.ts) recorded. Ingestion writes one summary per corpus,
 * `cache/corpora/<corpusId>/ingestion.json` (`CorpusIngestion`): every object's id (the key below
 * `corpora/<corpusId>/`), size in bytes, and characters and tokens, or why it was skipped.
 *
 * A file counts as ingested only when the summary lists it with the size the object has now; a
 * file uploaded (or re-uploaded with another size) after the last ingestion is "not yet ingested"
 * (`tokens: null`) until ingestion runs again. A re-upload of the same size is not detected (the
 * summary keeps no per-file hash): its counts are those of the previous bytes until re-ingested.
 */
import { NotFoundError } from '../errors';
import { getCorpusIngestion } from '../pipeline/ingest';
import type { BlobStore } from '../ports';

/** What ingestion recorded for one object. */
export interface IngestedCounts {
  /** Tokens of the decoded text (0 when skipped). */
  tokens: number;
  /** Characters (UTF-16 code units) of the decoded text (0 when skipped). */
  chars: number;
  /** Why ingestion did not chunk the object (binary, invalid UTF-8, empty). */
  skipped?: string;
}

/**
 * The ingestion counts of a corpus's objects, by object key; empty when the corpus was never
 * ingested (or its summary cannot be read).
 * @param objects the objects under `corpora/<corpusId>/` as listed now (key, size in bytes).
 */
export async function readIngestedCounts(
  blobs: BlobStore,
  corpusId: string,
  prefix: string,
  objects: ReadonlyArray<{ key: string; size: number }>,
): Promise<Map<string, IngestedCounts>> {
  let summary;
  try {
    summary = await getCorpusIngestion(blobs, corpusId);
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof SyntaxError) return new Map(); // removed meanwhile, or unreadable
    throw error;
  }
  const out = new Map<string, IngestedCounts>();
  if (!summary || !Array.isArray(summary.files)) return out;
  const sizes = new Map(objects.map((o) => [o.key, o.size]));
  for (const file of summary.files) {
    const key = prefix + file.id;
    if (sizes.get(key) !== file.bytes) continue;
    out.set(key, file.skipped === undefined ? { tokens: file.tokens ?? 0, chars: file.chars ?? 0 } : { tokens: 0, chars: 0, skipped: file.skipped });
  }
  return out;
}
