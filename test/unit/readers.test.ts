/**
 * The corpus readers (shared/readers/): HTML, Markdown, PDF and DOCX become readable text with a map
 * back to the source, boilerplate is not text, tables become rows, and a file that cannot be read is
 * skipped with its reason. The PDF and DOCX fixtures are made here (pdf-lib, docx), not committed.
 */
import { documentFormat, locationAt, readDocument } from '../../shared/readers';
import type { SourceDocument } from '../../shared/types';
import { harbourDocx, pdfOf, twoColumnPdf } from '../support/documents';
import { columnText, joinPdfLines } from '../../shared/readers/pdf';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

async function read(id: string, bytes: Uint8Array): Promise<SourceDocument> {
  const result = await readDocument(id, bytes);
  if (!('doc' in result)) throw new Error(`skipped: ${result.skipped.reason}`);
  return result.doc;
}

async function reason(id: string, bytes: Uint8Array): Promise<string> {
  const result = await readDocument(id, bytes);
  if ('doc' in result) throw new Error('read, not skipped');
  return result.skipped.reason;
}

const PAGE = `<!DOCTYPE html>
<html><head><title>Golden Gate Bridge - Wikipedia</title><style>.x { color: red }</style>
<script>window.menu = "Donate now";</script></head>
<body>
<header><a class="skip" href="#content" aria-hidden="true">Jump to content</a><span>Site banner</span></header>
<nav id="menu"><ul><li>Main page</li><li>Random article</li></ul></nav>
<div role="search"><form><input value="Search Wikipedia"><button>Go</button></form></div>
<main id="content">
<h1>Golden Gate Bridge</h1>
<p>The <b>Golden Gate Bridge</b> is a
   suspension bridge spanning the Golden Gate.</p>
<h2>History</h2>
<p>Joseph Strauss was the chief engineer.<br>It opened in May 1937.</p>
<table class="wikitable"><caption>Traffic</caption>
<tr><th>Year</th><th>Vehicles</th></tr>
<tr><td>1937</td><td>3.3 million</td></tr>
</table>
<h3>Design</h3><ul><li>Art Deco towers</li><li>International orange</li></ul>
<article><footer>Article footnote kept</footer></article>
</main>
<footer><p>Privacy policy · About Wikipedia</p></footer>
<div hidden>hidden text</div>
</body></html>`;

describe('the HTML reader', () => {
  it('reads the content as blocks, leaves out scripts, styles, navigation, forms and hidden text, and names the page', async () => {
    const doc = await read('golden-gate.html', utf8(PAGE));

    expect(doc.format).toBe('html');
    expect(doc.title).toBe('Golden Gate Bridge - Wikipedia');
    expect(doc.text.split('\n\n')).toEqual([
      'Golden Gate Bridge',
      'The Golden Gate Bridge is a suspension bridge spanning the Golden Gate.',
      'History',
      'Joseph Strauss was the chief engineer.\nIt opened in May 1937.',
      'Traffic',
      'Year | Vehicles',
      '1937 | 3.3 million',
      'Design',
      '- Art Deco towers',
      '- International orange',
      'Article footnote kept',
    ]);
    for (const boilerplate of ['Donate', 'Main page', 'Search', 'Jump to content', 'Site banner', 'Privacy policy', 'hidden text', 'color'])
      expect(doc.text).not.toContain(boilerplate);
  });

  it('maps text offsets to the heading path, and each heading to its element in the source', async () => {
    const doc = await read('golden-gate.html', utf8(PAGE));
    const at = (quote: string) => locationAt(doc.locations, doc.text.indexOf(quote));

    expect(at('suspension bridge')?.label).toBe('Golden Gate Bridge');
    expect(at('Joseph Strauss')?.label).toBe('Golden Gate Bridge › History');
    expect(at('3.3 million')?.label).toBe('Golden Gate Bridge › History');
    expect(at('Art Deco')?.label).toBe('Golden Gate Bridge › History › Design');
    // Each heading, and each block since issue 51 item 20, names its element in the source.
    for (const location of doc.locations ?? []) expect(PAGE.slice(location.sourceOffset).startsWith('<')).toBe(true);
    const headingOffset = doc.locations?.find((l) => l.label === 'Golden Gate Bridge › History' && PAGE.slice(l.sourceOffset).startsWith('<h'));
    expect(headingOffset).toBeDefined();
  });

  it('is chosen for .htm/.xhtml names and for HTML saved under another name; a page of markup only is skipped', async () => {
    expect(documentFormat('a.htm', utf8('<p>x</p>'))).toBe('html');
    expect(documentFormat('a.txt', utf8('\n  <!doctype html><p>x</p>'))).toBe('html');
    expect(documentFormat('a.txt', utf8('plain <b>text</b>'))).toBe('text');
    expect(await reason('empty.html', utf8('<html><head><script>x()</script></head><body><nav>menu</nav></body></html>'))).toMatch(/^no text/);
  });
});

