/**
 * Citations of Markdown and HTML documents that open in the source file (issue 51 item 20, issue 53
 * item 5): `start`/`end` count characters of the extracted text, so each citation also names where
 * its block starts in the file (`sourceLine` for Markdown, `sourceOffset` for HTML); the source read
 * from there holds the quote, once its markup is dropped. Through the local workflow with the offline
 * extractive reader.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ask } from '../../local/library';

jest.setTimeout(60_000);

const MARKDOWN = `---
title: The team
owner: ops
---
# People

Notes kept by the office; see [the wiki](https://example.org/wiki).

## Engineers

The bridge over the **river Tay** was designed by the engineer *Martha Quill* in 1871.

- Tom Reed keeps the lighthouse
`;

const HTML = `<!doctype html><html><head><title>Suppliers</title></head><body>
<h1>Suppliers</h1>
<p>The office buys paper from <b>Northwind Paper</b>, whose depot is in Leith.</p>
<table><tr><th>Item</th><th>Price</th></tr><tr><td>Circuit board</td><td>23.50</td></tr></table>
</body></html>`;

/** The text of source markup: tags, emphasis and link targets dropped, white space collapsed. */
const plain = (source: string): string =>
  source
    .replace(/<[^>]*>/g, ' ')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`#|-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-source-'));
  writeFileSync(path.join(dir, 'people.md'), MARKDOWN);
  writeFileSync(path.join(dir, 'suppliers.html'), HTML);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a citation of a Markdown or HTML document', () => {
  it.each([
    ['people.md', 'Who designed the bridge over the river Tay?', 'Martha Quill'],
    ['suppliers.html', 'From which company does the office buy paper, and where is its depot?', 'Northwind Paper'],
  ])('%s: opens at the quoted text in the source file', async (file, question, needle) => {
    const result = await ask({ corpus: path.join(dir, file), cwd: dir, question });
    const citation = result.citations.find((c) => c.quote.includes(needle));
    expect(citation).toBeDefined();
    const source = readFileSync(path.join(dir, file), 'utf8');
    // The extracted offsets are not the file's (markup and front matter are not text) …
    expect(source.slice(citation!.start, citation!.end)).not.toBe(citation!.quote);
    // … the source position is: read from there, the block holds the quote.
    const from = file.endsWith('.md')
      ? source
          .split('\n')
          .slice(citation!.sourceLine! - 1)
          .join('\n')
      : source.slice(citation!.sourceOffset);
    expect(file.endsWith('.md') ? citation!.sourceLine : citation!.sourceOffset).toBeGreaterThan(0);
    const block = from.split(/\n\s*\n|<\/p>/)[0];
    expect(plain(block)).toContain(plain(citation!.quote).slice(0, 40));
  });
});

describe('extagents runs show --citation', () => {
  it('prints the document text around a citation, the quote marked, with where to open the source', async () => {
    const { main } = await import('../../local/cli/cli');
    const stateDir = path.join(dir, 'state');
    const result = await ask({ corpus: path.join(dir, 'people.md'), cwd: dir, question: 'Who designed the bridge over the river Tay?', stateDir });
    const n = result.citations.findIndex((c) => c.quote.includes('Martha Quill')) + 1;
    expect(n).toBeGreaterThan(0);
    const out: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
    try {
      process.exitCode = undefined;
      await main(['node', 'extagents', 'runs', 'show', result.runId, '--citation', String(n), '--context', '40', '--state-dir', stateDir]);
      await main(['node', 'extagents', 'runs', 'show', result.runId, '--citation', String(n), '--json', '--state-dir', stateDir]);
      await main(['node', 'extagents', 'runs', 'show', result.runId, '--citation', '99', '--state-dir', stateDir]);
    } finally {
      spy.mockRestore();
    }
    const [head, ...rest] = out[0].split('\n');
    const text = rest.join('\n');
    const cited = result.citations[n - 1];
    expect(head).toBe(
      `[${n}] people.md (People › Engineers) chars ${cited.start}-${cited.end} of ${head.match(/of (\d+)/)?.[1]}, source line ${cited.sourceLine}`,
    );
    expect(text).toContain(`[[${cited.quote}]]`);
    // --json: the citation and the window of text around it, as one JSON line.
    const json = JSON.parse(out[1]) as { citation: { start: number }; window: { start: number; text: string } };
    expect(json.citation.start).toBe(cited.start);
    expect(json.window.text).toContain(cited.quote);
    expect(process.exitCode).toBe(2);
    process.exitCode = undefined;
  });
});
