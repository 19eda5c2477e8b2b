import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  buildHotpotLongContext,
  defaultDataRoot,
  type FillerParagraph,
  hotpotLongContextSet,
  readCmrc2018Haystack,
  readFairytaleQa,
  readFillerParagraphs,
  readHotpotQa,
  readInfiniteBenchQa,
  readNarrativeQaSiddhartha,
  readSotuQuestions,
} from '../../eval/datasets';
import { seededRandom, shuffled } from '../../shared/prng';
import { countTokens } from '../../shared/tokenizer';
import { describeWithSharedData } from '../support/shared-data';

const DATA = defaultDataRoot();
const HOTPOT_DEV = path.join(DATA, 'hotpotqa', 'hotpot_dev_distractor_100.reflexion.json');

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'extagents-eval-'));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function tmpFile(name: string, text: string): string {
  const file = path.join(tmp, name);
  writeFileSync(file, text);
  return file;
}

describe('seeded PRNG', () => {
  it('repeats the same sequence for the same seed and differs for another', () => {
    const a = seededRandom('s');
    const b = seededRandom('s');
    const c = seededRandom('t');
    const xs = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(xs);
    expect(c()).not.toBe(xs[0]);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(shuffled([1, 2, 3, 4, 5], seededRandom(1)).sort()).toEqual([1, 2, 3, 4, 5]);
  });
});

describeWithSharedData('HotpotQA reader and long-context construction', () => {
  const { questions, warnings } = readHotpotQa(HOTPOT_DEV);
  const filler = readFillerParagraphs();

  it('reads the original distractor format', () => {
    expect(warnings).toEqual([]);
    expect(questions).toHaveLength(100);
    const q = questions[0];
    expect(q.id).toBe('5a7613c15542994ccc9186bf');
    expect(q.answer).toBe('Gesellschaft mit beschränkter Haftung');
    expect(q.supportingFacts).toEqual([
      { title: 'VIVA Media', sentence: 0 },
      { title: 'Gesellschaft mit beschränkter Haftung', sentence: 0 },
    ]);
    expect(q.context).toHaveLength(10);
    for (const f of q.supportingFacts) expect(q.context.map((c) => c.title)).toContain(f.title);
  });

  it('reads the filler paragraphs of all four files, de-duplicated', () => {
    expect(filler.warnings).toEqual([]);
    expect(filler.paragraphs.length).toBeGreaterThan(9000);
    expect(new Set(filler.paragraphs.map((p) => p.source)).size).toBe(4);
    expect(new Set(filler.paragraphs.map((p) => p.text)).size).toBe(filler.paragraphs.length);
  });

  it('mixes the question paragraphs into filler up to the target length, never repeating a gold paragraph', () => {
    const q = questions[0];
    const { document, warnings: w } = buildHotpotLongContext(q, filler.paragraphs, { targetTokens: 8_000, seed: 7 });
    expect(w).toEqual([]);
    expect(document.tokens).toBe(countTokens(document.text));
    expect(document.tokens).toBeGreaterThan(7_600);
    expect(document.tokens).toBeLessThanOrEqual(8_100);
    const placed = document.paragraphs ?? [];
    // Offsets point at the rendered paragraphs.
    for (const p of placed) expect(document.text.slice(p.start, p.end).startsWith(p.title)).toBe(true);
    // Every own paragraph exactly once, in its original order; no filler paragraph with a gold title.
    const own = placed.filter((p) => p.own);
    expect(own.map((p) => p.title)).toEqual(q.context.map((c) => c.title));
    const ownTitles = new Set(q.context.map((c) => c.title));
    expect(placed.filter((p) => !p.own && ownTitles.has(p.title))).toEqual([]);
    for (const c of q.context) {
      const text = c.sentences.join('').trim();
      expect(document.text.split(text).length - 1).toBe(1);
    }
    // Not all at the start: the own paragraphs are spread among filler.
    expect(placed.length).toBeGreaterThan(own.length + 10);
  });

  it('excludes a filler paragraph that copies a gold paragraph under the concatenated "Title. text" form', () => {
    const q = questions[0];
    const gold = q.context[0];
    const copy: FillerParagraph = { title: 'Other', text: `${gold.title}. ${gold.sentences.join('')}`, source: 'test' };
    const sameTitle: FillerParagraph = { title: gold.title, text: 'A different text under the same title.', source: 'test' };
    const plain: FillerParagraph = { title: 'Plain', text: 'An unrelated paragraph about rivers.', source: 'test' };
    const { document } = buildHotpotLongContext(q, [copy, sameTitle, plain], { targetTokens: 100_000 });
    expect((document.paragraphs ?? []).filter((p) => !p.own).map((p) => p.title)).toEqual(['Plain']);
  });

  it('builds the same context for the same seed and a different one for another seed', () => {
    const q = questions[3];
    const a = buildHotpotLongContext(q, filler.paragraphs, { targetTokens: 32_000, seed: 'x' }).document;
    const b = buildHotpotLongContext(q, filler.paragraphs, { targetTokens: 32_000, seed: 'x' }).document;
    const c = buildHotpotLongContext(q, filler.paragraphs, { targetTokens: 32_000, seed: 'y' }).document;
    expect(b.text).toBe(a.text);
    expect(b.paragraphs).toEqual(a.paragraphs);
    expect(c.text).not.toBe(a.text);
    expect(a.tokens).toBeGreaterThan(31_000);
  });

  it('reports, not hides, a filler too small for the target', () => {
    const { document, warnings: w } = buildHotpotLongContext(questions[0], filler.paragraphs.slice(0, 5), { targetTokens: 128_000 });
    expect(document.tokens).toBeLessThan(10_000);
    expect(w).toHaveLength(1);
    expect(w[0].message).toMatch(/filler exhausted, context has \d+ tokens for a target of 128000/);
  });

  it('builds a QA set with supporting facts located in the context', () => {
    const set = hotpotLongContextSet(HOTPOT_DEV, { targetTokens: 8_000, seed: 1, limit: 2, filler: filler.paragraphs });
    expect(set.examples).toHaveLength(2);
    expect(set.documents).toHaveLength(2);
    const [ex] = set.examples;
    const doc = set.documents.find((d) => d.id === ex.documentIds[0]);
    expect(ex.answers).toEqual(['Gesellschaft mit beschränkter Haftung']);
    for (const e of ex.evidence) {
      expect(doc?.text.slice(e.start, e.end).startsWith(`${e.title}\n`)).toBe(true);
    }
  });

  it('reports a malformed record with its index and keeps the others', () => {
    const file = tmpFile('hotpot.json', JSON.stringify([{ _id: 'bad', question: 'q' }, readJsonOf(HOTPOT_DEV)[0]]));
    const read = readHotpotQa(file);
    expect(read.questions.map((q) => q.id)).toEqual(['5a7613c15542994ccc9186bf']);
    expect(read.warnings).toHaveLength(1);
    expect(read.warnings[0]).toMatchObject({ file, record: 0 });
    expect(read.warnings[0].message).toMatch(/malformed record .*skipped/);
  });
});

