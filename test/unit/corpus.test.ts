/**
 * Corpus arguments to files (local/engine/corpus.ts): the same file reached twice is one document, also
 * through a symbolic link that makes a directory reach itself; a file name that cannot be a document
 * id is refused with the reason, never dropped.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { InvalidInputError } from '../../shared/errors';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-corpus-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('resolveCorpus', () => {
  it('refuses an empty argument instead of reading the current directory', async () => {
    writeFileSync(path.join(dir, 'here.txt'), 'A file of the current directory.');
    await expect(resolveCorpus([''], dir)).rejects.toThrow(/a corpus argument is empty/);
    await expect(resolveCorpus([path.join(dir, 'here.txt'), '  '], dir)).rejects.toBeInstanceOf(InvalidInputError);
  });

  it("names an argument it cannot list (a symbolic link loop) as the user's to fix, not a storage failure", async () => {
    symlinkSync('loop', path.join(dir, 'loop'));
    await expect(resolveCorpus([path.join(dir, 'loop')], dir)).rejects.toThrow(/^Corpus argument ".*loop" cannot be listed: ELOOP /);
  });

  it('leaves the state directory out of a corpus directory and a glob that contain it', async () => {
    mkdirSync(path.join(dir, 'c', 'st', 'bucket'), { recursive: true });
    writeFileSync(path.join(dir, 'c', 'a.txt'), 'A document.');
    writeFileSync(path.join(dir, 'c', 'st', 'bucket', 'run.json'), '{}');
    const options = { stateDir: path.join(dir, 'c', 'st') };

    expect((await resolveCorpus([path.join(dir, 'c')], dir, options)).map((f) => f.id)).toEqual(['a.txt']);
    expect((await resolveCorpus(['c/**/*'], dir, options)).map((f) => f.id)).toEqual(['c/a.txt']);
    // Without a state directory there, the same folder is read whole.
    expect((await resolveCorpus([path.join(dir, 'c')], dir)).map((f) => f.id)).toEqual(['a.txt', 'st/bucket/run.json']);
  });

  it('keeps one document per real file when a symbolic link loops back to a parent directory', async () => {
    // Arrange: S/sub/up -> .. (S again, then S/sub/up/sub/up, …)
    mkdirSync(path.join(dir, 'S', 'sub'), { recursive: true });
    writeFileSync(path.join(dir, 'S', 'ok.txt'), 'The keeper was Oswald.');
    writeFileSync(path.join(dir, 'S', 'sub', 'deep.txt'), 'Deep.');
    symlinkSync('..', path.join(dir, 'S', 'sub', 'up'));

    // Act
    const files = await resolveCorpus([path.join(dir, 'S'), path.join(dir, 'S', 'ok.txt')], dir);

    // Assert
    expect(files.map((f) => f.id)).toEqual(['ok.txt', 'sub/deep.txt']);
  });

  it.each([
    ['a backslash', 'back\\slash.txt', /has a backslash, which no document id \(object key\) may hold: rename the file$/],
    [
      'bytes that are not UTF-8',
      Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]),
      /is not valid UTF-8 \(shown with U\+FFFD\): rename the file$/,
    ],
  ])('refuses a file name with %s, naming it', async (_label, name, message) => {
    const folder = path.join(dir, 'C');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'good.txt'), 'Good.');
    writeFileSync(Buffer.concat([Buffer.from(`${folder}/`), Buffer.from(name)]), 'Bad name.');

    const failure = await resolveCorpus([folder], dir).catch((e: unknown) => e);

    expect(failure).toBeInstanceOf(InvalidInputError);
    expect((failure as Error).message).toMatch(message);
  });
});

