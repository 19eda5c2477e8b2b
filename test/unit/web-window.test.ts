/**
 * The page's document window (`GET /_web/runs/<runId>/document`, local/services/web.ts
 * `WebEndpoints.documentWindow`): its edges fall on grapheme cluster boundaries, so a window whose
 * asked edge lies inside a surrogate pair (or an emoji sequence) never holds half a character.
 * The page's corpus picker (`GET /_web/corpora`): corpora by name, one entry per corpus.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fg from 'fast-glob';
import { BUNDLED_CORPORA } from '../../local/engine/corpus';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { WebEndpoints } from '../../local/services/web';
import { graphemeBoundary } from '../../shared/unicode';
import { parseJsonLines } from '../../eval/jsonl';
import { causeMessage, MAX_CAUSE_CHARS } from '../../shared/executions';
import { runRecordKey } from '../../shared/pipeline/layout';
import type { RunRecord } from '../../shared/pipeline/run-record';

/** No lone surrogate: every high surrogate is followed by a low one and every low one preceded by a high one. */
const wellFormed = (s: string): boolean => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

describe('document window edges', () => {
  let dir: string;
  let web: WebEndpoints;
  // 'ab' then emoji (two units each), a family ZWJ sequence, and an accented letter (e + U+0301).
  const text = `ab${'😀'.repeat(10)} x 👨‍👩‍👧 y é z ${'🎉'.repeat(5)}`;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'web-window-'));
    const blobs = new FsBlobStore(dir);
    await blobs.put('corpora/c/doc.txt', Buffer.from(text, 'utf8'));
    const record = {
      runId: 'run-1',
      question: 'Q',
      options: {},
      documents: [{ id: 'doc.txt', chars: text.length }],
      skipped: [],
      chunks: 1,
      tokens: 10,
      tokenizer: 'o200k_base',
      createdAt: new Date(0).toISOString(),
      corpusPrefix: 'corpora/c/',
    } as unknown as RunRecord;
    await blobs.put(runRecordKey('run-1'), JSON.stringify(record), 'application/json');
    web = new WebEndpoints({ blobs, executions: {} as never, modelSpec: { provider: 'mock' } as never, runOptionDefaults: {} });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const window = async (start: number, end: number, context: number) => {
    const response = await web.handle(
      'GET',
      '/_web/runs/run-1/document',
      new URLSearchParams({ id: 'doc.txt', start: String(start), end: String(end), context: String(context) }),
    );
    expect(response.status).toBe(200);
    return JSON.parse(String(response.body)) as { start: number; end: number; windowStart: number; windowEnd: number; text: string };
  };

  test('no edge inside a character, for every start, end and context', async () => {
    for (let start = 0; start <= text.length; start++) {
      for (const length of [0, 1, 2, 3]) {
        for (const context of [0, 1, 2, 3, 5]) {
          const w = await window(start, start + length, context);
          expect(wellFormed(w.text)).toBe(true);
          expect(w.text).toBe(text.slice(w.windowStart, w.windowEnd));
          for (const edge of [w.start, w.end, w.windowStart, w.windowEnd]) expect(graphemeBoundary(text, edge, 'before')).toBe(edge);
          expect(w.windowStart).toBeLessThanOrEqual(w.start);
          expect(w.start).toBeLessThanOrEqual(w.end);
          expect(w.end).toBeLessThanOrEqual(w.windowEnd);
        }
      }
    }
  });

  test('a window asked from inside a surrogate pair starts before the pair', async () => {
    const w = await window(3, 5, 0); // 3 is inside the first emoji (units 2-3)
    expect(w.windowStart).toBe(2);
    expect(w.text.startsWith('😀')).toBe(true);
  });
});

describe('graphemeBoundary', () => {
  test('moves back or forward to a cluster boundary, keeps a boundary, clamps', () => {
    const s = 'a👨‍👩‍👧b';
    expect(graphemeBoundary(s, 2, 'before')).toBe(1);
    expect(graphemeBoundary(s, 2, 'after')).toBe(s.length - 1);
    expect(graphemeBoundary(s, 1, 'after')).toBe(1);
    expect(graphemeBoundary(s, -4, 'before')).toBe(0);
    expect(graphemeBoundary(s, 99, 'after')).toBe(s.length);
  });
});

