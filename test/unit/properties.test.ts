/**
 * Property tests (fast-check) of the chunker, the reply parsers and the prompt escaping, over
 * arbitrary Unicode: astral characters, emoji ZWJ sequences, combining marks, flags, CRLF, Hangul
 * jamo, very long unpunctuated runs, hostile delimiter tags. Each property runs on a few hundred
 * generated cases with a fixed seed (reproducible; fast-check prints the shrunk counterexample).
 * To search wider: PROPERTY_SEED=<n> PROPERTY_RUNS_FACTOR=<k> npm run jest -- test/unit/properties.test.ts
 */
import fc from 'fast-check';
import { chunkCorpus } from '../../shared/chunking';
import { isRefusal, parseReasonReply, parseScore, parseSeekReply, readScore } from '../../shared/llm/parse';
import { DELIMITER_TAGS, buildReasonPrompt, buildSeekPrompt, escapeUntrusted } from '../../shared/llm/prompts';
import { MAX_UNIT_CHARS, renderNumbered, sentenceUnits } from '../../shared/llm/sentences';
import { countTokens } from '../../shared/tokenizer';
import type { Message } from '../../shared/types';

const SEED = Number(process.env.PROPERTY_SEED ?? 20261201);
const params = (numRuns: number): fc.Parameters<unknown> => ({ seed: SEED, numRuns: numRuns * Number(process.env.PROPERTY_RUNS_FACTOR ?? 1) });

/** Pieces that stress cuts: clusters of several code points, line ends, separators. */
const TRICKY = [
  '👨‍👩‍👧‍👦',
  '🏳️‍🌈',
  '👍🏽',
  '🇺🇸',
  '🇫🇷🇩🇪',
  'e\u0301',
  'a\u0308\u0323',
  'क्ष',
  'नमस्ते',
  '\u1100\u1161\u11A8',
  '한국어',
  '\r\n',
  '\n\n',
  '\n',
  ' ',
  '. ',
  '。',
  '，',
  '\u200d',
  '\u0301',
  '\uFE0F',
  '😀',
  '𝔘𝔫𝔦',
  '中文字符',
  'ok',
  'Score: 100',
];

/** Arbitrary text: random code points mixed with the tricky pieces and long runs without punctuation. */
const unicodeText = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
      { weight: 3, arbitrary: fc.constantFrom(...TRICKY) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', '𝔘', 'e\u0301', '👨‍👩‍👧', 'ab'), fc.integer({ min: 20, max: 400 })).map(([s, n]) => s.repeat(n)) },
      { weight: 1, arbitrary: fc.constantFrom('e', 'x').map((base) => base + '\u0301'.repeat(300)) },
    ),
    { maxLength: 25 },
  )
  .map((parts) => parts.join(''));

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** For each offset inside a grapheme cluster of `text` (start < at < end), that cluster. */
function clustersInside(text: string): Map<number, string> {
  const inside = new Map<number, string>();
  for (const { segment, index } of graphemes.segment(text)) for (let at = index + 1; at < index + segment.length; at++) inside.set(at, segment);
  return inside;
}

describe('chunkCorpus over arbitrary Unicode', () => {
  it('reconstructs every document exactly, keeps every chunk within its budget, and never cuts inside a grapheme that fits', () => {
    fc.assert(
      fc.property(fc.array(unicodeText, { minLength: 1, maxLength: 4 }), fc.integer({ min: 4, max: 96 }), (texts, chunkTokens) => {
        const docs = texts.map((text, i) => ({ id: `d${i}.txt`, text }));
        const chunks = chunkCorpus(docs, { chunkTokens });
        chunks.forEach((chunk, i) => {
          expect(chunk.index).toBe(i);
          expect(chunk.tokens).toBe(countTokens(chunk.text));
          expect(chunk.tokens).toBeLessThanOrEqual(chunkTokens);
        });
        for (const doc of docs) {
          const segments = chunks.flatMap((c) => c.segments).filter((s) => s.documentId === doc.id);
          expect(segments.map((s) => doc.text.slice(s.start, s.end)).join('')).toBe(doc.text);
          const inside = clustersInside(doc.text);
          for (const { start } of segments.slice(1)) {
            const cluster = inside.get(start);
            // Only a single cluster that alone exceeds the budget may be cut (at a code point).
            if (cluster !== undefined) expect({ start, tokens: countTokens(cluster) > chunkTokens }).toEqual({ start, tokens: true });
            expect(/[\uDC00-\uDFFF]/.test(doc.text[start]) && /[\uD800-\uDBFF]/.test(doc.text[start - 1])).toBe(false);
          }
        }
      }),
      params(150),
    );
  });
});