describe('one corpus vocabulary: a corpus id of the state directory is a corpus argument', () => {
  /** A state directory holding the corpus `mill` as `extagents ingest --id mill` lays it out. */
  const ingested = (): string => {
    const stateDir = path.join(dir, 'state');
    mkdirSync(path.join(stateDir, 'bucket', 'corpora', 'mill', 'notes'), { recursive: true });
    writeFileSync(path.join(stateDir, 'bucket', 'corpora', 'mill', 'town.txt'), 'Millbrook was founded in 1842.');
    writeFileSync(path.join(stateDir, 'bucket', 'corpora', 'mill', 'notes', 'library.txt'), 'The library opened in 1903.');
    return stateDir;
  };

  it('resolves an ingested corpus id to its files, with the ids they are stored under', async () => {
    const stateDir = ingested();

    const files = await resolveCorpus(['mill'], dir, { stateDir });

    expect(files.map((f) => f.id)).toEqual(['notes/library.txt', 'town.txt']);
    expect(files[1].path).toBe(path.join(stateDir, 'bucket', 'corpora', 'mill', 'town.txt'));
  });

  it('prefers a file or directory of that name in the current directory (a path is what was typed)', async () => {
    const stateDir = ingested();
    mkdirSync(path.join(dir, 'mill'));
    writeFileSync(path.join(dir, 'mill', 'here.txt'), 'Here.');

    const files = await resolveCorpus(['mill'], dir, { stateDir });

    expect(files.map((f) => f.id)).toEqual(['here.txt']);
  });

  it('says what it tried when nothing matches, naming the corpora the state directory holds', async () => {
    const stateDir = ingested();

    const error = await resolveCorpus(['mil'], dir, { stateDir }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toBe(
      `Corpus argument "mil" matches nothing; tried a bundled corpus (sotu), a file or directory (${path.join(dir, 'mil')}), ` +
        `a corpus id in ${stateDir} (the ingested ones are mill; \`extagents ingest -c <files> --id mil\` makes one), a glob pattern (no file matches)`,
    );
  });

  it('looks up no corpus id without a state directory, and says so', async () => {
    ingested();

    await expect(resolveCorpus(['mill'], dir)).rejects.toThrow(/a corpus id \(no state directory given\)/);
  });
});

describe('a corpus file that changes while a run reads it (issue 51, item 1)', () => {
  it('is refused by name instead of being stored under a content hash its bytes do not have', async () => {
    const { appendFileSync } = await import('node:fs');
    const { FsBlobStore } = await import('../../local/engine/fs-blob-store');
    const { hashFiles, placeCorpus } = await import('../../local/engine/run');
    const log = path.join(dir, 'app.log');
    writeFileSync(log, 'line 1: the service started.\n');
    const files = await resolveCorpus([log], dir);
    const hashed = await hashFiles(files);
    // Appended between the read that hashes and the read that copies (a log still being written).
    appendFileSync(log, 'line 2: a request was served.\n');
    const blobs = new FsBlobStore(path.join(dir, 'bucket'));
    await expect(placeCorpus(blobs, files, hashed)).rejects.toThrow(
      /^Corpus file .*app\.log changed while it was read \(29 bytes when hashed, 59 bytes when copied\)/,
    );
    await expect(placeCorpus(blobs, files, hashed)).rejects.toBeInstanceOf(InvalidInputError);
    // Nothing was stored under the hash for it.
    expect((await blobs.list('corpora/')).map((o) => o.key)).toEqual([]);
    // Unchanged since hashing: stored, and the copy holds the bytes its address names.
    const again = await hashFiles(files);
    const prefix = await placeCorpus(blobs, files, again);
    expect(prefix).toBe(`corpora/local-${again.contentHash}/`);
    expect(Buffer.from(await blobs.get(`${prefix}app.log`)).toString()).toBe('line 1: the service started.\nline 2: a request was served.\n');
  });
});

describe('entries of a corpus folder that are not files (issue 51, item 10)', () => {
  it('lists a FIFO, a socket and symbolic links that loop or lead nowhere with their reasons, and a run names them in skipped', async () => {
    const { execFileSync } = await import('node:child_process');
    const net = await import('node:net');
    const corpus = path.join(dir, 'corpus');
    mkdirSync(corpus);
    writeFileSync(path.join(corpus, 'notes.txt'), 'The lighthouse on Kerrow Point was built by Ann Lee in 1871.\n');
    execFileSync('mkfifo', [path.join(corpus, 'pipe')]);
    const socket = net.createServer();
    await new Promise<void>((resolve) => socket.listen(path.join(corpus, 'socket'), resolve));
    symlinkSync('loop', path.join(corpus, 'loop'));
    symlinkSync('gone.txt', path.join(corpus, 'dangling'));
    try {
      const skipped: Array<{ documentId: string; reason: string }> = [];
      const files = await resolveCorpus([corpus], dir, { skipped });
      expect(files.map((f) => f.id)).toEqual(['notes.txt']);
      expect(skipped).toEqual([
        { documentId: 'dangling', reason: 'a symbolic link to nothing (its target does not exist)' },
        { documentId: 'loop', reason: 'a symbolic link loop: it leads back to itself, never to a file' },
        { documentId: 'pipe', reason: 'a FIFO (named pipe), not a file: reading it would wait for a writer' },
        { documentId: 'socket', reason: 'a socket, not a file' },
      ]);
      // Named directly: said to be a FIFO (not "matches nothing"), listed or refused.
      await expect(resolveCorpus([path.join(corpus, 'pipe')], dir)).rejects.toThrow(/^Corpus argument ".*pipe" is a FIFO \(named pipe\), not a file/);
      const direct: Array<{ documentId: string; reason: string }> = [];
      await expect(resolveCorpus([path.join(corpus, 'pipe')], corpus, { skipped: direct })).resolves.toEqual([]);
      expect(direct).toEqual([{ documentId: 'pipe', reason: expect.stringMatching(/^a FIFO/) }]);
      // A run lists them first in its skipped, and its stored result says the same.
      const { ask } = await import('../../local/library');
      const result = await ask({ corpus, cwd: dir, question: 'Who built the lighthouse on Kerrow Point?', stateDir: path.join(dir, 'state') });
      expect(result.skipped.map((s) => s.documentId)).toEqual(['dangling', 'loop', 'pipe', 'socket']);
      expect(result.answer).toMatch(/Ann Lee/);
      // Nothing readable at all: an empty corpus, naming each entry.
      rmSync(path.join(corpus, 'notes.txt'));
      await expect(ask({ corpus, cwd: dir, question: 'Who built it?' })).rejects.toThrow(
        /^The corpus has no file to read: dangling: a symbolic link to nothing.*pipe: a FIFO/,
      );
    } finally {
      socket.close();
    }
  });
});
