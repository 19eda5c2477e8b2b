/**
 * What `extagents serve` offers its web page (web/, built into web/dist/) besides the API:
 * - the page itself: `GET /` (index.html) and `GET /assets/<file>` from the built assets, without a
 *   token (they hold no data; every data request of the page sends the bearer token);
 * - `GET /_web/…`, local only and behind the bearer token like the API: the server's model and the
 *   run options' JSON Schema (`info`), the runs of the state directory (`runs`), its corpora
 *   (`corpora`), importing a bundled corpus (`POST /_web/corpora/<name>`), a window of a run's
 *   document around a citation (`runs/<runId>/document`), and the surveys in the bucket.
 *
 * Offsets are UTF-16 code units of the document text the corpus readers produce (as in citations).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import fg from 'fast-glob';
import { parseRunOptions, RunOptionsSchema, type RunOptionsInput } from '../../shared/config';
import { graphemeBoundary } from '../../shared/unicode';
import { corpusPrefix, CORPORA_PREFIX, keyProblem } from '../../shared/corpus';
import { InvalidInputError, NotFoundError } from '../../shared/errors';
import { modelTraits } from '../../models/traits';
import { formatModelSpec } from '../../models/spec';
import type { ModelSpec } from '../../shared/model-spec';
import { resultKey, runRecordKey } from '../../shared/pipeline/layout';
import type { RunRecord } from '../../shared/pipeline/run-record';
import { MAX_QUESTION_CHARS, type PrepareEvent } from '../../shared/pipeline/state';
import { plainProblem, problemResponse, type ApiResponse } from '../../shared/api/problem';
import { readDocument } from '../../shared/readers';
import type { BlobStore } from '../../shared/ports';
import type { RunResult } from '../../shared/types';
import type { ExecutionLookup } from '../../shared/executions';
import { BUNDLED_CORPORA } from '../engine/corpus';
import { LOCAL_CORPUS_ID_PREFIX } from '../engine/runs';

/** Folder of the built page (web/build.mjs writes it: `npm run build`, which `npm test` and `npm pack` run). */
export const WEB_DIST_DIR = path.resolve(__dirname, '..', '..', 'web', 'dist');
/** What `serve` records of each run it starts, for the page's run list. */
export const webRunKey = (runId: string): string => `api/web-runs/${runId}.json`;
/** Runs listed by `GET /_web/runs`, newest first. */
export const MAX_LISTED_RUNS = 200;
/** Characters of a document returned around a range by default, and at most. */
export const DEFAULT_DOCUMENT_CONTEXT = 2000;
export const MAX_DOCUMENT_WINDOW = 200_000;
/** Documents whose text is kept in memory (a 10 MB document is read once, then sliced). */
const DOCUMENT_CACHE_SIZE = 4;

/** What `serve` records when it starts a run (`api/web-runs/<runId>.json`). */
export interface WebRunRecord {
  runId: string;
  question: string;
  corpus: PrepareEvent['corpus'];
  startedAt: string;
}

/** What the page's endpoints need. */
export interface WebDeps {
  blobs: BlobStore;
  executions: ExecutionLookup;
  modelSpec: ModelSpec;
  runOptionDefaults: RunOptionsInput;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
};

/**
 * The page's static files: `/` is index.html, `/assets/<name>` a built asset; undefined for any
 * other path. A missing build answers 503 with the command that builds it.
 */
