/**
 * The offline extractive reader (shared/extractive): seeking agent, reasoning agent and their text
 * processing, on small hand-made texts.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { analysisKey, ExtractiveReader } from '../../shared/extractive';
import { analysisFingerprint } from '../../shared/extractive/reader';
import { ANALYSIS_VERSION, type AnalyzedSentence, analyzeText, parseAnalysis, serializeAnalysis } from '../../shared/extractive/relevance';
import { analyzeQuestion } from '../../shared/extractive/query';
import { MAX_JOINED_SENTENCE_CHARS, MAX_SENTENCE_CHARS, MAX_WORD_CHARS, splitSentences, termOf } from '../../shared/extractive/text';
import { countTokens } from '../../shared/tokenizer';
import { NO_ANSWER, type Chunk, type Message } from '../../shared/types';

function makeChunk(index: number, text: string): Chunk {
  return {
    index,
    tokens: countTokens(text),
    chars: text.length,
    segments: [{ documentId: `doc-${index}.txt`, start: 0, end: text.length, chunkStart: 0 }],
    text,
  };
}

function makeMessage(chunkIndex: number, evidence: string, score: number, round = 1): Message {
  return {
    id: `r${round}-c${chunkIndex}`,
    round,
    chunkIndex,
    score,
    evidence,
    tokens: countTokens(evidence),
    quotes: [],
    sources: [`doc-${chunkIndex}.txt`],
  };
}

const CHEROKEE_SENTENCE =
  'A part of the Cherokees, known by the name of Chickamaugas, inhabiting five villages on the Tennessee River, have long committed depredations on the neighboring settlements.';

const TREATY_CHUNK = makeChunk(
  0,
  [
    'Fellow citizens of the Senate and House of Representatives: the harvest this year has been abundant.',
    'The revenue from customs exceeded the estimates of the Treasury.',
    CHEROKEE_SENTENCE,
    'A treaty of commerce with Sweden was concluded in the spring.',
    'I recommend that Congress provide for the repair of the lighthouses on the coast.',
  ].join(' '),
);

const BUDGET_CHUNK = makeChunk(
  1,
  [
    'The revenue from customs exceeded the estimates of the Treasury.',
    'The Navy has completed two new frigates, which are now in service.',
    'I recommend that Congress provide for the repair of the lighthouses on the coast.',
  ].join(' '),
);

const CHEROKEE_QUESTION =
  'By what name was the part of the Cherokees living in five villages on the Tennessee River known, whose depredations on neighboring settlements a president reported?';

describe('words longer than any English word', () => {
  it('get no term, so a data blob of letters costs no stemming (the stemmer is quadratic in a word)', () => {
    expect(termOf('antidisestablishmentarianism')).toBe('antidisestablishmentarian');
    expect(termOf('b'.repeat(MAX_WORD_CHARS))).not.toBeNull();
    expect(termOf('b'.repeat(MAX_WORD_CHARS + 1))).toBeNull();
    // 1 MB of one letter, then a sentence: analysed (the sentence keeps its terms), not stuck in the stemmer.
    const sentences = analyzeText(`${'a'.repeat(1_000_000)}. The treasury paid its debts.`);
    expect(sentences.at(-1)?.terms).toEqual(new Set(['treasuri', 'paid', 'debt']));
  });
});

describe('sentence splitting', () => {
  it('keeps exact offsets of every sentence in the text', () => {
    // Arrange
    const text = '  The first sentence.  The second one, with Mr. Smith in it!\n\nA third?';

    // Act
    const sentences = splitSentences(text);

    // Assert
    expect(sentences.map((s) => s.text)).toEqual(['The first sentence.', 'The second one, with Mr. Smith in it!', 'A third?']);
    for (const s of sentences) expect(text.slice(s.start, s.end)).toBe(s.text);
  });

  it("keeps a name's initials and an abbreviated month inside their sentence", () => {
    const text =
      'The Visit is a film directed by M. Night Shyamalan, starring Ed Oxenbould. He met J. R. R. Tolkien in 1930. It opened on Jan. 9, 1990 in St. Louis. The U.S. Army left.';

    const sentences = splitSentences(text);

    expect(sentences.map((s) => s.text)).toEqual([
      'The Visit is a film directed by M. Night Shyamalan, starring Ed Oxenbould.',
      'He met J. R. R. Tolkien in 1930.',
      'It opened on Jan. 9, 1990 in St. Louis.',
      'The U.S. Army left.',
    ]);
    for (const s of sentences) expect(text.slice(s.start, s.end)).toBe(s.text);
  });

  it('gives the same sentences for a text longer than its segmentation window', () => {
    // Arrange: about 40,000 characters, far more than one window of the segmenter.
    const sentence = 'The commerce of the nation grew in every port along the coast this year.';
    const text = Array.from({ length: 600 }, (_, i) => `${sentence.slice(0, -1)} number ${i}.`).join(' ');

    // Act
    const sentences = splitSentences(text);

    // Assert
    expect(sentences).toHaveLength(600);
    expect(sentences[599].text).toBe(`${sentence.slice(0, -1)} number 599.`);
    for (const s of sentences) expect(text.slice(s.start, s.end)).toBe(s.text);
  });
});

describe('sentence splitting at line breaks', () => {
  const texts = (text: string): string[] => {
    const sentences = splitSentences(text);
    for (const s of sentences) expect(text.slice(s.start, s.end)).toBe(s.text);
    return sentences.map((s) => s.text);
  };

  it('joins the wrapped lines of a sentence (PDF lines, HTML <br>) and ends it at its punctuation', () => {
    expect(texts('The bridge was designed\nby Joseph Strauss in 1921,\nan engineer from Chicago. It opened\nin 1937.\nTraffic grew.')).toEqual([
      'The bridge was designed\nby Joseph Strauss in 1921,\nan engineer from Chicago.',
      'It opened\nin 1937.',
      'Traffic grew.',
    ]);
  });

  it('ends a sentence where a paragraph ends (a blank line), punctuated or not', () => {
    expect(texts('History of the bridge\n\nThe bridge opened in 1937')).toEqual(['History of the bridge', 'The bridge opened in 1937']);
    expect(texts('A heading\n \t\nBody\u2029Next')).toEqual(['A heading', 'Body', 'Next']);
  });

  it('ends a sentence before a line that starts a list item', () => {
    expect(texts('Ingredients\n- flour\n- sugar and\nbutter\n1. mix\n2) bake\n(a) serve\n• eat')).toEqual([
      'Ingredients',
      '- flour',
      '- sugar and\nbutter',
      '1. mix',
      '2) bake',
      '(a) serve',
      '• eat',
    ]);
  });

  it('never joins lines without punctuation (a table, a poem) into a sentence over the limit', () => {
    const line = 'and the lamp of the lighthouse turned all night';
    const poem = Array.from({ length: 40 }, (_, i) => `${line} ${i}`).join('\n');
    const sentences = texts(poem);
    expect(sentences.length).toBeGreaterThanOrEqual(Math.ceil(poem.length / MAX_JOINED_SENTENCE_CHARS));
    for (const s of sentences) expect(s.length).toBeLessThanOrEqual(MAX_JOINED_SENTENCE_CHARS);
    expect(sentences.join('\n')).toBe(poem);
    // A single line longer than the limit stays one sentence (it is never cut inside a line).
    expect(texts('x'.repeat(400))).toEqual(['x'.repeat(400)]);
  });
});

describe('content terms', () => {
  it('stems words, drops stop words and writes number words as digits', () => {
    expect(termOf('villages')).toBe('villag');
    expect(termOf('the')).toBeNull();
    expect(termOf('four')).toBe('4');
    expect(termOf("nation's")).toBe('nation');
  });
});

describe('ExtractiveReader.seek (seeking agent)', () => {
  it('says it is an offline extractive reader, not an LLM', () => {
    expect(new ExtractiveReader().description).toMatch(/extractive.*not an LLM/);
  });

  it('extracts the relevant sentence with its exact offsets in the chunk', async () => {
    // Arrange
    const reader = new ExtractiveReader();

    // Act
    const result = await reader.seek({ question: CHEROKEE_QUESTION, chunk: TREATY_CHUNK, round: 1, synchronized: [] });

    // Assert
    expect(result.evidence).toContain(CHEROKEE_SENTENCE);
    const start = TREATY_CHUNK.text.indexOf(CHEROKEE_SENTENCE);
    expect(result.spans).toContainEqual({ start, end: start + CHEROKEE_SENTENCE.length });
    expect(result.spans.map((s) => TREATY_CHUNK.text.slice(s.start, s.end)).join('\n')).toBe(result.evidence);
    expect(Number.isInteger(result.score)).toBe(true);
    expect(result.score).toBeGreaterThan(50);
    expect(result.score).toBeLessThanOrEqual(100);
  });

  it('does not demand a one- or two-digit number of the question in the answer (a label such as "(question 0)"), but still a year', async () => {
    const text = 'The lighthouse on Kerrow Point was built in 1871 by the engineer Martha Quill. Martha Quill was born in Dundee.';
    const reader = new ExtractiveReader();
    const ask = async (question: string) => {
      const sought = await reader.seek({ question, chunk: makeChunk(0, text), round: 1, synchronized: [] });
      return reader.reason({ question, messages: [makeMessage(0, sought.evidence ?? '', sought.score)], force: false });
    };

    const labelled = await ask('Who built the lighthouse on Kerrow Point? (question 0)');
    const year = await ask('Who built the lighthouse on Kerrow Point in 1905?');

    expect(labelled.answerable).toBe(true);
    expect(labelled.answer).toContain('Martha Quill');
    expect(year.answerable).toBe(false);
    expect(year.answerBasis).toContain('lacks the question\'s rare word(s) "1905"');
  });

  it('reads a 40,000-character sentence as windows: the answer and its evidence stay short and hold the fact deep inside it', async () => {
    // Arrange: one sentence without a full stop, the fact at offset ~20,000.
    const filler = (n: number): string => Array.from({ length: n }, (_, i) => `item ${i} of the ledger was checked`).join(', ');
    const head = filler(640);
    const text = `${head}, the vault combination chosen by Margarethe Olsen was 4417, ${filler(640)}`;
    const chunk = makeChunk(0, text);
    const reader = new ExtractiveReader();
    const question = 'Which vault combination did Margarethe Olsen choose?';

    // Act
    const sought = await reader.seek({ question, chunk, round: 1, synchronized: [] });
    const reasoned = await reader.reason({ question, messages: [makeMessage(0, sought.evidence ?? '', sought.score)], force: false });

    // Assert
    expect(text.length).toBeGreaterThan(40_000);
    expect(sought.evidence).toContain('Margarethe Olsen was 4417');
    expect(sought.evidence!.length).toBeLessThanOrEqual(3 * MAX_SENTENCE_CHARS);
    for (const span of sought.spans) expect(span.end - span.start).toBeLessThanOrEqual(MAX_SENTENCE_CHARS);
    expect(reasoned.answerable).toBe(true);
    expect(reasoned.answer).toContain('4417');
    expect(reasoned.answer.length).toBeLessThanOrEqual(3 * MAX_SENTENCE_CHARS);
  });

  it('scores a relevant chunk higher than a chunk that shares only a few words with the question', async () => {
    // Arrange
    const reader = new ExtractiveReader();
    const question = 'Which frigates did the Navy complete this year?';

    // Act
    const relevant = await reader.seek({ question, chunk: BUDGET_CHUNK, round: 1, synchronized: [] });
    const weak = await reader.seek({ question, chunk: TREATY_CHUNK, round: 1, synchronized: [] });

    // Assert
    expect(relevant.evidence).toContain('The Navy has completed two new frigates');
    expect(relevant.score).toBeGreaterThan(weak.score);
  });

  it('reports no information for an unrelated chunk', async () => {
    // Arrange
    const reader = new ExtractiveReader();

    // Act
    const result = await reader.seek({
      question: 'How many lives were lost when the Titanic struck an iceberg?',
      chunk: BUDGET_CHUNK,
      round: 1,
      synchronized: [],
    });

    // Assert
    expect(result).toMatchObject({ evidence: null, score: 0, spans: [] });
  });

  it('counts one call, the question and chunk as input and the evidence as output', async () => {
    // Arrange
    const reader = new ExtractiveReader();

    // Act
    const result = await reader.seek({ question: CHEROKEE_QUESTION, chunk: TREATY_CHUNK, round: 1, synchronized: [] });

    // Assert
    expect(result.usage).toEqual({
      calls: 1,
      inputTokens: countTokens(CHEROKEE_QUESTION) + TREATY_CHUNK.tokens,
      outputTokens: countTokens(result.evidence ?? ''),
    });
  });

  it('finds a second-hop sentence in round 2 through a name found in round 1', async () => {
    // Arrange: the second hop names the explorer only by name, which the question does not contain.
    const reader = new ExtractiveReader();
    const question = 'Which river did the explorer who founded the colony of Zentoria on the southern coast chart after his return from Europe?';
    const firstHop = makeChunk(0, 'The colony of Zentoria was founded in 1820 by the explorer Marek Hollund. The harbor was small.');
    const secondHop = makeChunk(1, 'The mail service improved. Later Hollund charted the Vistrel from its source to the sea. The postal rates fell.');
    const found = await reader.seek({ question, chunk: firstHop, round: 1, synchronized: [] });
    const synchronized = [makeMessage(0, found.evidence ?? '', found.score)];

    // Act
    const round1 = await reader.seek({ question, chunk: secondHop, round: 1, synchronized: [] });
    const round2 = await reader.seek({ question, chunk: secondHop, round: 2, synchronized });

    // Assert
    expect(found.evidence).toContain('Marek Hollund');
    expect(round1.evidence).toBeNull();
    expect(round2.evidence).toBe('Later Hollund charted the Vistrel from its source to the sea.');
    expect(round2.score).toBeGreaterThan(0);
  });

  it('returns only new evidence in round 2, not sentences already synchronized', async () => {
    // Arrange
    const reader = new ExtractiveReader();
    const synchronized = [makeMessage(0, CHEROKEE_SENTENCE, 85)];

    // Act
    const result = await reader.seek({ question: CHEROKEE_QUESTION, chunk: TREATY_CHUNK, round: 2, synchronized });

    // Assert
    expect(result.evidence ?? '').not.toContain('Chickamaugas');
    expect(result.usage.inputTokens).toBe(countTokens(CHEROKEE_QUESTION) + TREATY_CHUNK.tokens + synchronized[0].tokens);
  });

  it('gives the same result for the same request', async () => {
    // Arrange
    const request = { question: CHEROKEE_QUESTION, chunk: TREATY_CHUNK, round: 1, synchronized: [] };

    // Act
    const first = await new ExtractiveReader().seek(request);
    const second = await new ExtractiveReader().seek(request);

    // Assert
    expect(second).toEqual(first);
  });
});

describe('ExtractiveReader.reason (reasoning agent)', () => {
  it('answers with the supporting sentence and cites its message', async () => {
    // Arrange
    const reader = new ExtractiveReader();
    const messages = [makeMessage(4, 'A treaty of commerce with Sweden was concluded in the spring.', 30), makeMessage(0, CHEROKEE_SENTENCE, 25)];

    // Act
    const result = await reader.reason({ question: CHEROKEE_QUESTION, messages, force: false });

    // Assert
    expect(result.answerable).toBe(true);
    expect(result.answer).toContain('Chickamaugas');
    expect(result.citedMessageIds).toEqual(['r1-c0']);
    expect(result.usage).toEqual({
      calls: 1,
      inputTokens: countTokens(CHEROKEE_QUESTION) + messages[0].tokens + messages[1].tokens,
      outputTokens: countTokens(result.answer),
    });
  });

  it('says what its answer is: a sentence chosen by word overlap, with the share of the question it covers and the threshold', async () => {
    // Arrange
    const reader = new ExtractiveReader();
    const messages = [makeMessage(0, CHEROKEE_SENTENCE, 25)];

    // Act
    const result = await reader.reason({ question: CHEROKEE_QUESTION, messages, force: false });

    // Assert
    expect(result.answerable).toBe(true);
    expect(result.answerBasis).toMatch(
      /^extractive: a sentence chosen by word overlap, covering (\d+)% of the question's weighted words \(it answers from 50%\)$/,
    );
    expect(Number(/covering (\d+)%/.exec(result.answerBasis ?? '')?.[1])).toBeGreaterThanOrEqual(50);
  });

  it('refuses a sentence that shares only the names of the question, and says so', async () => {
    // Arrange: "Millbrook" weighs more than half of the question; the sentence has nothing else of it.
    const reader = new ExtractiveReader();
    const messages = [makeMessage(0, 'Millbrook was founded in 1842. The school opened in 1903.', 60)];

    // Act
    const result = await reader.reason({ question: 'When did the library of Millbrook open?', messages, force: false });

    // Assert
    expect(result).toMatchObject({ answerable: false, answer: NO_ANSWER, citedMessageIds: [] });
    expect(result.answerBasis).toMatch(/^extractive: the best sentence covers \d+% of the question's weighted words, but through its names only/);
  });

  it("answers from the sentence that covers the question's other words, with the sentence of its message that names the place", async () => {
    // Arrange: docs/MODELS.md's town.txt
    const reader = new ExtractiveReader();
    const messages = [makeMessage(0, 'Millbrook was founded in 1842. Its library opened in 1903; the first librarian was Edward Pike.', 60)];

    // Act
    const result = await reader.reason({ question: 'When did the library of Millbrook open?', messages, force: false });

    // Assert
    expect(result.answerable).toBe(true);
    // in document order (the sentence naming the place first, so that "Its" reads), whatever order they were chosen in
    expect(result.answer).toBe('Millbrook was founded in 1842. Its library opened in 1903; the first librarian was Edward Pike.');
    expect(result.answerBasis).toMatch(/^extractive: 2 sentences chosen by word overlap/);
  });

  it('refuses a question asking who when the best sentences name no one the question does not', async () => {
    // Arrange: the school's opening year shares "first", "Millbrook" and "school" with the question
    const reader = new ExtractiveReader();
    const messages = [makeMessage(0, 'Millbrook was founded in 1842. The first Millbrook school opened in 1905.', 60)];

    // Act
    const who = await reader.reason({ question: 'Who was the first principal of Millbrook school?', messages, force: false });
    const named = await reader.reason({
      question: 'Who was the first principal of Millbrook school?',
      messages: [makeMessage(1, 'The first principal of the Millbrook school was Ruth Ames.', 60)],
      force: false,
    });

    // Assert
    expect(who).toMatchObject({ answerable: false, answer: NO_ANSWER });
    expect(who.answerBasis).toMatch(
      /^extractive: asked who, but the sentence\(s\) with the most word overlap \(covering \d+% of the question's weighted words\) name no one the question does not$/,
    );
    expect(named).toMatchObject({ answerable: true, answer: 'The first principal of the Millbrook school was Ruth Ames.' });
  });

  it('says why it refuses: no sentence covers the threshold, with the best coverage', async () => {
    // Arrange
    const reader = new ExtractiveReader();
    const messages = [makeMessage(1, 'The Navy has completed two new frigates, which are now in service.', 20)];

    // Act
    const result = await reader.reason({ question: 'How many lives were lost when the steamer struck the rocks and sank?', messages, force: false });

    // Assert
    expect(result.answerable).toBe(false);
    expect(result.answerBasis).toMatch(/^extractive: no sentence covers 50% of the question's weighted words \(the best covers \d+%\)$/);
  });

  it('refuses with NO ANSWER when the messages do not cover the question', async () => {
    // Arrange
    const reader = new ExtractiveReader();
    const messages = [
      makeMessage(2, 'Many lives were lost when the steamer struck the rocks off the coast and sank.', 40),
      makeMessage(1, 'The Navy has completed two new frigates, which are now in service.', 20),
    ];

    // Act
    const result = await reader.reason({
      question: 'How many lives did a president say were lost when the Titanic struck an iceberg and sank?',
      messages,
      force: false,
    });

    // Assert
    expect(result).toMatchObject({ answerable: false, answer: NO_ANSWER, citedMessageIds: [] });
  });

  it('refuses when a rare name of the question is missing from the evidence', async () => {
    // Arrange: the sentence matches every other word of the question.
    const reader = new ExtractiveReader();
    const messages = [makeMessage(0, 'The company that built the first telephone exchange was named by the president.', 50)];

    // Act
    const result = await reader.reason({
      question: 'Which company did the president say built the first iPhone?',
      messages,
      force: false,
    });

    // Assert
    expect(result.answerable).toBe(false);
    expect(result.answer).toBe(NO_ANSWER);
  });

  it('answers from the best message anyway when forced', async () => {
    // Arrange
    const reader = new ExtractiveReader();
    const messages = [makeMessage(2, 'Many lives were lost when the steamer struck the rocks off the coast and sank.', 40)];

    // Act
    const result = await reader.reason({
      question: 'How many lives were lost when the Titanic struck an iceberg and sank?',
      messages,
      force: true,
    });

    // Assert
    expect(result.answerable).toBe(true);
    expect(result.answer).toContain('Many lives were lost');
    expect(result.citedMessageIds).toEqual(['r1-c2']);
  });

  it('says a forced answer below its threshold is a best effort', async () => {
    // Arrange: the messages of the refusal above
    const reader = new ExtractiveReader();
    const messages = [makeMessage(2, 'Many lives were lost when the steamer struck the rocks off the coast and sank.', 40)];
    const question = 'How many lives did a president say were lost when the Titanic struck an iceberg and sank?';

    // Act
    const result = await reader.reason({ question, messages, force: true });

    // Assert
    expect(result.answerable).toBe(true);
    expect(result.answerBasis).toMatch(
      /^extractive, best effort: the sentence with the most word overlap, covering \d+% of the question's weighted words, below the 50% it answers from$/,
    );
  });

  it('answers a two-part question from sentences linked by the entity the first part identifies', async () => {
    // Arrange
    const reader = new ExtractiveReader();
    const question =
      'A special envoy of Guatemala brought condolences on the death of a president. According to a later address, that president fell victim to the revengeful vanity of what kind of person?';
    const messages = [
      makeMessage(3, 'A special envoy of Guatemala has brought the condolences of his Government on the death of President Garfield.', 35),
      makeMessage(9, 'The harbor improvements at Galveston are nearly complete.', 30),
      makeMessage(7, 'President Garfield fell a victim to the revengeful vanity of a disappointed office-seeker.', 25),
    ];

    // Act
    const result = await reader.reason({ question, messages, force: false });

    // Assert
    expect(result.answerable).toBe(true);
    expect(result.answer).toContain('disappointed office-seeker');
    expect(result.citedMessageIds).toEqual(['r1-c3', 'r1-c7']);
  });

  it('answers a comparison with the alternative that comes first in corpus order', async () => {
    // Arrange: the later-reported event's message ranks first in the pool.
    const reader = new ExtractiveReader();
    const question =
      "Which was reported in an earlier annual message: the sloop of war Cyane firing on Greytown, or the 'sad and bloody occurrences at Harpers Ferry'?";
    const messages = [
      makeMessage(74, 'I shall not refer in detail to the recent sad and bloody occurrences at Harpers Ferry.', 40),
      makeMessage(66, 'The sloop of war Cyane was ordered to Greytown. The Cyane at length fired upon the town.', 33),
    ];

    // Act
    const result = await reader.reason({ question, messages, force: false });

    // Assert
    expect(result.answerable).toBe(true);
    expect(result.answer).toBe('the sloop of war Cyane firing on Greytown');
    expect(result.citedMessageIds).toEqual(expect.arrayContaining(['r1-c66', 'r1-c74']));
  });

  it('waits for the other alternative of a comparison before answering', async () => {
    // Arrange
    const reader = new ExtractiveReader();
    const question = 'Who was honored in an earlier address: home run king Hank Aaron, or Army Ranger Cory Remsburg?';
    const messages = [makeMessage(279, 'I first met Cory Remsburg, a proud Army Ranger, at Omaha Beach.', 39)];

    // Act
    const result = await reader.reason({ question, messages, force: false });

    // Assert
    expect(result.answerable).toBe(false);
  });

  it('gives the same answer for the same request', async () => {
    // Arrange
    const request = { question: CHEROKEE_QUESTION, messages: [makeMessage(0, CHEROKEE_SENTENCE, 25)], force: false };

    // Act
    const first = await new ExtractiveReader().reason(request);
    const second = await new ExtractiveReader().reason(request);

    // Assert
    expect(second).toEqual(first);
  });
});

describe('question analysis', () => {
  it('splits a comparison question into its alternatives and the order it asks for', () => {
    // Act
    const analysis = analyzeQuestion('Who was born first, Arthur Conan Doyle or Penelope Lively?');

    // Assert
    expect(analysis.alternatives.map((a) => a.text)).toEqual(['Arthur Conan Doyle', 'Penelope Lively']);
    expect(analysis.order).toBe('first');
  });

  it('does not treat an "or" inside a clause as alternatives', () => {
    // Act
    const analysis = analyzeQuestion(
      "A later president quoted, in his own annual message, the words about nobly saving or meanly losing 'the last best hope of earth'. How many years separated them?",
    );

    // Assert
    expect(analysis.alternatives).toEqual([]);
    expect(analysis.parts).toHaveLength(2);
  });
});

/** Sentences as plain objects (a stored analysis's sentences make their sets on first use). */
const plain = (sentences: readonly AnalyzedSentence[] | undefined) =>
  sentences?.map(({ start, end, text, position, terms, names }) => ({ start, end, text, position, terms, names }));

