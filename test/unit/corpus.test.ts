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
    ['bytes that are not UTF-8', Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]), /is not valid UTF-8 \(shown with U\+FFFD\): rename the file$/],
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
