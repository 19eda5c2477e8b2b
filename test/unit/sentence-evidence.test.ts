/**
 * Evidence built from numbered sentences (shared/llm/sentences.ts): the chunk is shown as units
 * `[1] …`, the seeking agent cites ids, and the message's evidence and spans are the cited units'
 * own text and offsets, in every language. Also the reasoning agent's bounded answer and the pool
 * ranking (shared/ranking.ts) that `buildMessage` applies.
 */
import { chunkCorpus } from '../../shared/chunking';
import { LlmAgents, MAX_NOTE_UNITS } from '../../shared/llm/agents';
import { MAX_ANSWER_CHARS, MAX_CITED_SENTENCES } from '../../shared/llm/schemas';
import {
  citedText,
  MAX_UNIT_CHARS,
  MAX_UNITS,
  MARKER_TOKEN_SHARE,
  numberedUnits,
  renderNumbered,
  sentenceUnits,
  type SentenceUnit,
} from '../../shared/llm/sentences';
import { countTokens } from '../../shared/tokenizer';
import { buildMessage } from '../../shared/method';
import type { ChatModel, ChatRequest, ChatResponse, SeekRequest } from '../../shared/ports';
import { lexicalPrior } from '../../shared/extractive/prior';
import { poolScore } from '../../shared/ranking';
import type { Chunk, Message } from '../../shared/types';

/** A chat model that replays scripted replies and records every request. */
class ScriptedChatModel implements ChatModel {
  readonly requests: ChatRequest[] = [];
  private readonly replies: Array<Partial<ChatResponse>>;

  constructor(
    readonly modelId: string,
    replies: Array<Partial<ChatResponse>>,
  ) {
    this.replies = [...replies];
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    this.requests.push(request);
    const next = this.replies.shift();
    if (next === undefined) throw new Error(`ScriptedChatModel ${this.modelId}: no scripted reply left`);
    return { text: '', stopReason: 'end_turn', inputTokens: 100, outputTokens: 10, ...next };
  }
}

function chunkOf(text: string, index = 7): Chunk {
  return { index, tokens: 50, chars: text.length, segments: [{ documentId: 'doc.txt', start: 0, end: text.length, chunkStart: 0 }], text };
}

const ENGLISH = 'The Golden Gate Bridge opened to traffic in May 1937.\nIts chief engineer was Joseph Strauss.   It spans the strait.';
const ENGLISH_UNITS = ['The Golden Gate Bridge opened to traffic in May 1937.', 'Its chief engineer was Joseph Strauss.', 'It spans the strait.'];
const CHINESE = '金门大桥于1937年5月通车。它的总工程师是约瑟夫·施特劳斯。大桥横跨金门海峡。';
const CHINESE_UNITS = ['金门大桥于1937年5月通车。', '它的总工程师是约瑟夫·施特劳斯。', '大桥横跨金门海峡。'];
const SIX = 'One is first. Two is second. Three is third. Four is fourth. Five is fifth. Six is sixth.';

function seekRequest(text = ENGLISH, question = 'When did the Golden Gate Bridge open?', overrides: Partial<SeekRequest> = {}): SeekRequest {
  return { question, chunk: chunkOf(text), round: 1, synchronized: [], ...overrides };
}

/** One seek with one scripted reply (more replies for a re-ask); the seeker model is returned for its requests. */
async function seekWith(replies: string[], request: SeekRequest = seekRequest()) {
  const seeker = new ScriptedChatModel(
    'seeker',
    replies.map((text) => ({ text })),
  );
  const result = await new LlmAgents({ seeker, reasoner: seeker, maxOutputTokens: { seek: 300, reason: 100 } }).seek(request);
  return { result, seeker };
}

const textsOf = (text: string, units: readonly SentenceUnit[]): string[] => units.map((u) => text.slice(u.start, u.end));

