/**
 * PDF, HTML, Markdown and DOCX through the whole local workflow (local/engine/run.ts, as `extagents
 * ask` runs it): each question is answered from the right document, its citation names the page or
 * heading path, and the quote is found exactly at the citation's offsets of the document's text as
 * the readers read it. An unreadable file is skipped with its reason, and the run goes on.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import { startLocalStack } from '../../local/engine/stack';
import { runLocalSurvey } from '../../local/engine/survey';
import { readDocument } from '../../shared/readers';
import { surveySourcesKey } from '../../shared/survey/workflow';
import { harbourDocx, pdfOf } from '../support/documents';

jest.setTimeout(120_000);

let dir: string;
let corpus: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-formats-'));
  corpus = path.join(dir, 'corpus');
  mkdirSync(corpus);
  writeFileSync(
    path.join(corpus, 'report.pdf'),
    await pdfOf([['Annual report of the lighthouse board.'], ['Lights lit', 'Bell Rock 1811'], ['The keeper of Bell Rock was Robert Stevenson.']]),
  );
  writeFileSync(
    path.join(corpus, 'bridge.html'),
    '<!doctype html><html><head><title>Bridge</title><script>var ad = "Joseph Strauss banner";</script></head><body><nav>Menu Home</nav>' +
      '<h1>Golden Gate Bridge</h1><h2>History</h2><p>Joseph Strauss was the chief engineer of the Golden Gate Bridge.</p></body></html>',
  );
  writeFileSync(path.join(corpus, 'canal.md'), '# Canals\n\n## Locks\n\nThe *Caledonian* canal has **twenty-nine** locks along its length.\n');
  writeFileSync(path.join(corpus, 'harbour.docx'), await harbourDocx('The harbour master recorded a spring tide of six metres in March.', [['Month', 'Tide']]));
  writeFileSync(path.join(corpus, 'broken.docx'), 'PK\u0003\u0004 not a real archive');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a corpus of PDF, HTML, Markdown and DOCX files', () => {
  it.each([
    ['Who was the keeper of Bell Rock?', 'report.pdf', 'page 3', 'Robert Stevenson'],
    ['Who was the chief engineer of the Golden Gate Bridge?', 'bridge.html', 'Golden Gate Bridge › History', 'Joseph Strauss'],
    ['How many locks does the Caledonian canal have?', 'canal.md', 'Canals › Locks', 'twenty-nine'],
    ['What spring tide did the harbour master record in March?', 'harbour.docx', 'Harbour notes › Tides', 'six metres'],
  ])('%s: cites %s at %s with a quote found exactly in its text', async (question, documentId, location, words) => {
    const files = await resolveCorpus([corpus]);
    const result = await runLocal({ files, question, options: { chunkTokens: 64, rounds: 1 }, stateDir: path.join(dir, 'state') });

    expect(result.answerable).toBe(true);
    expect(result.answer).toContain(words);
    const citation = result.citations.find((c) => c.documentId === documentId);
    expect(citation).toMatchObject({ documentId, location });
    if (documentId.endsWith('.pdf')) expect(citation?.page).toBe(3);
    const read = await readDocument(documentId, await readFile(path.join(corpus, documentId)));
    if (!('doc' in read)) throw new Error('not read');
    expect(read.doc.text.slice(citation!.start, citation!.end).replace(/\s+/g, ' ')).toBe(citation!.quote);
    // The markup and page chrome are not text anywhere.
    expect(result.citations.map((c) => c.quote).join(' ')).not.toMatch(/<|\*\*|banner|Menu/);
    expect(result.skipped).toEqual([{ documentId: 'broken.docx', reason: expect.stringMatching(/^not a readable DOCX \(/) }]);
  });
});

describe('a survey over the same files', () => {
  it('reads them with the same readers: no markup or script text in its sources or its Markdown', async () => {
    const stack = await startLocalStack({ stateDir: path.join(dir, 'survey-state') });
    try {
      const out = await runLocalSurvey(
        {
          corpus: [corpus],
          topic: 'Golden Gate Bridge chief engineer',
          output: path.join(dir, 'survey.md'),
          options: { maxSections: 2, rounds: 1 },
          date: '2026-12-01',
        },
        stack,
      );
      const sources = JSON.parse(await stack.blobs.getText(surveySourcesKey(out.execution.surveyId))) as Array<{ id: string; title: string; text: string }>;

      expect(out.markdown).not.toMatch(/<script|<\/?p>|banner|Menu Home/);
      const html = sources.find((s) => s.id === 'bridge.html');
      expect(html?.title).toBe('Bridge');
      expect(html?.text).toContain('Joseph Strauss was the chief engineer');
      expect(html?.text).not.toMatch(/<|banner/);
      expect(sources.find((s) => s.id === 'report.pdf')?.text).toContain('Robert Stevenson');
      expect(out.metadata.sources.available).toBeGreaterThanOrEqual(4);
    } finally {
      await stack.stop();
    }
  });
});