describe('the sentence analysis kept with the chunk cache', () => {
  const text =
    'The Cherokees living in five villages on the Tennessee River were known as the Chickamaugas. ' +
    'Mr. Jefferson wrote to Congress about it in 1791.\n\nThe harbour of Baltimore was deepened. 中文句子。Another line.';

  it('reads back exactly what analyzeText gives', () => {
    const analyzed = analyzeText(text);
    expect(plain(parseAnalysis(text, serializeAnalysis(analyzed)))).toEqual(plain(analyzed));
  });

  it('is made on the first seek of a chunk and read by later seeks, with the same replies', async () => {
    // Arrange
    const dir = mkdtempSync(path.join(tmpdir(), 'extagents-analysis-'));
    try {
      const blobs = new FsBlobStore(dir);
      const reader = new ExtractiveReader({}, { analyses: blobs });
      const request = {
        question: 'By what name were the Cherokees of the Tennessee River villages known?',
        chunk: makeChunk(0, text),
        round: 1,
        synchronized: [],
      };
      // Act
      const first = await reader.seek(request);
      const stored = await blobs.getText(analysisKey(text));
      const third = await reader.seek(request);
      await blobs.put(analysisKey(text), serializeAnalysis([]));
      const emptied = await reader.seek(request);
      // Assert: the stored analysis is the chunk's, later seeks read it (same reply; an analysis
      // emptied in the store finds nothing, so it was not made again)
      expect(plain(parseAnalysis(text, stored))).toEqual(plain(analyzeText(text)));
      expect(first.evidence).toContain('Chickamaugas');
      expect(third).toEqual(first);
      expect(first).toEqual(await new ExtractiveReader().seek(request));
      expect(emptied.evidence).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  /** A reader over `blobs` that counts the chunk texts it analyzes. */
  const countingReader = (blobs: FsBlobStore): { reader: ExtractiveReader; analyses: () => number } => {
    let analyses = 0;
    const analyze = (chunkText: string): AnalyzedSentence[] => {
      analyses += 1;
      return analyzeText(chunkText);
    };
    return { reader: new ExtractiveReader({}, { analyses: blobs, analyze }), analyses: () => analyses };
  };
  const request = {
    question: 'By what name were the Cherokees of the Tennessee River villages known?',
    chunk: makeChunk(0, text),
    round: 1,
    synchronized: [],
  };
  const withStore = async (body: (blobs: FsBlobStore) => Promise<void>): Promise<void> => {
    const dir = mkdtempSync(path.join(tmpdir(), 'extagents-analysis-'));
    try {
      await body(new FsBlobStore(dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('a warm run (another reader over the same store) analyzes and indexes nothing', async () => {
    await withStore(async (blobs) => {
      // Arrange: a cold run fills the cache
      const cold = countingReader(blobs);
      const first = await cold.reader.seek(request);
      // Act: a warm run over the same chunk, two questions
      const warm = countingReader(blobs);
      const again = await warm.reader.seek(request);
      await warm.reader.seek({ ...request, question: 'What did Mr. Jefferson write to Congress about?' });
      // Assert: one analysis in all, made by the cold run; ranking reads the analysis alone (no index: SentenceIndex holds only it)
      expect(cold.analyses()).toBe(1);
      expect(warm.analyses()).toBe(0);
      expect(again).toEqual(first);
    });
  });

  it.each([
    ['not JSON', '[[0, 10, "chero'],
    ['another shape', '{"sentences": []}'],
    ['a row of another shape', '[[0, 10, "a b"]]'],
    ['offsets past the text', `[[0, ${text.length + 5}, "cheroke", ""]]`],
    ['offsets out of order', '[[50, 60, "a", ""], [10, 20, "b", ""]]'],
    ['an empty file', ''],
  ])('a corrupt entry (%s) is analyzed again and overwritten, not read and not fatal', async (_what, body) => {
    await withStore(async (blobs) => {
      // Arrange
      await blobs.put(analysisKey(text), body);
      const { reader, analyses } = countingReader(blobs);
      // Act
      const reply = await reader.seek(request);
      // Assert
      expect(reply).toEqual(await new ExtractiveReader().seek(request));
      expect(analyses()).toBe(1);
      expect(plain(parseAnalysis(text, await blobs.getText(analysisKey(text))))).toEqual(plain(analyzeText(text)));
    });
  });

  it('is kept under the analysis version and a fingerprint of its dependencies, so an entry of another reader is never read', async () => {
    await withStore(async (blobs) => {
      // Arrange: an entry under the key of the version before (an analysis that finds nothing)
      const sha = createHash('sha256').update(text).digest('hex');
      await blobs.put(`cache/extractive/v${ANALYSIS_VERSION - 1}/${sha}.json`, serializeAnalysis([]));
      await blobs.put(`cache/extractive/v${ANALYSIS_VERSION}/${sha}.json`, serializeAnalysis([]));
      // Act
      const reply = await new ExtractiveReader({}, { analyses: blobs }).seek(request);
      // Assert
      expect(analysisKey(text)).toBe(`cache/extractive/v${ANALYSIS_VERSION}-${analysisFingerprint()}/${sha}.json`);
      expect(analysisFingerprint()).toMatch(/^[0-9a-f]{12}$/);
      expect(reply.evidence).toContain('Chickamaugas');
    });
  });

  it('pins the analysis of a whole address to ANALYSIS_VERSION (a change of the analysis must bump it, so no stale entry is read)', () => {
    const address = readFileSync(path.join(__dirname, '..', '..', 'node_modules', '@stdlib', 'datasets-sotu', 'data', '1863_abraham_lincoln_r.txt'), 'utf8');
    const digest = createHash('sha256')
      .update(serializeAnalysis(analyzeText(address)))
      .digest('hex')
      .slice(0, 16);
    // On a failure: the analysis changed. Changed by the code of shared/extractive: bump ANALYSIS_VERSION
    // (shared/extractive/relevance.ts) and pin the three anew. Changed with the fingerprint (another Node's
    // ICU, another stemmer or stop-word list): the cache key changes by itself; pin the fingerprint and digest anew.
    expect({ version: ANALYSIS_VERSION, fingerprint: analysisFingerprint(), digest }).toEqual({
      version: 3,
      fingerprint: 'e805159ffcbe',
      digest: '5f68a65855fc8b82',
    });
  });
});