describe('sentenceUnits', () => {
  it('numbers the sentences 1..n with exact, trimmed offsets into the chunk text', () => {
    const units = sentenceUnits(ENGLISH);

    expect(units.map((u) => u.id)).toEqual([1, 2, 3]);
    expect(textsOf(ENGLISH, units)).toEqual(ENGLISH_UNITS);
    for (const u of units) expect(ENGLISH.slice(u.start, u.end)).toBe(ENGLISH.slice(u.start, u.end).trim());
    // In order, never overlapping.
    for (let i = 1; i < units.length; i++) expect(units[i].start).toBeGreaterThanOrEqual(units[i - 1].end);
  });

  it('has no unit for a text of white space only', () => {
    expect(sentenceUnits('  \n\t \n')).toEqual([]);
    expect(sentenceUnits('')).toEqual([]);
  });

  it('joins a heading line to the sentence after it, and keeps a sentence that ends a line on its own', () => {
    const text = 'History\n\nThe town was founded in 1820.\n\nGeography\n\nIt lies on a river. It has a port.';

    const units = sentenceUnits(text);

    expect(textsOf(text, units)).toEqual(['History\n\nThe town was founded in 1820.', 'Geography\n\nIt lies on a river.', 'It has a port.']);
    // The numbered view shows the joined unit on one line.
    expect(renderNumbered(text, units)).toBe('[1] History The town was founded in 1820.\n[2] Geography It lies on a river.\n[3] It has a port.');
  });

  it('does not take a line that ends with a sentence mark for a heading', () => {
    const text = 'It rained.\n\nThe match went on.';

    expect(textsOf(text, sentenceUnits(text))).toEqual(['It rained.', 'The match went on.']);
  });

  it('cuts a sentence longer than MAX_UNIT_CHARS at a space, losing no text', () => {
    const text = 'word '.repeat(150) + 'end.';

    const units = sentenceUnits(text);

    expect(units.length).toBeGreaterThanOrEqual(2);
    for (const u of units) {
      expect(u.end - u.start).toBeLessThanOrEqual(MAX_UNIT_CHARS);
      expect(text[u.start]).toBe('w');
    }
    expect(textsOf(text, units).join(' ')).toBe(text);
  });

  it('cuts a long run without spaces next to, never inside, a surrogate pair', () => {
    // 'a' then emoji: every emoji's high surrogate is at an odd offset, so a cut at 400 would split one.
    const text = 'a' + '😀'.repeat(300);

    const units = sentenceUnits(text);

    expect(units.length).toBeGreaterThanOrEqual(2);
    expect(units[0]).toEqual({ id: 1, start: 0, end: MAX_UNIT_CHARS - 1 });
    for (const u of units) {
      expect(u.end - u.start).toBeLessThanOrEqual(MAX_UNIT_CHARS);
      const first = text.charCodeAt(u.start);
      const last = text.charCodeAt(u.end - 1);
      expect(first >= 0xdc00 && first <= 0xdfff).toBe(false);
      expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
    }
    expect(textsOf(text, units).join('')).toBe(text);
  });

  it('keeps every unit bounded past MAX_UNITS lines, covering the chunk, so a needle deep in it is cited in a short unit', () => {
    // Each line a sentence of its own (a sentence mark at its end), so the chunk has 3,000 units before
    // any joining: past MAX_UNITS (lines without a mark are one wrapped sentence, windowed at 400
    // characters, and would never reach it).
    const lines = Array.from({ length: 3000 }, (_, i) => (i === 2500 ? 'The vault code is 4417.' : `Entry ${i} is fine.`));
    const text = lines.join('\n');

    const units = sentenceUnits(text);
    const needle = text.indexOf('4417');
    const holding = units.find((u) => u.start <= needle && needle < u.end)!;

    expect(units.length).toBeLessThanOrEqual(MAX_UNITS);
    expect(Math.max(...units.map((u) => u.end - u.start))).toBeLessThanOrEqual(MAX_UNIT_CHARS);
    expect(units[units.length - 1].end).toBe(text.length);
    expect(units.map((u) => u.id)).toEqual(units.map((_, i) => i + 1));
    expect(text.slice(holding.start, holding.end)).toContain('The vault code is 4417.');
    expect(holding.end - holding.start).toBeLessThanOrEqual(MAX_UNIT_CHARS);
  });

  it('numberedUnits joins one-word sentences until their markers cost at most a fifth of the chunk, covering it, each unit bounded; prose keeps its sentences', () => {
    const list = Array.from({ length: 1500 }, (_, i) => `Item${i}.`).join(' ');
    const prose = Array.from({ length: 60 }, (_, i) => `The committee met on day ${i} and agreed that the northern road should be repaired soon.`).join(' ');
    const tokens = countTokens(list);

    const units = numberedUnits(list, tokens);
    const numbered = countTokens(renderNumbered(list, units));

    // The sentences alone: one marker per word, about 75% more tokens (what overflowed the window).
    expect(countTokens(renderNumbered(list, sentenceUnits(list)))).toBeGreaterThan(1.5 * tokens);
    expect(numbered).toBeLessThanOrEqual(Math.ceil(tokens * (1 + MARKER_TOKEN_SHARE)));
    expect(units.map((u) => u.id)).toEqual(units.map((_, i) => i + 1));
    expect([units[0].start, units[units.length - 1].end]).toEqual([0, list.length]);
    expect(Math.max(...units.map((u) => u.end - u.start))).toBeLessThanOrEqual(2 * MAX_UNIT_CHARS);
    expect(numberedUnits(prose, countTokens(prose))).toEqual(sentenceUnits(prose));
    expect(numberedUnits(ENGLISH, 25)).toEqual(sentenceUnits(ENGLISH));
  });

  it('splits Chinese text at 。 into several units', () => {
    const units = sentenceUnits(CHINESE);

    expect(textsOf(CHINESE, units)).toEqual(CHINESE_UNITS);
    expect(units.map((u) => u.id)).toEqual([1, 2, 3]);
  });

  it('citedText joins adjacent units by a space and distant ones by " … ", in chunk order, ignoring bad and repeated ids', () => {
    const units = sentenceUnits(ENGLISH);

    expect(citedText(ENGLISH, units, [2, 1]).text).toBe(`${ENGLISH_UNITS[0]} ${ENGLISH_UNITS[1]}`);
    expect(citedText(ENGLISH, units, [3, 1, 3, 0, 9]).text).toBe(`${ENGLISH_UNITS[0]} … ${ENGLISH_UNITS[2]}`);
    expect(citedText(ENGLISH, units, [3, 1, 3, 0, 9]).units.map((u) => u.id)).toEqual([1, 3]);
  });
});