const NOTE = `# Lighthouses

Notes on *coastal* lights; see [the list](https://example.org/list).

## Keepers

- Ann lit the **lamp** at dusk
- Bob wound the clock

| Year | Light |
|------|-------|
| 1811 | Bell Rock |

\`\`\`
lamp --on   # kept as written
\`\`\`
`;

describe('the Markdown reader', () => {
  it('leaves YAML and TOML front matter out of the text and the headings, and keeps its title as the title', async () => {
    const body = '# Keepers\n\nAnn lit the lamp at dusk.\n';
    const yaml = await read('post.md', utf8(`---\ntitle: "Bell Rock: a history"\nanswer: The keeper was Zebedee.\ntags: [lights]\n---\n${body}`));
    expect(yaml.text).toBe('Keepers\n\nAnn lit the lamp at dusk.');
    expect(yaml.title).toBe('Bell Rock: a history');
    // The heading, then its paragraph's block, each with its line in the file (front matter counted).
    expect(yaml.locations).toEqual([
      { start: 0, label: 'Keepers', sourceLine: 6 },
      { start: 9, label: 'Keepers', sourceLine: 8 },
    ]);

    const toml = await read('post.md', utf8(`+++\ntitle = "Skerryvore"\ndraft = true\n[params]\ntitle = "not this"\n+++\n${body}`));
    expect(toml.text).toBe('Keepers\n\nAnn lit the lamp at dusk.');
    expect(toml.title).toBe('Skerryvore');
    expect(toml.locations?.[0]).toMatchObject({ label: 'Keepers', sourceLine: 7 });

    // YAML closed by "...", front matter without a title, and unparsable YAML: left out all the same, no title.
    for (const front of ['---\nauthor: Ann\n...\n', '---\n---\n', '---\ntitle: [unclosed\n---\n', '---\ntitle: 42\n---\n']) {
      const doc = await read('post.md', utf8(`${front}${body}`));
      expect(doc.text).toBe('Keepers\n\nAnn lit the lamp at dusk.');
      expect(doc.title).toBeUndefined();
    }
    // Not front matter: a thematic break that is not the first line, or a first `---` never closed.
    expect((await read('a.md', utf8(`Intro.\n\n---\ntitle: x\n---\n`))).text).toContain('title: x');
    expect((await read('b.md', utf8(`---\n\nAnn lit the lamp.\n`))).text).toBe('Ann lit the lamp.');
  });

  it('drops the markup, keeps list items, table rows and code, and maps offsets to heading paths with their source lines', async () => {
    const doc = await read('notes/lights.md', utf8(NOTE));

    expect(doc.format).toBe('markdown');
    expect(doc.text.split('\n\n')).toEqual([
      'Lighthouses',
      'Notes on coastal lights; see the list.',
      'Keepers',
      '- Ann lit the lamp at dusk',
      '- Bob wound the clock',
      'Year | Light',
      '1811 | Bell Rock',
      'lamp --on   # kept as written',
    ]);
    // The block the quote is in (its table row), under its heading path: the line to open the source at.
    expect(locationAt(doc.locations, doc.text.indexOf('Bell Rock'))).toMatchObject({ label: 'Lighthouses › Keepers', sourceLine: 12 });
    expect(NOTE.split('\n')[11]).toContain('Bell Rock');
    expect(locationAt(doc.locations, doc.text.indexOf('Keepers'))).toMatchObject({ label: 'Lighthouses › Keepers', sourceLine: 5 });
    expect(NOTE.split('\n')[4]).toBe('## Keepers');
  });
});