export async function serveStatic(pathname: string, distDir: string = WEB_DIST_DIR): Promise<StaticResponse | undefined> {
  let file: string;
  if (pathname === '/' || pathname === '/index.html') file = 'index.html';
  else if (/^\/assets\/[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(pathname)) file = pathname.slice(1);
  else return undefined;
  const full = path.join(distDir, file);
  if (!existsSync(full)) {
    const problem =
      file === 'index.html'
        ? problemResponse(plainProblem(503, 'The web page is not built: run `npm run build:web` (npm run build and npm test run it)'))
        : problemResponse(plainProblem(404, `No asset ${pathname}`));
    return { ...problem, body: Buffer.from(problem.body) };
  }
  const body = await readFile(full);
  return {
    status: 200,
    headers: {
      'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      // The page loads only its own assets and talks only to this server.
      'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    },
    body,
  };
}

/** A static file's answer. */
export interface StaticResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The page's data endpoints (`/_web/…`, authenticated by the caller). */
export class WebEndpoints {
  private readonly runDocuments: RunDocuments;
  private bundledFileNames: Promise<Map<string, string[]>> | undefined;

  constructor(private readonly deps: WebDeps) {
    this.runDocuments = new RunDocuments(deps.blobs);
  }

  /** Answer `method pathname` under `/_web/`; a 404 problem for an unknown one. */
  async handle(method: string, pathname: string, query: URLSearchParams): Promise<ApiResponse> {
    try {
      if (method === 'GET' && pathname === '/_web/info') return json(this.info());
      if (method === 'GET' && pathname === '/_web/runs') return json({ runs: await this.listRuns() });
      if (method === 'GET' && pathname === '/_web/corpora') return json({ corpora: await this.listCorpora() });
      if (method === 'GET' && pathname === '/_web/surveys') return json({ surveys: await this.listSurveys() });
      if (method === 'GET' && pathname === '/_web/survey') return json(await this.survey(query.get('key') ?? ''));
      const bundle = /^\/_web\/corpora\/([a-z0-9-]+)$/.exec(pathname);
      if (method === 'POST' && bundle) return json(await this.importBundled(bundle[1]));
      const doc = /^\/_web\/runs\/([A-Za-z0-9._-]{1,80})\/document$/.exec(pathname);
      if (method === 'GET' && doc) return json(await this.documentWindow(doc[1], query));
      return problemResponse(plainProblem(404, `No route ${method} ${pathname}`));
    } catch (error) {
      if (error instanceof NotFoundError) return problemResponse(plainProblem(404, error.message));
      if (error instanceof WebRequestError || error instanceof InvalidInputError) return problemResponse(plainProblem(400, error.message));
      throw error;
    }
  }

  /** The model, the run options (JSON Schema — ranges, defaults — of the schema the API validates with, and this server's defaults) and the question's length limit (characters). */
  info(): Record<string, unknown> {
    const schema = z.toJSONSchema(RunOptionsSchema, { io: 'input', target: 'draft-2020-12' });
    return {
      model: formatModelSpec(this.deps.modelSpec),
      // The page says when the model is the offline extractive reader (word overlap, not a language model).
      extractive: !modelTraits(this.deps.modelSpec).languageModel,
      runOptionsSchema: schema,
      runOptionDefaults: parseRunOptions(this.deps.runOptionDefaults),
      bundledCorpora: Object.keys(BUNDLED_CORPORA),
      // The API's limit (QuestionSchema, characters of the trimmed question): the page refuses a
      // longer question as the API would, instead of cutting it.
      maxQuestionChars: MAX_QUESTION_CHARS,
    };
  }

  /** The runs of the state directory, newest first: id, status, question, answer, times. */
  async listRuns(): Promise<Array<Record<string, unknown>>> {
    const records = await this.deps.blobs.list('runs/_executions/');
    const names = records
      .map((o) => /^runs\/_executions\/(.+)\.json$/.exec(o.key)?.[1])
      .filter((n): n is string => n !== undefined)
      .sort()
      .reverse();
    const described = await Promise.all(names.map(async (name) => this.deps.executions.describe(name)));
    const runs = described
      .filter((d) => d !== undefined)
      .sort((a, b) => b.startedAt.localeCompare(a.startedAt))
      .slice(0, MAX_LISTED_RUNS);
    return Promise.all(
      runs.map(async (d) => {
        const [web, record, result] = await Promise.all([
          this.readJson<WebRunRecord>(webRunKey(d.name)),
          this.readJson<RunRecord>(runRecordKey(d.name)),
          d.status === 'SUCCEEDED' ? this.readJson<RunResult>(resultKey(d.name)) : Promise.resolve(undefined),
        ]);
        return {
          runId: d.name,
          status: d.status,
          startedAt: d.startedAt,
          ...(d.stoppedAt !== undefined && { stoppedAt: d.stoppedAt }),
          question: web?.question ?? record?.question ?? null,
          answer: result?.answer ?? null,
          ...(d.error !== undefined && { error: d.error }),
        };
      }),
    );
  }

  /**
   * The corpora of the bucket for the page's picker, one entry per corpus, by name, sorted by name:
   * a corpus under its own id (`ingest --id mill`, an upload) is named by its id; a content-addressed
   * copy an `ask` made (`local-<64 hex>`, local/engine/run.ts) is named by what it holds: the
   * bundled corpus whose files it is (`sotu`), else its files ("town.txt", "a.txt, b.txt", "a.txt and
   * 4 more files"), with the start of its id when two copies would read alike. A bundled corpus is
   * listed once: its import under its own name when there is one (its copies are then left out),
   * else the copy an `ask` made (asked in place, nothing imported), else the bundled entry itself
   * (`imported: false`: imported on first use, `POST /_web/corpora/<name>`).
   */
  async listCorpora(): Promise<CorpusListEntry[]> {
    const objects = await this.deps.blobs.list(CORPORA_PREFIX);
    const byId = new Map<string, { files: string[]; bytes: number }>();
    for (const o of objects) {
      const [id, ...rest] = o.key.slice(CORPORA_PREFIX.length).split('/');
      const entry = byId.get(id) ?? { files: [], bytes: 0 };
      entry.files.push(rest.join('/'));
      entry.bytes += o.size;
      byId.set(id, entry);
    }
    const bundledFiles = await this.bundledFiles();
    const out: CorpusListEntry[] = [];
    for (const [id, { files, bytes }] of byId) {
      let name = id;
      let bundled = id in BUNDLED_CORPORA;
      if (id.startsWith(LOCAL_CORPUS_ID_PREFIX)) {
        const held = new Set(files);
        const same = [...bundledFiles].find(([, names]) => names.length === held.size && names.every((n) => held.has(n)))?.[0];
        // A copy of a bundled corpus that is also imported under its own name: listed once, as that.
        if (same !== undefined && byId.has(same)) continue;
        name = same ?? describeFiles(files);
        bundled = same !== undefined;
      }
      out.push({ id, name, files: files.length, bytes, bundled, imported: true });
    }
    for (const name of Object.keys(BUNDLED_CORPORA)) {
      if (!out.some((c) => c.bundled && c.name === name)) out.push({ id: name, name, files: 0, bytes: 0, bundled: true, imported: false });
    }
    // Names that read alike (two copies of one file name with other bytes, or a copy of a bundled corpus twice): the id's start tells them apart.
    const counts = new Map<string, number>();
    for (const c of out) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
    for (const c of out) if ((counts.get(c.name) ?? 0) > 1 && c.id !== c.name) c.name = `${c.name} (${c.id.slice(0, LOCAL_CORPUS_ID_PREFIX.length + 8)})`;
    return out.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  /** The file names of each bundled corpus (read once per server). */
  private bundledFiles(): Promise<Map<string, string[]>> {
    this.bundledFileNames ??= Promise.all(
      Object.entries(BUNDLED_CORPORA).map(async ([name, bundled]) => {
        const { dir, pattern } = bundled();
        return [name, await fg(pattern, { cwd: dir, onlyFiles: true })] as const;
      }),
    ).then((entries) => new Map(entries));
    return this.bundledFileNames;
  }

  /**
   * Copy a bundled corpus (`sotu`) into `corpora/<name>/` once; later calls find it there.
   * @throws NotFoundError for an unknown name.
   */
  async importBundled(name: string): Promise<{ corpusId: string; files: number }> {
    const bundled = BUNDLED_CORPORA[name];
    if (!bundled) throw new NotFoundError(`No bundled corpus ${JSON.stringify(name)} (known: ${Object.keys(BUNDLED_CORPORA).join(', ')})`);
    const prefix = corpusPrefix(name);
    const existing = await this.deps.blobs.list(prefix);
    const { dir, pattern } = bundled();
    const files = await fg(pattern, { cwd: dir, onlyFiles: true });
    if (existing.length < files.length) {
      const have = new Set(existing.map((o) => o.key));
      for (const file of files.sort()) {
        if (!have.has(prefix + file)) await this.deps.blobs.put(prefix + file, await readFile(path.join(dir, file)));
      }
    }
    return { corpusId: name, files: files.length };
  }

  /** A window of a run's document (`RunDocuments.window`), for the page's document view. */
  documentWindow(runId: string, query: URLSearchParams): Promise<DocumentWindow> {
    return this.runDocuments.window(runId, query);
  }

  /** Survey results in the bucket (`surveys/…/survey.json`, written by `extagents survey` or the survey workflow). */
  async listSurveys(): Promise<Array<{ key: string; size: number }>> {
    const objects = await this.deps.blobs.list('surveys/');
    return objects
      .filter((o) => o.key.endsWith('.json') && !o.key.endsWith('index.json') && !o.key.endsWith('schedule.json'))
      .map((o) => ({ key: o.key, size: o.size }));
  }

  /** One survey under `surveys/`: its metadata (the `.json` object) and its Markdown (the `.md` beside it), when there. */
  async survey(key: string): Promise<{ key: string; metadata: unknown; markdown: string | null }> {
    if (!/^surveys\/[A-Za-z0-9._/-]+\.json$/.test(key) || key.includes('..')) throw new WebRequestError('key must be a .json object under surveys/');
    const metadata = await this.readJson<unknown>(key);
    if (metadata === undefined) throw new NotFoundError(`No survey ${key}`);
    let markdown: string | null = null;
    try {
      markdown = await this.deps.blobs.getText(key.replace(/\.json$/, '.md'));
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    return { key, metadata, markdown };
  }

  private async readJson<T>(key: string): Promise<T | undefined> {
    try {
      return JSON.parse(await this.deps.blobs.getText(key)) as T;
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof SyntaxError) return undefined;
      throw error;
    }
  }
}

/** One corpus of the page's picker (`GET /_web/corpora`). */
export interface CorpusListEntry {
  /** The corpus id a run names (`{"corpus": {"id": …}}`). */
  id: string;
  /** What the picker shows: the id, or for a content-addressed `local-…` copy what it holds (`sotu`, `town.txt`). */
  name: string;
  files: number;
  /** Sum of the files' sizes, bytes. */
  bytes: number;
  /** Whether it is (a copy of) a bundled corpus. */
  bundled: boolean;
  /** False for a bundled corpus not in the bucket yet (imported on first use). */
  imported: boolean;
}

/** What a content-addressed corpus holds, in a few words: "town.txt", "a.txt, b.txt", "a.txt and 4 more files". */
export function describeFiles(files: readonly string[]): string {
  const sorted = [...files].sort();
  if (sorted.length <= 2) return sorted.join(', ');
  return `${sorted[0]} and ${sorted.length - 1} more files`;
}

/** A request of the page's endpoints with a bad parameter (400). */
export class WebRequestError extends Error {
  override readonly name = 'WebRequestError';
}

/** Record what the page's run list shows of a run `serve` starts. */
export async function recordWebRun(blobs: BlobStore, input: PrepareEvent, startedAt: Date): Promise<void> {
  const record: WebRunRecord = { runId: input.runId, question: input.question, corpus: input.corpus, startedAt: startedAt.toISOString() };
  await blobs.put(webRunKey(input.runId), JSON.stringify(record), 'application/json');
}

function json(value: unknown): ApiResponse {
  return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: JSON.stringify(value) };
}

/** A window of a run's document: `[windowStart, windowEnd)` of its text (UTF-16 offsets) around `[start, end)`. */
export interface DocumentWindow {
  runId: string;
  documentId: string;
  /** Characters (UTF-16 code units) of the document's text. */
  chars: number;
  format?: string;
  start: number;
  end: number;
  windowStart: number;
  windowEnd: number;
  text: string;
}

/**
 * The documents of a run's own corpus as a run read them (the readers' extracted text, the text that
 * citations' offsets count): for the page's document view and `extagents runs show --citation`. Keeps
 * the last few documents read.
 */
export class RunDocuments {
  private readonly documents = new Map<string, { text: string; format?: string }>();

  constructor(private readonly blobs: BlobStore) {}

  /**
   * A window of a run's document: `[start - context, end + context)` clipped to the text, with the
   * text's length, so that the page shows a quote inside a 10 MB document without loading all of it.
   * Query: `id` (document id), `start`, `end` (UTF-16 offsets), `context` (characters either side).
   * Every edge falls on a grapheme cluster boundary (an edge asked inside a character or cluster
   * moves back to its start), so the window never holds half a surrogate pair.
   * @throws NotFoundError when the run or document is unknown; WebRequestError for bad offsets.
   */
  async window(runId: string, query: URLSearchParams): Promise<DocumentWindow> {
    const id = query.get('id') ?? '';
    const int = (name: string, fallback: number): number => {
      const raw = query.get(name);
      if (raw === null) return fallback;
      if (!/^\d{1,10}$/.test(raw)) throw new WebRequestError(`${name} must be a non-negative integer`);
      return Number(raw);
    };
    if (id === '') throw new WebRequestError('id (the document id) is required');
    const malformed = keyProblem(id, 'path');
    if (malformed) throw new WebRequestError(`id ${malformed}`);
    const doc = await this.text(runId, id);
    const chars = doc.text.length;
    // Every edge (range and window) falls on a grapheme cluster boundary, as chunk cuts do
    // (shared/unicode.ts `graphemeBoundary`): a slice never splits a character (half a surrogate
    // pair shows U+FFFD), so an edge asked inside a cluster moves back to the cluster's start.
    const start = graphemeBoundary(doc.text, Math.min(int('start', 0), chars), 'before');
    // A window is at most MAX_DOCUMENT_WINDOW characters of range plus its context, however large `end` is.
    const end = Math.max(start, graphemeBoundary(doc.text, Math.min(Math.max(int('end', start), start), chars, start + MAX_DOCUMENT_WINDOW), 'before'));
    const context = Math.min(int('context', DEFAULT_DOCUMENT_CONTEXT), MAX_DOCUMENT_WINDOW);
    const windowStart = graphemeBoundary(doc.text, Math.max(0, start - context), 'before');
    const windowEnd = Math.max(
      end,
      graphemeBoundary(doc.text, Math.min(chars, Math.max(end + context, windowStart), windowStart + MAX_DOCUMENT_WINDOW + (end - start)), 'before'),
    );
    return {
      runId,
      documentId: id,
      chars,
      ...(doc.format && { format: doc.format }),
      start,
      end,
      windowStart,
      windowEnd,
      text: doc.text.slice(windowStart, windowEnd),
    };
  }

  /**
   * The text of one document of a run's own corpus (read once, then kept among the last few).
   * @throws NotFoundError when the run has no run record yet (unknown, or still preparing) or its
   *   corpus holds no such document (a skipped one: with its reason).
   */
  async text(runId: string, id: string): Promise<{ text: string; format?: string }> {
    const record = await this.readJson<RunRecord>(runRecordKey(runId));
    if (!record) throw new NotFoundError(`No prepared run ${runId} (unknown, or still reading its corpus)`);
    const skipped = record.skipped.find((d) => d.documentId === id);
    if (skipped) throw new NotFoundError(`Document ${id} was skipped: ${skipped.reason}`);
    if (!record.documents.some((d) => d.id === id)) throw new NotFoundError(`No document ${JSON.stringify(id)} in the corpus of run ${runId}`);
    const candidates: string[] = [];
    if (record.corpusPrefix !== undefined) candidates.push(record.corpusPrefix + id);
    else {
      // Run records written before they named their corpus prefix.
      const web = await this.readJson<WebRunRecord>(webRunKey(runId));
      if (web?.corpus.prefix !== undefined) candidates.push(web.corpus.prefix + id);
      candidates.push(corpusPrefix(runId) + id, id);
    }
    // Corpus objects only: never the service's own data, whatever the id says.
    for (const key of candidates.filter((k) => !/^(runs|api|cache|surveys)\//.test(k))) {
      const cached = this.documents.get(key);
      if (cached) return cached;
      if (!(await this.blobs.exists(key))) continue;
      const read = await readDocument(id, await this.blobs.get(key));
      if (!('doc' in read)) throw new NotFoundError(`Document ${id} was skipped: ${read.skipped.reason}`);
      const entry = { text: read.doc.text, ...(read.doc.format && { format: read.doc.format }) };
      this.documents.set(key, entry);
      if (this.documents.size > DOCUMENT_CACHE_SIZE) this.documents.delete(this.documents.keys().next().value as string);
      return entry;
    }
    throw new NotFoundError(`Document ${JSON.stringify(id)} of run ${runId} is no longer in the bucket`);
  }

  private async readJson<T>(key: string): Promise<T | undefined> {
    try {
      return JSON.parse(await this.blobs.getText(key)) as T;
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof SyntaxError) return undefined;
      throw error;
    }
  }
}
