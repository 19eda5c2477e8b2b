/**
 * The shapes the page reads from `extagents serve`: the API's types from shared/ (type-only imports),
 * and the `/_web/` answers of local/services/web.ts.
 */

// The API's own shapes, as types only (erased by esbuild: no server code reaches the page's bundle;
// .dependency-cruiser.cjs allows web/ type-only imports of shared/ and nothing else).
import type { Citation, KarStep, Message, Quote, RoleUsage, RunResult } from '../../shared/types';
import type { RunStatus } from '../../shared/api/schemas';

export type { Citation, KarStep, Message, Quote, RoleUsage, RunResult, RunStatus };

export interface JsonSchemaProperty {
  type?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  /** The values of a choice (`ranking`, `coverage`, `reseek`): shown as a select. */
  enum?: unknown[];
}

export interface ServerInfo {
  model: string;
  extractive: boolean;
  runOptionsSchema: { properties: Record<string, JsonSchemaProperty> };
  runOptionDefaults: Record<string, unknown>;
  bundledCorpora: string[];
  /** The longest question the API accepts, characters of the trimmed question. */
  maxQuestionChars: number;
}

/** One corpus of `GET /_web/corpora` (local/services/web.ts `CorpusListEntry`). */
export interface CorpusEntry {
  id: string;
  /** What the picker shows: the id, or what a content-addressed copy holds (`sotu`, `town.txt`). */
  name: string;
  files: number;
  bytes: number;
  bundled: boolean;
  imported: boolean;
}

export interface RunListEntry {
  runId: string;
  status: string;
  startedAt: string;
  stoppedAt?: string;
  question: string | null;
  answer: string | null;
  error?: string;
}

export interface DocumentWindow {
  documentId: string;
  chars: number;
  format?: string;
  start: number;
  end: number;
  windowStart: number;
  windowEnd: number;
  text: string;
}