function readJsonOf(file: string): unknown[] {
  return JSON.parse(readFileSync(file, 'utf8')) as unknown[];
}

describe('InfiniteBench-format long QA', () => {
  it('reads input|question and answer|answers, sharing identical contexts, skipping bad lines', () => {
    const file = tmpFile(
      'ib.jsonl',
      [
        JSON.stringify({ id: 0, input: 'Who?', context: 'A long book.', answer: ['Ann'] }),
        '{"id": 1, "input": "broken',
        JSON.stringify({ id: 2, question: 'Where?', context: 'A long book.', answers: 'Paris' }),
        JSON.stringify({ id: 3, context: 'Another book.', answer: ['x'] }),
        '',
      ].join('\n'),
    );
    const set = readInfiniteBenchQa(file);
    expect(set.documents).toHaveLength(1);
    expect(set.examples).toEqual([
      { id: '0', question: 'Who?', answers: ['Ann'], documentIds: ['ib-doc-0'], evidence: [] },
      { id: '2', question: 'Where?', answers: ['Paris'], documentIds: ['ib-doc-0'], evidence: [] },
    ]);
    expect(set.warnings.map((w) => w.line)).toEqual([2, 4]);
    expect(set.warnings[1].message).toMatch(/needs "input" or "question"/);
  });
});

