/**
 * Properties of the corpus readers (shared/readers/) over documents built at test time from
 * arbitrary blocks (headings, paragraphs, list items of arbitrary words, with characters each format
 * must escape): every block's words reach the text, in order; the text is well-formed; locations are
 * sorted and inside the text; and every citation of the chunked text (spanToQuotes) slices back to
 * its quote exactly. Issue 37, "Going further".
 *
 * To search wider: PROPERTY_SEED=<n> PROPERTY_RUNS_FACTOR=<k> npm run jest -- test/unit/reader-properties.test.ts
 */
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import fc from 'fast-check';
import { chunkCorpus } from '../../shared/chunking';
import { spanToQuotes } from '../../shared/method';
import { readDocument } from '../../shared/readers';
import type { SourceDocument } from '../../shared/types';

const SEED = Number(process.env.PROPERTY_SEED ?? 20261206);
const params = (numRuns: number): fc.Parameters<unknown> => ({ seed: SEED, numRuns: numRuns * Number(process.env.PROPERTY_RUNS_FACTOR ?? 1) });

type Kind = 'heading' | 'paragraph' | 'item';
interface Block {
  kind: Kind;
  words: string[];
}

/** Words of several scripts, numbers, and characters HTML escapes; none is white space. */
const plainWord = fc.oneof(
  fc.stringMatching(/^[A-Za-z]{1,12}$/),
  fc.integer({ min: 0, max: 99_999 }).map(String),
  fc.constantFrom(
    'Zürich',
    'émigré',
    'naïve',
    '北京',
    '東京都',
    'Привет',
    'مرحبا',
    'שלום',
    '𝔘nicode',
    'e\u0301',
    '👍',
    '👨‍👩‍👧',
    'don’t',
    '“quoted”',
    '—',
    '1,000',
    'U.S.',
  ),
);
/** Words with the characters HTML must escape (the HTML builder escapes them). */
const htmlWord = fc.oneof(plainWord, fc.constantFrom('<b>', 'a&b', 'x<y', '"q"', "it's", '&amp;', 'AT&T'));
const block = (word: fc.Arbitrary<string>): fc.Arbitrary<Block> =>
  fc.record({ kind: fc.constantFrom<Kind>('heading', 'paragraph', 'paragraph', 'item'), words: fc.array(word, { minLength: 1, maxLength: 12 }) });

const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function html(blocks: readonly Block[]): Uint8Array {
  const body = blocks
    .map((b) => {
      const text = escapeHtml(b.words.join(' '));
      return b.kind === 'heading' ? `<h2>${text}</h2>` : b.kind === 'item' ? `<ul><li>${text}</li></ul>` : `<p>${text}</p>`;
    })
    .join('\n');
  return new TextEncoder().encode(`<!doctype html>\n<html><head><title>t</title></head><body>\n${body}\n</body></html>`);
}

function markdown(blocks: readonly Block[]): Uint8Array {
  const text = blocks.map((b) => `${b.kind === 'heading' ? '## ' : b.kind === 'item' ? '- ' : ''}${b.words.join(' ')}`).join('\n\n');
  return new TextEncoder().encode(`${text}\n`);
}

async function docx(blocks: readonly Block[]): Promise<Uint8Array> {
  const children = blocks.map((b) =>
    b.kind === 'heading'
      ? new Paragraph({ text: b.words.join(' '), heading: HeadingLevel.HEADING_2 })
      : b.kind === 'item'
        ? new Paragraph({ text: b.words.join(' '), bullet: { level: 0 } })
        : new Paragraph(b.words.join(' ')),
  );
  return new Uint8Array(await Packer.toBuffer(new Document({ sections: [{ children }] })));
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The properties every reader keeps (see the file comment). */
function expectFaithful(doc: SourceDocument, blocks: readonly Block[], spanSeeds: readonly [number, number][]): void {
  let from = 0;
  for (const b of blocks) {
    const text = b.words.join(' ');
    const at = doc.text.indexOf(text, from);
    expect({ block: text, found: at >= 0 }).toEqual({ block: text, found: true });
    from = at + text.length;
  }
  expect(LONE_SURROGATE.test(doc.text)).toBe(false);
  expect(doc.text.includes('\uFFFD')).toBe(false);
  const starts = (doc.locations ?? []).map((l) => l.start);
  expect(starts).toEqual([...starts].sort((a, b) => a - b));
  for (const s of starts) expect(s >= 0 && s <= doc.text.length).toBe(true);

  for (const chunk of chunkCorpus([doc], { chunkTokens: 24 })) {
    for (const [a, b] of spanSeeds) {
      const start = a % (chunk.text.length + 1);
      const end = start + (b % (chunk.text.length - start + 1));
      for (const quote of spanToQuotes(chunk, start, end)) {
        expect(quote.documentId).toBe(doc.id);
        expect(doc.text.slice(quote.start, quote.end)).toBe(quote.text);
      }
    }
  }
}

const blocks = (word: fc.Arbitrary<string>) => fc.array(block(word), { minLength: 1, maxLength: 8 });
const spans = fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 4 });

describe('corpus readers over arbitrary documents built at test time', () => {
  it('HTML: every block reaches the text in order, escaped characters as written; citations slice back exactly', async () => {
    await fc.assert(
      fc.asyncProperty(blocks(htmlWord), spans, async (bs, ss) => {
        const result = await readDocument('page.html', html(bs));
        if (!('doc' in result)) throw new Error(`skipped: ${JSON.stringify(result)}`);
        expect(result.doc.format).toBe('html');
        expectFaithful(result.doc, bs, ss);
      }),
      params(40),
    );
  });

  it('Markdown: every block reaches the text in order without its markup; citations slice back exactly', async () => {
    await fc.assert(
      fc.asyncProperty(blocks(plainWord), spans, async (bs, ss) => {
        const result = await readDocument('notes.md', markdown(bs));
        if (!('doc' in result)) throw new Error(`skipped: ${JSON.stringify(result)}`);
        expectFaithful(result.doc, bs, ss);
      }),
      params(40),
    );
  });

  it('DOCX: every paragraph, heading and list item reaches the text in order; citations slice back exactly', async () => {
    await fc.assert(
      fc.asyncProperty(blocks(htmlWord), spans, async (bs, ss) => {
        const result = await readDocument('report.docx', await docx(bs));
        if (!('doc' in result)) throw new Error(`skipped: ${JSON.stringify(result)}`);
        expect(result.doc.format).toBe('docx');
        expectFaithful(result.doc, bs, ss);
      }),
      params(20),
    );
  });
});