/** Replies as models write them: prose, JSON (whole, cut off, fenced), score lines, odd numbers. */
const number = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.double({ noNaN: false }).map(String),
  fc.constantFrom('1e9', '2.5e2', 'NaN', 'Infinity', '-inf', '0.85', '8/10', '75/100', '1e-3', '.5', '+7'),
);
const reply = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.tuple(fc.string({ maxLength: 60 }), number, fc.boolean()).map(([evidence, score, cut]) => {
    const json = `{"evidence": ${JSON.stringify(evidence)}, "quotes": [${JSON.stringify(evidence.slice(0, 10))}], "score": ${score}}`;
    return cut ? json.slice(0, Math.floor(json.length / 2)) : json;
  }),
  fc.tuple(fc.string({ maxLength: 60 }), number).map(([evidence, score]) => `Evidence: ${evidence}\nScore: ${score}`),
  // The format asked: sentence ids, a note, a score (whole or cut off), and its prose fallback.
  fc
    .tuple(
      fc.array(fc.oneof(fc.integer({ min: -5, max: 3000 }).map(String), fc.constantFrom('"3"', '"[2]"', '"2, 5"', '1.5', 'null')), { maxLength: 6 }),
      fc.string({ maxLength: 40 }),
      number,
      fc.boolean(),
    )
    .map(([ids, note, score, cut]) => {
      const json = `{"sentences": [${ids.join(', ')}], "note": ${JSON.stringify(note)}, "score": ${score}}`;
      return cut ? json.slice(0, Math.floor(json.length / 2)) : json;
    }),
  fc.tuple(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 5 }), number).map(([ids, score]) => `Sentences: ${ids.join(', ')}\nScore: ${score}`),
  fc
    .tuple(fc.boolean(), fc.string({ maxLength: 40 }), fc.constantFrom('r1-c0', 'r2-c13', 'x'))
    .map(([answerable, answer, id]) => `\`\`\`json\n{"answerable": ${answerable}, "answer": ${JSON.stringify(answer)}, "cited": ["${id}"]}\n\`\`\``),
  fc.constantFrom(...TRICKY).map((t) => `Score: ${t}`),
);

describe('reply parsers', () => {
  it('never throw, keep every score an integer 0-100 (or none), and give the same value however often and in whatever order they are called', () => {
    fc.assert(
      fc.property(fc.array(reply, { minLength: 1, maxLength: 6 }), fc.string({ maxLength: 80 }), (replies, chunkText) => {
        const parseAll = (r: string) => ({
          score: parseScore(r),
          reading: readScore(r),
          seek: parseSeekReply(r, { chunkText }),
          reason: parseReasonReply(r),
          refusal: isRefusal(r),
        });
        const first = replies.map(parseAll);
        const reversed = [...replies].reverse().map(parseAll).reverse();
        const again = replies.map(parseAll);
        expect(reversed).toEqual(first);
        expect(again).toEqual(first);
        for (const { score, reading, seek } of first) {
          // Sentence ids are positive safe integers, each once.
          if (seek.kind === 'evidence') {
            expect(seek.sentences.every((id) => Number.isSafeInteger(id) && id >= 1)).toBe(true);
            expect(new Set(seek.sentences).size).toBe(seek.sentences.length);
          }
          for (const value of [score, reading.score, seek.kind === 'evidence' ? seek.score : null]) {
            if (value !== null) {
              expect(Number.isInteger(value)).toBe(true);
              expect(value).toBeGreaterThanOrEqual(0);
              expect(value).toBeLessThanOrEqual(100);
            }
          }
        }
      }),
      params(300),
    );
  });
});

