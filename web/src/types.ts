/**
 * The shapes the page reads from `extagents serve` (a subset of shared/api/schemas.ts and the
 * `/_web/` answers of local/services/web.ts), written out so that the page's build does not load
 * the server's modules.
 */

export interface Quote {
  documentId: string;
  /** UTF-16 offsets into the document text, `[start, end)`. */
  start: number;
  end: number;
  text: string;
}

export interface Message {
  id: string;
  round: number;
  chunkIndex: number;
  score: number;
  evidence: string;
  tokens: number;
  quotes: Quote[];
  sources: string[];
}

export interface KarStep {
  seq?: number;
  round: number;
  k: number;
  messagesUsed: number;
  evidenceTokens: number;
  outcome: 'answered' | 'refused';
  forced?: boolean;
}

export interface Citation {
  messageId: string;
  chunkIndex: number;
  round: number;
  score: number;
  documentId: string;
  start: number;
  end: number;
  quote: string;
  location?: string;
  page?: number;
}

export interface RoleUsage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  modelMs?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface RunResult {
  runId: string;
  question: string;
  answer: string;
  answerable: boolean;
  citations: Citation[];
  trace: KarStep[];
  usage: { seeker: RoleUsage; reasoner: RoleUsage };
  rounds: number;
  chunks: number;
  poolSize: number;
  skipped: Array<{ documentId: string; reason: string }>;
  failedChunks: number[];
  chunkFailures: Array<{ chunk: number; round: number; error: string; message: string }>;
  retries: { total: number; byRole: { seeker: number; reasoner: number }; byError: Record<string, number> };
  warnings: string[];
}

export interface RunStatus {
  runId: string;
  status: string;
  startedAt?: string;
  stoppedAt?: string;
  question?: string;
  progress: {
    phase: string;
    chunks: number | null;
    tokens: number | null;
    rounds: Array<{ round: number; sought: number; total: number }>;
    karSteps: KarStep[];
  };
  result?: RunResult;
  error?: { name: string; message: string };
}

export interface JsonSchemaProperty {
  type?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
}

export interface ServerInfo {
  model: string;
  extractive: boolean;
  runOptionsSchema: { properties: Record<string, JsonSchemaProperty> };
  runOptionDefaults: Record<string, unknown>;
  bundledCorpora: string[];
}

export interface CorpusEntry {
  id: string;
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
