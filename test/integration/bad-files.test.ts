/**
 * Bad input files through the whole local workflow (local/engine/run.ts) and the CLI: each file is chunked
 * correctly (nothing dropped, offsets in the decoded text) or skipped with its reason in
 * `RunResult.skipped` and in the CLI's human output; a corpus with no usable text is a clear
 * EmptyCorpusError before any model call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildProgram } from '../../local/cli/cli';
import { resolveCorpus } from '../../local/engine/corpus';
import { formatResult } from '../../local/cli/format';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { runLocal } from '../../local/engine/run';
import { SEGMENT_SEPARATOR } from '../../shared/chunking';
import { EmptyCorpusError } from '../../shared/errors';
import { runChunkKey, runRecordKey } from '../../shared/pipeline/layout';
import type { RunRecord } from '../../shared/pipeline/run-record';
import type { AgentModel } from '../../shared/ports';
import { decodeDocument } from '../../shared/decode';
import type { Chunk } from '../../shared/types';
import { ANSWER_SENTENCE, scriptedModel, writeCorpus } from '../support/corpus';

jest.setTimeout(180_000);

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const concat = (...parts: Array<Uint8Array | number[]>): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));

/** A minified JSON array of about `bytes` bytes on one line (no line break, no sentence end). */
function oneLongLine(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const item = `{"id":${i},"district":"district ${i % 97}","revenue":${(i * 7919) % 100000},"note":"roads repaired"},`;
    parts.push(item);
    size += item.length;
  }
  return `[${parts.join('')}{}]`;
}

/** Bad files: the reason each skipped one must be reported with. */
const SKIPPED: Record<string, string> = {
  'invalid.txt': 'not valid UTF-8 at byte 3 (0xff)',
  'image.txt': 'binary file (PNG image)',
  'empty.txt': 'empty file',
  'blank.txt': 'whitespace only',
};

function badFiles(): Record<string, Uint8Array | string> {
  return {
    'invalid.txt': concat(utf8('abc'), [0xff], utf8('def')),
    'image.txt': concat([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d], utf8('IHDR')),
    'empty.txt': '',
    'blank.txt': ' \r\n\t\n\u3000\n',
  };
}

describe('bad input files in a local run', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-bad-files-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('chunks BOM, CRLF and a 20 MB line exactly and skips the rest with their reasons', async () => {
    // Arrange
    const line = oneLongLine(20 * 1024 * 1024);
    const files: Record<string, Uint8Array | string> = {
      ...badFiles(),
      'bom.txt': concat([0xef, 0xbb, 0xbf], utf8(`First paragraph.\r\n\r\n${ANSWER_SENTENCE}\r\n`)),
      'crlf.txt': 'one\r\ntwo\rthree\r\n\r\nfour\r\n',
      'line.json': line,
    };
    const corpus = writeCorpus(dir, files);
    const stateDir = path.join(dir, 'state');

    // Act
    const result = await runLocal({
      files: await resolveCorpus([corpus]),
      question: 'What is the answer?',
      options: { rounds: 1 },
      stateDir,
      model: scriptedModel(),
      runId: 'bad',
    });

    // Assert: skipped with reasons, in the result and in the CLI's human output
    expect(Object.fromEntries(result.skipped.map((s) => [s.documentId, s.reason]))).toEqual(SKIPPED);
    const human = formatResult(result, 0);
    expect(human).toContain(`Skipped documents (${Object.keys(SKIPPED).length}):`);
    for (const [id, reason] of Object.entries(SKIPPED)) expect(human).toContain(`  ${id}: ${reason}`);
    // Chunked exactly: every document rebuilt from its chunks equals its decoded text
    const bucket = new FsBlobStore(path.join(stateDir, 'bucket'));
    const record = JSON.parse(await bucket.getText(runRecordKey('bad'))) as RunRecord;
    expect(record.documents.map((d) => d.id).sort()).toEqual(['bom.txt', 'crlf.txt', 'line.json']);
    const rebuilt = new Map<string, string>();
    for (let i = 0; i < record.chunks; i++) {
      const chunk = JSON.parse(await bucket.getText(runChunkKey('bad', i, record.chunksFrom))) as Chunk;
      expect(chunk.tokens).toBeLessThanOrEqual(8000);
      expect(chunk.text).toBe(chunk.segments.map((s) => chunk.text.slice(s.chunkStart, s.chunkStart + s.end - s.start)).join(SEGMENT_SEPARATOR));
      for (const s of chunk.segments)
        rebuilt.set(s.documentId, (rebuilt.get(s.documentId) ?? '') + chunk.text.slice(s.chunkStart, s.chunkStart + s.end - s.start));
    }
    expect(rebuilt.get('bom.txt')).toBe(`First paragraph.\n\n${ANSWER_SENTENCE}\n`); // BOM removed, CRLF -> LF
    expect(rebuilt.get('crlf.txt')).toBe('one\ntwo\nthree\n\nfour\n');
    expect(rebuilt.get('line.json')).toBe(line); // 20 MB, nothing dropped
    expect(result.chunks).toBeGreaterThan(300);
    expect(result.chunkFailures).toEqual([]);
    // The answer is cited at its offsets in the decoded text
    expect(result.answer).toBe('saffron');
    const decoded = decodeDocument('bom.txt', files['bom.txt'] as Uint8Array);
    const citation = result.citations[0];
    expect(citation.documentId).toBe('bom.txt');
    expect('doc' in decoded && decoded.doc.text.slice(citation.start, citation.end)).toBe(ANSWER_SENTENCE);
  });

  it('prints the skipped documents and their reasons in the CLI output', async () => {
    // Arrange
    const corpus = writeCorpus(dir, { ...badFiles(), 'good.txt': `Report of the year. ${ANSWER_SENTENCE}` });
    const out: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });

    // Act
    try {
      await buildProgram().parseAsync([
        'node',
        'extagents',
        'ask',
        '--corpus',
        corpus,
        '--question',
        'What is the answer?',
        '--state-dir',
        path.join(dir, 'state'),
        '--no-progress',
        '--chunk-tokens',
        '64',
        '--rounds',
        '1',
      ]);
    } finally {
      write.mockRestore();
    }

    // Assert
    const text = out.join('');
    expect(text).toContain('Skipped documents (4):');
    for (const [id, reason] of Object.entries(SKIPPED)) expect(text).toContain(`  ${id}: ${reason}`);
  });

  it('reports a corpus of only bad files as an EmptyCorpusError naming each file, before any model call', async () => {
    // Arrange
    const files = await resolveCorpus([writeCorpus(dir, badFiles())]);
    const model: AgentModel = { description: 'must not be called', seek: jest.fn(), reason: jest.fn() };

    // Act
    const failure = await runLocal({ files, question: 'Anything?', stateDir: path.join(dir, 'state'), model }).catch((e: unknown) => e);

    // Assert
    expect(failure).toBeInstanceOf(EmptyCorpusError);
    for (const [id, reason] of Object.entries(SKIPPED)) expect((failure as Error).message).toContain(`${id}: ${reason}`);
    expect(model.seek).not.toHaveBeenCalled();
    expect(model.reason).not.toHaveBeenCalled();
  });
});