describe('cut messages keep whole characters', () => {
  test('causeMessage never ends in half a surrogate pair', () => {
    for (const pad of [0, 1]) {
      const cut = causeMessage(`${'x'.repeat(pad)}${'😀'.repeat(MAX_CAUSE_CHARS)}`);
      expect(cut.length).toBeLessThanOrEqual(MAX_CAUSE_CHARS);
      expect(wellFormed(cut)).toBe(true);
    }
  });

  test('a malformed JSON Lines line is previewed without half a character', () => {
    const { warnings } = parseJsonLines(`{${'😀'.repeat(40)}\n`, 'f.jsonl');
    expect(warnings).toHaveLength(1);
    expect(wellFormed(warnings[0].message)).toBe(true);
  });
});

describe("the page's corpus picker (GET /_web/corpora)", () => {
  let dir: string;
  let blobs: FsBlobStore;
  let web: WebEndpoints;
  const hex = (c: string): string => c.repeat(64);
  const sotuFiles = (): string[] => {
    const { dir: sotu, pattern } = BUNDLED_CORPORA.sotu();
    return fg.sync(pattern, { cwd: sotu, onlyFiles: true });
  };

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'web-corpora-'));
    blobs = new FsBlobStore(dir);
    web = new WebEndpoints({ blobs, executions: {} as never, modelSpec: { kind: 'extractive' } as never, runOptionDefaults: {} });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const list = async (): Promise<Array<{ id: string; name: string; files: number; bundled: boolean; imported: boolean }>> => {
    const response = await web.handle('GET', '/_web/corpora', new URLSearchParams());
    return (JSON.parse(response.body) as { corpora: Array<{ id: string; name: string; files: number; bundled: boolean; imported: boolean }> }).corpora;
  };

  it('names the copies an ask made by what they hold, never by their hash, and lists sotu once (the copy, asked in place)', async () => {
    // Arrange: `ask -c sotu`, `ask -c town.txt` (twice, the file changed between), `ask -c docs/`, `ingest --id mill`
    for (const file of sotuFiles()) await blobs.put(`corpora/local-${hex('a')}/${file}`, 'x');
    await blobs.put(`corpora/local-${hex('b')}/town.txt`, 'Millbrook was founded in 1842.');
    await blobs.put(`corpora/local-${hex('c')}/town.txt`, 'Millbrook was founded in 1843.');
    for (const file of ['a.md', 'b.md', 'c.md']) await blobs.put(`corpora/local-${hex('d')}/${file}`, 'x');
    await blobs.put('corpora/mill/notes.txt', 'x');

    // Act
    const corpora = await list();

    // Assert
    expect(corpora.map((c) => [c.name, c.id])).toEqual([
      ['a.md and 2 more files', `local-${hex('d')}`],
      ['mill', 'mill'],
      ['sotu', `local-${hex('a')}`],
      [`town.txt (local-bbbbbbbb)`, `local-${hex('b')}`],
      [`town.txt (local-cccccccc)`, `local-${hex('c')}`],
    ]);
    expect(corpora.find((c) => c.name === 'sotu')).toMatchObject({ bundled: true, imported: true, files: sotuFiles().length });
    expect(corpora.some((c) => /[0-9a-f]{64}/.test(c.name))).toBe(false);
  });

  it('lists sotu once when it is also imported under its own name, and as not imported when the bucket has no copy', async () => {
    // Arrange
    expect((await list()).filter((c) => c.name === 'sotu')).toEqual([{ id: 'sotu', name: 'sotu', files: 0, bytes: 0, bundled: true, imported: false }]);
    for (const file of sotuFiles()) {
      await blobs.put(`corpora/local-${hex('a')}/${file}`, 'x');
      await blobs.put(`corpora/sotu/${file}`, 'x');
    }

    // Act
    const corpora = await list();

    // Assert
    expect(corpora.map((c) => [c.name, c.id])).toEqual([['sotu', 'sotu']]);
  });
});