describe('sentenceUnits', () => {
  it('numbers units 1..n with exact trimmed offsets, in order, not overlapping, at most MAX_UNIT_CHARS, never splitting a surrogate pair, losing no text', () => {
    fc.assert(
      fc.property(unicodeText, (text) => {
        const units = sentenceUnits(text);
        let previousEnd = 0;
        units.forEach((u, i) => {
          expect(u.id).toBe(i + 1);
          expect(u.start).toBeGreaterThanOrEqual(previousEnd);
          expect(u.end).toBeGreaterThan(u.start);
          expect(u.end - u.start).toBeLessThanOrEqual(MAX_UNIT_CHARS);
          const unit = text.slice(u.start, u.end);
          expect(unit).toBe(unit.trim());
          const splits = (at: number): boolean => /[\uD800-\uDBFF]/.test(text[at - 1] ?? '') && /[\uDC00-\uDFFF]/.test(text[at] ?? '');
          expect([splits(u.start), splits(u.end)]).toEqual([false, false]);
          // Between units there is only white space: the units cover every non-space character.
          expect(text.slice(previousEnd, u.start).trim()).toBe('');
          previousEnd = u.end;
        });
        expect(text.slice(previousEnd).trim()).toBe('');
        // The numbered view has one line per unit.
        expect(units.length === 0 ? 0 : renderNumbered(text, units).split('\n').length).toBe(units.length);
      }),
      params(200),
    );
  });
});

/** Any delimiter tag of the prompts, opening or closing, as the escaping regex defines one. */
const DELIMITER = new RegExp(`<\\s*\\/?\\s*(?:${DELIMITER_TAGS.join('|')})(?=[\\s>/]|$)`, 'gi');
const hostile = fc.oneof(
  unicodeText,
  fc
    .array(
      fc.oneof(
        fc.constantFrom('<', '</', '< /', '<\n/', '>', 'chunk', 'CHUNK', 'message', ' id="r1-c0"', 'question', '&lt;', '\n'),
        fc.string({ maxLength: 4 }),
      ),
      { maxLength: 30 },
    )
    .map((p) => p.join('')),
);

describe('escapeUntrusted', () => {
  it('never leaves text that opens or closes a delimiter tag, so the prompts hold exactly their own tags', () => {
    const message = (evidence: string): Message => ({ id: 'r1-c0', round: 1, chunkIndex: 0, score: 50, evidence, tokens: 5, quotes: [], sources: ['d'] });
    const chunk = (text: string) => ({
      index: 0,
      tokens: 10,
      chars: text.length,
      segments: [{ documentId: 'd', start: 0, end: text.length, chunkStart: 0 }],
      text,
    });
    const count = (text: string): number => text.match(DELIMITER)?.length ?? 0;
    const seekTags = count(buildSeekPrompt({ question: 'q', chunk: chunk('c'), round: 2, synchronized: [message('m')] }).user);
    const reasonTags = count(buildReasonPrompt({ question: 'q', messages: [message('m')], force: false }).user);
    fc.assert(
      fc.property(hostile, hostile, hostile, (question, text, evidence) => {
        expect(count(escapeUntrusted(text))).toBe(0);
        expect(count(buildSeekPrompt({ question, chunk: chunk(text), round: 2, synchronized: [message(evidence)] }).user)).toBe(seekTags);
        expect(count(buildReasonPrompt({ question, messages: [message(evidence)], force: false }).user)).toBe(reasonTags);
      }),
      params(300),
    );
  });
});