describeWithSharedData('long single documents', () => {
  it('reads the FairytaleQA stories as one document each', () => {
    const set = readFairytaleQa(path.join(DATA, 'longdoc_qa', 'fairytaleqa_test_val_46stories.json'));
    expect(set.warnings).toEqual([]);
    expect(set.documents).toHaveLength(46);
    expect(set.examples).toHaveLength(2032);
    const first = set.examples[0];
    expect(first).toMatchObject({
      id: 'alleleiraugh-or-the-many-furred-creature#1',
      question: 'What kind of hair did the wife have?',
      answers: ['golden hair', 'golden hair'],
      documentIds: ['alleleiraugh-or-the-many-furred-creature'],
      type: 'character',
    });
    expect(set.documents[0].text).toMatch(/^There was once upon a time a King/);
  });

  it('reads Siddhartha without the Gutenberg licence and its 8 NarrativeQA questions', () => {
    const set = readNarrativeQaSiddhartha(path.join(DATA, 'longdoc_qa', 'narrativeqa_siddhartha'));
    expect(set.warnings).toEqual([]);
    expect(set.examples).toHaveLength(8);
    expect(set.examples[0]).toMatchObject({ id: 'siddhartha#36', question: 'How does Kamala die?', answers: ['She is bitten by a snake.'] });
    const text = set.documents[0].text;
    expect(text).not.toMatch(/Project Gutenberg License/);
    expect(text).toMatch(/Kamala/);
    expect(countTokens(text)).toBeGreaterThan(40_000);
  });
});

describeWithSharedData('CMRC 2018 haystack', () => {
  const file = path.join(DATA, 'chinese', 'cmrc2018_dev.squad.json');

  it('concatenates all passages into one document with every question and located answer spans', () => {
    const set = readCmrc2018Haystack(file);
    expect(set.documents).toHaveLength(1);
    expect(set.documents[0].paragraphs).toHaveLength(848);
    expect(set.examples).toHaveLength(3219);
    const text = set.documents[0].text;
    const located = set.examples.flatMap((e) => e.evidence).filter((e) => e.start !== undefined);
    for (const e of located) expect(text.slice(e.start, e.end)).toBe(e.quote);
    // Answers whose answer_start is off in the source are reported, not dropped.
    const unlocated = set.examples.flatMap((e) => e.evidence).filter((e) => e.start === undefined);
    expect(set.warnings).toHaveLength(unlocated.length);
    expect(set.examples[0]).toMatchObject({ id: 'DEV_0_QUERY_0', answers: ['光荣和ω-force'], documentIds: ['cmrc2018-haystack'] });
  });

  it('cuts at a character budget and shuffles deterministically with a seed', () => {
    const a = readCmrc2018Haystack(file, { maxChars: 20_000, seed: 3 });
    const b = readCmrc2018Haystack(file, { maxChars: 20_000, seed: 3 });
    const plain = readCmrc2018Haystack(file, { maxChars: 20_000 });
    expect(a.documents[0].text.length).toBeLessThanOrEqual(20_000);
    expect(a.documents[0].text.length).toBeGreaterThan(15_000);
    expect(b.documents[0].text).toBe(a.documents[0].text);
    expect(plain.documents[0].text).not.toBe(a.documents[0].text);
    expect(plain.documents[0].paragraphs?.[0].title).toBe('DEV_0');
  });
});

describeWithSharedData('SOTU questions', () => {
  it('reads the 15 dev questions with evidence quotes', () => {
    const set = readSotuQuestions(path.join(DATA, 'sotu', 'dev.jsonl'));
    expect(set.warnings).toEqual([]);
    expect(set.examples).toHaveLength(15);
    expect(set.examples[0]).toMatchObject({ id: 'dev-001', type: 'single-hop', documentIds: [] });
    expect(set.examples[0].answers).toContain('Chickamaugas');
    expect(set.examples[0].evidence[0].documentId).toBe('1792_george_washington_n.txt');
    expect(set.examples.some((e) => e.answers[0] === 'NO ANSWER')).toBe(true);
  });

  it('reports a malformed line by number and keeps the rest', () => {
    const file = tmpFile(
      'sotu.jsonl',
      [
        JSON.stringify({ id: 'a', question: 'Q?', answers: ['x'], type: 'single-hop', evidence: [] }),
        JSON.stringify({ id: 'b', question: 'Q?', answers: [] }),
        'not json',
      ].join('\n'),
    );
    const set = readSotuQuestions(file);
    expect(set.examples.map((e) => e.id)).toEqual(['a']);
    expect(set.warnings.map((w) => w.line)).toEqual([2, 3]);
  });
});