const reportPdf = (): Promise<Uint8Array> =>
  pdfOf(
    [
      ['Annual report of the lighthouse board.', 'The board met four times.'],
      ['Lights lit', 'Bell Rock 1811', 'Skerryvore 1844'],
      ['The keeper of Bell Rock was Robert Stevenson.'],
    ],
    'Lighthouse board report',
  );

describe('the PDF reader', () => {
  it('rejoins the wrapped lines of a paragraph and words hyphenated at a line end, keeping short lines as they are', async () => {
    const doc = await read(
      'works.pdf',
      await pdfOf([
        [
          'The harbour works were designed by the chief engi-',
          'neer, Margaret Hollis, who wrote the long report on',
          'the spring tides of 1911.',
          'Lights lit',
          'Bell Rock 1811',
          '- Skerryvore 1844',
        ],
      ]),
    );
    expect(doc.text).toBe(
      'The harbour works were designed by the chief engineer, Margaret Hollis, who wrote the long report on the spring tides of 1911.\nLights lit\nBell Rock 1811\n- Skerryvore 1844',
    );
    const quote = 'the chief engineer, Margaret Hollis';
    expect(doc.text.slice(doc.text.indexOf(quote), doc.text.indexOf(quote) + quote.length)).toBe(quote);
  });

  it('joinPdfLines: list items and blank lines stay, a capitalised or short next part is never joined without its hyphen', () => {
    expect(joinPdfLines('a line of running text that is long enough to wrap on\n- an item\n\nNext paragraph')).toBe(
      'a line of running text that is long enough to wrap on\n- an item\n\nNext paragraph',
    );
    expect(joinPdfLines('a line of running text that names the Anglo-\nSaxon chronicle here and there')).toBe(
      'a line of running text that names the Anglo-Saxon chronicle here and there',
    );
  });

  it("reads each page's text layer, a page a location, and the document title", async () => {
    const doc = await read('report.pdf', await reportPdf());

    expect(doc.format).toBe('pdf');
    expect(doc.title).toBe('Lighthouse board report');
    expect(doc.locations?.map((l) => [l.label, l.page])).toEqual([
      ['page 1', 1],
      ['page 2', 2],
      ['page 3', 3],
    ]);
    const quote = 'The keeper of Bell Rock was Robert Stevenson.';
    expect(doc.text).toContain(quote);
    expect(locationAt(doc.locations, doc.text.indexOf(quote))?.page).toBe(3);
    expect(locationAt(doc.locations, doc.text.indexOf('Skerryvore 1844'))?.page).toBe(2);
  });

  it('reads a page set in two columns column by column, under its full-width title, so a quote of either column is one span', async () => {
    const left = [
      'The harbour of Millbrook was dredged in 1902 and',
      'again in 1931, after the great storm had filled the',
      'outer basin with sand and shingle from the bar.',
    ];
    const right = [
      'The railway reached the town in 1871, two years',
      'after the bridge over the Tay was opened, and the',
      'station was rebuilt in brick by the Hollis firm.',
    ];
    const doc = await read('journal.pdf', await twoColumnPdf('Notes on the harbour and the railway of the town of Millbrook', left, right));

    expect(doc.text).toBe(`Notes on the harbour and the railway of the town of Millbrook\n\n${left.join(' ')}\n\n${right.join(' ')}`);
    for (const quote of ['dredged in 1902 and again in 1931, after the great storm', 'reached the town in 1871, two years after the bridge']) {
      expect(doc.text.slice(doc.text.indexOf(quote), doc.text.indexOf(quote) + quote.length)).toBe(quote);
    }
  });

  it('columnText: a single-column page, or one with too few rows showing a gutter, is left to PDF.js as it is', () => {
    const item = (str: string, x: number, y: number, width: number) => ({ str, transform: [12, 0, 0, 12, x, y], width, height: 12 });
    expect(columnText([item('A line of running text across the page.', 36, 300, 540), item('Another one.', 36, 285, 100)], 612)).toBeUndefined();
    expect(columnText([item('Name', 36, 300, 40), item('Value', 400, 300, 40), item('Long text across', 36, 285, 540)], 612)).toBeUndefined();
  });

  it('skips a PDF without a text layer and a damaged one, each with its reason', async () => {
    expect(await reason('scan.pdf', await pdfOf([[]]))).toMatch(/^PDF without a text layer \(1 page\(s\)/);
    expect(await reason('broken.pdf', utf8('%PDF-1.7\nnot a pdf at all'))).toMatch(/^not a readable PDF \(/);
    expect(documentFormat('renamed.bin', utf8('%PDF-1.4'))).toBe('pdf');
  });
});

const notesDocx = (): Promise<Uint8Array> =>
  harbourDocx('The harbour master recorded a spring tide of 6.1 metres in March.', [
    ['Month', 'Tide'],
    ['March', '6.1 m'],
  ]);

describe('the DOCX reader', () => {
  it('reads headings, paragraphs and table rows, with heading paths', async () => {
    const doc = await read('harbour.docx', await notesDocx());

    expect(doc.format).toBe('docx');
    expect(doc.text.split('\n\n')).toEqual([
      'Harbour notes',
      'Tides',
      'The harbour master recorded a spring tide of 6.1 metres in March.',
      'Month | Tide',
      'March | 6.1 m',
    ]);
    expect(locationAt(doc.locations, doc.text.indexOf('6.1 m'))?.label).toBe('Harbour notes › Tides');
  });

  it('skips a damaged DOCX with the reason, and tells a DOCX from another ZIP by its main part', async () => {
    expect(await reason('broken.docx', utf8('PK\u0003\u0004garbage'))).toMatch(/^not a readable DOCX \(/);
    expect(documentFormat('upload.bin', await notesDocx())).toBe('docx');
    expect(documentFormat('archive.zip', utf8('PK\u0003\u0004other'))).toBe('text');
  });
});

describe('pathological files (a breaker session found each)', () => {
  it('skips HTML nested too deeply for the reader with the reason, and never throws', async () => {
    const deep = `<!DOCTYPE html><body>${'<div>'.repeat(5000)}<p>The chief engineer was Margaret Hollis.</p>${'</div>'.repeat(5000)}`;
    expect(await reason('deep.html', utf8(deep))).toBe('markup nested too deeply (more than 2,000 elements open at once)');
    // 200,000 levels: skipped by the scan, before parse5 (whose tree building is quadratic in the depth) runs.
    expect(await reason('deeper.html', utf8(`<body>${'<div>'.repeat(200_000)}text`))).toMatch(/^markup nested too deeply/);
  });

  it('counts only elements that nest: a long page of unclosed paragraphs and list items is read', async () => {
    const flat = `<!DOCTYPE html><body><ul>${'<li>An item.<p>A paragraph.<br><img src=x><a href=#>a link left open'.repeat(5000)}</ul>`;
    const { htmlNestingDepth } = await import('../../shared/readers/html');
    expect(htmlNestingDepth(flat, 2000)).toBe(1);
    const read = await readDocument('flat.html', utf8(flat));
    expect('doc' in read && read.doc.text).toContain('A paragraph.');
  });

  it('skips a DOCX that unpacks to more than it may read (a zip bomb), from its central directory', async () => {
    const { default: JSZip } = await import('jszip');
    const zip = new JSZip();
    zip.file('[Content_Types].xml', '<Types/>');
    zip.file('word/document.xml', `<w:document>${'a'.repeat(40 * 1024 * 1024)}</w:document>`);
    const bytes = await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE', compressionOptions: { level: 9 } });

    expect(bytes.length).toBeLessThan(1024 * 1024);
    expect(await reason('bomb.docx', bytes)).toMatch(/^DOCX too large unpacked \(40 MiB from \d+ bytes; at most 32 MiB are read\)$/);
  });

  it('stops inflating a DOCX whose headers understate its size at the cap, with a reason that names the limit', async () => {
    const { default: JSZip } = await import('jszip');
    const zip = new JSZip();
    zip.file('[Content_Types].xml', '<Types/>');
    zip.file('word/document.xml', `<w:document>${'a'.repeat(40 * 1024 * 1024)}</w:document>`);
    const bytes = lieAboutSizes(await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE', compressionOptions: { level: 9 } }), 1000);

    const started = Date.now();
    expect(await reason('liar.docx', bytes)).toMatch(
      /^DOCX too large unpacked \(over 32 MiB, whatever its headers say, from \d+ bytes; at most 32 MiB are read\)$/,
    );
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('skips a DOCX whose entries all point at one deflated stream (overlapping entries), and one whose headers overstate a part', async () => {
    const { default: JSZip } = await import('jszip');
    const zip = new JSZip();
    zip.file('word/document.xml', `<w:document>${'a'.repeat(4 * 1024 * 1024)}</w:document>`);
    const one = await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
    // Twelve central directory entries for the one local entry: 12 x 4 MiB unpacked, each header honest.
    expect(await reason('overlap.docx', repeatCentralEntry(one, 12))).toMatch(/^DOCX too large unpacked \(48 MiB from \d+ bytes; at most 32 MiB are read\)$/);
    const small = await (async () => {
      const z = new JSZip();
      z.file('word/document.xml', '<w:document>tiny</w:document>');
      return z.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
    })();
    expect(await reason('overstated.docx', lieAboutSizes(small, 5000))).toMatch(
      /^not a readable DOCX \(entry \S+ unpacks to \d+ bytes, its header says 5000\)$/,
    );
  });

  it('reads Markdown quoted 100 levels deep (markdown-it would drop it at its default nesting limit)', async () => {
    const doc = await read('deep.md', utf8(`${'>'.repeat(100)} The chief engineer was Margaret Hollis.`));
    expect(doc.text).toBe('The chief engineer was Margaret Hollis.');
  });

  it('gives no location, rather than a wrong one, past the most locations kept', async () => {
    const headings = Array.from({ length: 10_050 }, (_, i) => `# Heading ${i}\n\nText ${i}.`).join('\n\n');
    const doc = await read('many.md', utf8(`${headings}\n\n## Last\n\nThe chief engineer was Margaret Hollis.`));
    const at = locationAt(doc.locations, doc.text.indexOf('Margaret Hollis'));
    expect(at?.label).toBe('');
    // A heading and its paragraph's block take a location each: the first 5,000 headings are kept.
    expect(locationAt(doc.locations, doc.text.indexOf('Text 2000.'))?.label).toBe('Heading 2000');
  });
});

/** `zip` with every entry's uncompressed size (local and central headers) set to `size`: headers that lie. */
function lieAboutSizes(zip: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(zip);
  const view = new DataView(out.buffer);
  for (let at = 0; at + 4 <= out.length; at++) {
    const signature = view.getUint32(at, true);
    if (signature === 0x04034b50 && at + 26 <= out.length) view.setUint32(at + 22, size, true);
    else if (signature === 0x02014b50 && at + 28 <= out.length) view.setUint32(at + 24, size, true);
  }
  return out;
}

/** `zip` whose central directory lists its entries `times` times over (each copy pointing at the same data). */
function repeatCentralEntry(zip: Uint8Array, times: number): Uint8Array {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  let end = zip.length - 22;
  while (view.getUint32(end, true) !== 0x06054b50) end--;
  const cdSize = view.getUint32(end + 12, true);
  const cdStart = view.getUint32(end + 16, true);
  const entry = zip.subarray(cdStart, cdStart + cdSize);
  const record = new Uint8Array(zip.subarray(end, end + 22));
  const recordView = new DataView(record.buffer);
  const entries = view.getUint16(end + 10, true) * times;
  recordView.setUint16(8, entries, true);
  recordView.setUint16(10, entries, true);
  recordView.setUint32(12, cdSize * times, true);
  return Buffer.concat([zip.subarray(0, cdStart), ...Array.from({ length: times }, () => entry), record]);
}