describe('LlmAgents.seek over numbered sentences', () => {
  it('turns cited ids into exact spans and the verbatim sentences, in chunk order (English)', async () => {
    const { result } = await seekWith(['{"sentences": [3, 1], "note": "", "score": 75}']);

    expect(result.evidence).toBe(`${ENGLISH_UNITS[0]} … ${ENGLISH_UNITS[2]}`);
    expect(result.score).toBe(75);
    expect(result.spans.map((s) => ENGLISH.slice(s.start, s.end))).toEqual([ENGLISH_UNITS[0], ENGLISH_UNITS[2]]);
    expect(result.spans).toEqual([
      { start: 0, end: 53 },
      { start: 95, end: 115 },
    ]);
    expect(result.warnings).toEqual([]);
  });

  it('turns cited ids into exact spans and the verbatim sentences (Chinese)', async () => {
    const { result, seeker } = await seekWith(['{"sentences": [1, 2], "note": "", "score": 100}'], seekRequest(CHINESE, '金门大桥什么时候通车？'));

    expect(result.evidence).toBe(`${CHINESE_UNITS[0]} ${CHINESE_UNITS[1]}`);
    expect(result.spans.map((s) => CHINESE.slice(s.start, s.end))).toEqual([CHINESE_UNITS[0], CHINESE_UNITS[1]]);
    expect(result.score).toBe(100);
    expect(seeker.requests[0].messages[0].text).toContain(`[1] ${CHINESE_UNITS[0]}\n[2] ${CHINESE_UNITS[1]}\n[3] ${CHINESE_UNITS[2]}`);
  });

  it("drops ids beyond the chunk's units with a warning", async () => {
    const { result } = await seekWith(['{"sentences": [2, 9, 14], "note": "", "score": 75}']);

    expect(result.evidence).toBe(ENGLISH_UNITS[1]);
    expect(result.spans).toEqual([{ start: 54, end: 92 }]);
    expect(result.warnings).toEqual(["seeking agent cited sentence ids beyond the chunk's 3, dropped: 9, 14"]);
  });

  it('yields no message when every cited id is beyond the chunk', async () => {
    const { result } = await seekWith(['{"sentences": [4], "note": "", "score": 100}']);

    expect(result).toMatchObject({ evidence: null, score: 0, spans: [] });
    expect(result.warnings).toEqual([expect.stringMatching(/beyond the chunk's 3, dropped: 4/)]);
  });

  it('cites a repeated id once', async () => {
    const { result } = await seekWith(['{"sentences": [2, 2, "2", "[2]"], "note": "", "score": 50}']);

    expect(result.evidence).toBe(ENGLISH_UNITS[1]);
    expect(result.spans).toHaveLength(1);
    expect(result.warnings).toEqual([]);
  });

  it(`keeps the first ${MAX_CITED_SENTENCES} ids in reply order when more are cited, with a warning`, async () => {
    const { result } = await seekWith(['{"sentences": [6, 5, 4, 3, 2, 1], "note": "", "score": 50}'], seekRequest(SIX));

    expect(result.spans).toHaveLength(MAX_CITED_SENTENCES);
    expect(result.evidence).toBe('Three is third. Four is fourth. Five is fifth. Six is sixth.');
    expect(result.warnings).toEqual([`seeking agent cited 6 sentences; the first ${MAX_CITED_SENTENCES} kept`]);
  });

  it('keeps a note the sentences do not say, after them on a line of its own', async () => {
    const { result } = await seekWith(['{"sentences": [2], "note": "He refers to the Golden Gate Bridge.", "score": 75}']);

    expect(result.evidence).toBe(`${ENGLISH_UNITS[1]}\nNote: He refers to the Golden Gate Bridge.`);
    // The note is no quote: the spans are the cited sentence only.
    expect(result.spans).toEqual([{ start: 54, end: 92 }]);
  });

  it('cites the units of a note copied from the chunk and drops the note', async () => {
    const { result } = await seekWith(['{"sentences": [1], "note": "its chief engineer was Joseph  Strauss", "score": 75}']);

    expect(result.evidence).toBe(`${ENGLISH_UNITS[0]} ${ENGLISH_UNITS[1]}`);
    expect(result.evidence).not.toContain('Note:');
    expect(result.spans).toEqual([
      { start: 0, end: 53 },
      { start: 54, end: 92 },
    ]);
  });

  it('cites the units of a note copied from a Chinese chunk and drops the note', async () => {
    const { result } = await seekWith(['{"sentences": [3], "note": "它的总工程师是约瑟夫·施特劳斯。", "score": 75}'], seekRequest(CHINESE, '谁是总工程师？'));

    expect(result.evidence).toBe(`${CHINESE_UNITS[1]} ${CHINESE_UNITS[2]}`);
    expect(result.spans.map((s) => CHINESE.slice(s.start, s.end))).toEqual([CHINESE_UNITS[1], CHINESE_UNITS[2]]);
  });

  it(`adds at most ${MAX_NOTE_UNITS} units through a copied note beyond the cited ids`, async () => {
    const seven = `${SIX} Seven is seventh.`;
    const note = 'One is first. Two is second. Three is third.';
    const { result } = await seekWith([`{"sentences": [7, 6, 5, 4], "note": "${note}", "score": 50}`], seekRequest(seven));

    // The note covers units 1-3; units 1 and 2 are added, unit 3 is past the bound, so the note,
    // which says more than the units cited, is kept rather than lost.
    expect(result.spans).toHaveLength(MAX_CITED_SENTENCES + MAX_NOTE_UNITS);
    expect(result.evidence).toBe(`One is first. Two is second. … Four is fourth. Five is fifth. Six is sixth. Seven is seventh.\nNote: ${note}`);
  });

  it('keeps a note only partly copied from the chunk, citing the units of the copied part', async () => {
    const { result } = await seekWith(['{"sentences": [1], "note": "Its chief engineer was Joseph Strauss. He was born in Chicago.", "score": 75}']);

    expect(result.spans).toHaveLength(2);
    expect(result.evidence).toBe(`${ENGLISH_UNITS[0]} ${ENGLISH_UNITS[1]}\nNote: Its chief engineer was Joseph Strauss. He was born in Chicago.`);
  });

  it("drops a note that echoes the prompt's own heading, with a warning", async () => {
    const synchronized: Message[] = [
      { id: 'r1-c3', round: 1, chunkIndex: 3, score: 90, evidence: 'Strauss was chief engineer.', tokens: 5, quotes: [], sources: ['d'] },
    ];
    const request = seekRequest(ENGLISH, 'When did the Golden Gate Bridge open?', { round: 2, synchronized });
    const { result } = await seekWith(['{"sentences": [1], "note": "The global top messages after round 1, best first", "score": 75}'], request);

    expect(result.evidence).toBe(ENGLISH_UNITS[0]);
    expect(result.warnings).toEqual(["seeking agent note repeats the prompt's own text; dropped"]);
  });

  it('keeps a note whose words the prompt also uses when the chunk says them too', async () => {
    const text = 'Officials printed the global top messages after round one. The list was long.';
    const note = 'These were the global top messages after round one of the vote.';
    const { result } = await seekWith([`{"sentences": [2], "note": "${note}", "score": 25}`], seekRequest(text, 'What was printed?'));

    expect(result.evidence).toBe(`The list was long.\nNote: ${note}`);
    expect(result.warnings).toEqual([]);
  });

  it('reads the prose fallback "Sentences: 2, 3" with its score line', async () => {
    const { result } = await seekWith(['Sentences: 2, 3\nScore: 75']);

    expect(result.evidence).toBe(`${ENGLISH_UNITS[1]} ${ENGLISH_UNITS[2]}`);
    expect(result.score).toBe(75);
    expect(result.spans).toEqual([
      { start: 54, end: 92 },
      { start: 95, end: 115 },
    ]);
  });

  it('still locates the quotes of a free-form reply in the chunk', async () => {
    const { result } = await seekWith(['{"evidence": "Strauss was the chief engineer.", "quotes": ["its chief engineer was Joseph Strauss."], "score": 50}']);

    expect(result.evidence).toBe('Strauss was the chief engineer.');
    expect(result.spans).toEqual([{ start: 54, end: 92 }]);
    expect(result.score).toBe(50);
  });

  it("locates a free-form quote copied with the numbered view's [n] markers", async () => {
    const { result } = await seekWith([
      '{"evidence": "Strauss.", "quotes": ["[2] Its chief engineer was Joseph Strauss. [3] It spans the strait."], "score": 50}',
    ]);

    expect(result.spans).toEqual([{ start: 54, end: 115 }]);
  });

  it('reads whole numbers only from string ids: "[2]" and "3" cite, "-1" and "2.5" do not', async () => {
    const { result } = await seekWith(['{"sentences": ["[2]", "-1", "2.5", "3"], "note": "", "score": 50}']);

    expect(result.evidence).toBe(`${ENGLISH_UNITS[1]} ${ENGLISH_UNITS[2]}`);
    expect(result.spans).toEqual([
      { start: 54, end: 92 },
      { start: 95, end: 115 },
    ]);
  });

  it("sends a schema whose sentence ids range over the chunk's units", async () => {
    const { seeker } = await seekWith(['{"sentences": [], "note": "", "score": 0}'], seekRequest(SIX));

    const sentences = seeker.requests[0].schema?.schema.properties?.sentences;
    expect(sentences?.items).toEqual({ type: 'integer', minimum: 1, maximum: 6 });
    expect(sentences?.maxItems).toBe(MAX_CITED_SENTENCES);
    expect(sentences?.minItems).toBe(1);
  });
});

describe('LlmAgents.reason: bounded answers', () => {
  const messages: Message[] = [
    { id: 'r1-c12', round: 1, chunkIndex: 12, score: 80, evidence: 'The bridge opened in May 1937.', tokens: 8, quotes: [], sources: ['d'] },
  ];
  const reasonWith = async (text: string, force = false) => {
    const reasoner = new ScriptedChatModel('reasoner', [{ text }]);
    const result = await new LlmAgents({ seeker: reasoner, reasoner }).reason({ question: 'When did it open?', messages, force });
    return { result, reasoner };
  };

  it('sends a forced request a schema with no answerable field', async () => {
    const { result, reasoner } = await reasonWith('{"answer": "May 1937", "cited": ["r1-c12"]}', true);

    expect(reasoner.requests[0].schema?.schema.properties).not.toHaveProperty('answerable');
    expect(reasoner.requests[0].schema?.schema.required).toEqual(['answer', 'cited']);
    expect(result).toMatchObject({ answerable: true, answer: 'May 1937', citedMessageIds: ['r1-c12'], warnings: [] });
  });

  it("a normal request's schema can refuse", async () => {
    const { reasoner } = await reasonWith('{"answer": "May 1937", "cited": ["r1-c12"], "answerable": true}');

    expect(reasoner.requests[0].schema?.schema.properties).toHaveProperty('answerable', { type: 'boolean' });
  });

  it(`cuts a 99,000-character prose answer to MAX_ANSWER_CHARS (${MAX_ANSWER_CHARS}) with a warning`, async () => {
    const { result } = await reasonWith('x'.repeat(99_000));

    expect(result.answerable).toBe(true);
    expect(result.answer).toBe('x'.repeat(MAX_ANSWER_CHARS - 1) + '…');
    expect(result.warnings).toEqual([`reasoning agent answer of 99000 characters cut to ${MAX_ANSWER_CHARS} (MAX_ANSWER_CHARS)`]);
  });

  it('warns when an answer is exactly at the bound (it may have been cut by the schema), and not one character below', async () => {
    const atBound = await reasonWith(JSON.stringify({ answer: 'y'.repeat(MAX_ANSWER_CHARS), cited: ['r1-c12'], answerable: true }));
    const below = await reasonWith(JSON.stringify({ answer: 'y'.repeat(MAX_ANSWER_CHARS - 1), cited: ['r1-c12'], answerable: true }));

    expect(atBound.result.answer).toHaveLength(MAX_ANSWER_CHARS);
    expect(atBound.result.warnings).toEqual([expect.stringMatching(/reached the 160-character bound/)]);
    expect(below.result.warnings).toEqual([]);
  });
});

describe('lexicalPrior', () => {
  const question = 'When did the Golden Gate Bridge open?';

  it('is 100 when the text holds every content term of the question (stemmed), 0 when none', () => {
    expect(lexicalPrior(question, 'The Golden Gate Bridge opened to traffic in May 1937.')).toBe(100);
    expect(lexicalPrior(question, 'Bananas are yellow.')).toBe(0);
    expect(lexicalPrior(question, '')).toBe(0);
  });

  it('is the weighted share of the terms found: more terms, a higher prior', () => {
    const three = lexicalPrior(question, 'The Golden Gate Bridge is red.');
    const one = lexicalPrior(question, 'The bridge is long.');

    expect(three).toBeGreaterThan(one);
    expect(one).toBeGreaterThan(0);
    expect(three).toBeLessThan(100);
  });

  it('is 0 for a question without a content term', () => {
    expect(lexicalPrior('What is it?', 'It is what it is.')).toBe(0);
  });

  it('compares Chinese by character bigrams', () => {
    // 金门大桥什么时候通车: 9 bigrams; 金门 门大 大桥 通车 are in the first text (4 of 9, equal weights).
    expect(lexicalPrior('金门大桥什么时候通车？', '金门大桥于1937年5月通车。')).toBe(Math.round((100 * 4) / 9));
    expect(lexicalPrior('金门大桥什么时候通车？', '金门大桥是红色的。')).toBe(Math.round((100 * 3) / 9));
    expect(lexicalPrior('金门大桥什么时候通车？', '香蕉是黄色的。')).toBe(0);
  });
});

describe('poolScore', () => {
  it.each([
    ['score', 90, 10, 90],
    ['retrieval', 90, 10, 10],
    ['hybrid', 90, 10, 50],
    ['hybrid', 75, 50, 63],
    ['hybrid', 0, 0, 0],
  ] as const)('%s of model score %i and prior %i is %i', (mode, modelScore, prior, expected) => {
    expect(poolScore(mode, modelScore, prior)).toBe(expected);
  });
});

describe('buildMessage ranking', () => {
  const text = 'The Golden Gate Bridge opened to traffic in May 1937. Bananas are yellow.';
  const [chunk] = chunkCorpus([{ id: 'a.txt', text }], { chunkTokens: 200 });
  const question = 'When did the Golden Gate Bridge open?';
  // The cited sentence holds every question term (prior 100); the model rated it 50.
  const reply = { evidence: 'The Golden Gate Bridge opened to traffic in May 1937.', spans: [{ start: 0, end: 53 }], score: 50 };

  it.each([
    ['score', 50],
    ['hybrid', 75],
    ['retrieval', 100],
  ] as const)('with ranking %s sets the pool score %i and keeps the model score and the prior', (mode, score) => {
    const { message } = buildMessage(chunk, 1, 'r1-c0', reply, { question, mode });

    expect(message).toMatchObject({ score, modelScore: 50, prior: 100 });
  });

  it('computes the prior of the cited text, not of the note or the rest of the chunk', () => {
    const banana = { evidence: 'Bananas are yellow.\nNote: the Golden Gate Bridge opened in 1937', spans: [{ start: 54, end: 73 }], score: 50 };

    const { message } = buildMessage(chunk, 1, 'r1-c0', banana, { question, mode: 'hybrid' });

    expect(message).toMatchObject({ prior: 0, modelScore: 50, score: 25 });
  });

  it('computes the prior of the evidence when the reply has no span (free form)', () => {
    const { message } = buildMessage(
      chunk,
      1,
      'r1-c0',
      { evidence: 'The Golden Gate Bridge opened in 1937.', spans: [], score: 0 },
      { question, mode: 'retrieval' },
    );

    expect(message).toMatchObject({ prior: 100, modelScore: 0, score: 100 });
  });

  it('without ranking, the pool score is the model score and no prior is kept', () => {
    const { message } = buildMessage(chunk, 1, 'r1-c0', reply);

    expect(message?.score).toBe(50);
    expect(message).not.toHaveProperty('prior');
    expect(message).not.toHaveProperty('modelScore');
  });
});

describe('buildMessage over identical documents (issue 24, defect 13)', () => {
  const text = 'The Golden Gate Bridge opened to traffic in May 1937. Its chief engineer was Joseph Strauss.';
  const [chunk] = chunkCorpus(
    [
      { id: 'a.txt', text },
      { id: 'c.txt', text },
    ],
    { chunkTokens: 200 },
  );

  it('packs both copies into one chunk (the premise of the test)', () => {
    expect(chunk.segments.map((s) => s.documentId)).toEqual(['a.txt', 'c.txt']);
  });

  it('cites both documents when the seeking agent cites a sentence of the first copy', async () => {
    const { result } = await seekWith(['{"sentences": [1], "note": "", "score": 75}'], { question: 'When did it open?', chunk, round: 1, synchronized: [] });

    const { message } = buildMessage(chunk, 1, 'r1-c0', result);

    expect(message?.sources).toEqual(['a.txt', 'c.txt']);
    expect(message?.quotes).toEqual([
      { documentId: 'a.txt', start: 0, end: 53, text: 'The Golden Gate Bridge opened to traffic in May 1937.' },
      { documentId: 'c.txt', start: 0, end: 53, text: 'The Golden Gate Bridge opened to traffic in May 1937.' },
    ]);
  });

  it('quotes each copy once when the seeking agent cites the sentence in both copies', async () => {
    const units = sentenceUnits(chunk.text);
    const second = units.findIndex((u) => u.start >= text.length) + 1;
    const { result } = await seekWith([`{"sentences": [1, ${second}], "note": "", "score": 75}`], {
      question: 'When did it open?',
      chunk,
      round: 1,
      synchronized: [],
    });

    const { message } = buildMessage(chunk, 1, 'r1-c0', result);

    expect(message?.quotes.map((q) => [q.documentId, q.start, q.end])).toEqual([
      ['a.txt', 0, 53],
      ['c.txt', 0, 53],
    ]);
  });

  it('cites only the document that holds the sentence when the other one differs', () => {
    const [mixed] = chunkCorpus(
      [
        { id: 'a.txt', text },
        { id: 'b.txt', text: 'A different text about tunnels and their engineers.' },
      ],
      { chunkTokens: 200 },
    );

    const { message } = buildMessage(mixed, 1, 'r1-c0', { evidence: 'x', spans: [{ start: 0, end: 53 }], score: 50 });

    expect(message?.sources).toEqual(['a.txt']);
    expect(message?.quotes).toHaveLength(1);
  });
});
