import {
  clampScore,
  extractJsonObject,
  isRefusal,
  junkAnswer,
  parseReasonReply,
  parseScore,
  parseSeekReply,
  readIds,
  readScore,
  restatesQuestion,
} from '../../shared/llm/parse';
import { NO_ANSWER } from '../../shared/types';

describe('parseScore', () => {
  it.each([
    ['**Score:** 90', 90],
    ['**Score**: 85', 85],
    ['Score：80', 80],
    ['score: 70', 70],
    ['75/100', 75],
    ['150', 100],
    ['Relevance score (0-100): 65', 65],
    ['- Score: 8/10', 80],
    ['分数：60', 60],
    ['Score: 85%', 85],
    ['Score: -5', 0],
    ['{"score": 42}', 42],
    ['  **90**  ', 90],
  ])('reads %j as %i', (text, expected) => {
    // Arrange / Act
    const score = parseScore(text);

    // Assert
    expect(score).toBe(expected);
  });

  it('takes the last score line when the reply has several', () => {
    const score = parseScore('Score: 20\nOn reflection the chunk names the bridge.\nScore: 75');

    expect(score).toBe(75);
  });

  it.each([
    ['no score at all', 'The chunk mentions the Eiffel Tower was completed in 1889.'],
    ['a score word inside a sentence', 'The final score was 3-1 after extra time.'],
    ['an empty reply', ''],
    ['a fraction inside a sentence', 'About 3/10 of the population lived in the city.'],
  ])('returns null for %s', (_label, text) => {
    expect(parseScore(text)).toBeNull();
  });
});

describe('clampScore', () => {
  it('clamps, rounds and reads fractions of one as percentages', () => {
    expect(clampScore(150)).toBe(100);
    expect(clampScore(-3)).toBe(0);
    expect(clampScore(72.6)).toBe(73);
    expect(clampScore(0.85)).toBe(85);
    expect(clampScore(0)).toBe(0);
  });

  it('gives no score for numbers without a clear meaning', () => {
    expect(clampScore(Number.NaN)).toBeNull();
    expect(clampScore(Number.POSITIVE_INFINITY)).toBeNull();
  });
});

describe('numbers with an exponent and out-of-range scores (issue 9, defect 3)', () => {
  it.each([
    ['Score: 1e9', 100, 'relevance score 1e9 out of 0-100; clamped to 100'],
    ['Score: 2.5e2', 100, 'relevance score 2.5e2 out of 0-100; clamped to 100'],
    ['Score: 7.5e1', 75, undefined],
    ['Score: 250', 100, 'relevance score 250 out of 0-100; clamped to 100'],
    ['Score: -5', 0, 'relevance score -5 out of 0-100; clamped to 0'],
    ['1889', 100, 'relevance score 1889 out of 0-100; clamped to 100'],
    ['{"score": 1e3}', 100, 'relevance score 1e3 out of 0-100; clamped to 100'],
    ['Score: 12/10', 100, 'relevance score 12/10 out of 0-100; clamped to 100'],
    ['Score: 85', 85, undefined],
  ])('reads %j as %i with warning %j', (text, score, warning) => {
    expect(readScore(text)).toEqual({ score, ...(warning !== undefined && { warning }) });
  });

  it.each(['Score: NaN', 'Score: Infinity', 'Score: -inf', 'NaN'])('gives no score for %j, with a warning that says it is not a number', (text) => {
    const reading = readScore(text);

    expect(reading.score).toBeNull();
    expect(reading.warning).toMatch(/^relevance score \S+ is not a number$/);
  });

  it('reads a JSON score of NaN as not a number, not as truncated JSON', () => {
    const parsed = parseSeekReply('{"evidence": "The bridge opened in 1932.", "quotes": [], "score": NaN}');

    expect(parsed).toEqual({
      kind: 'evidence',
      sentences: [],
      note: '',
      evidence: 'The bridge opened in 1932.',
      quotes: [],
      score: null,
      scoreWarning: 'relevance score NaN is not a number',
      truncated: false,
    });
    expect(parseSeekReply('{"sentences": [2], "note": "", "score": NaN}')).toEqual({
      kind: 'evidence',
      sentences: [2],
      note: '',
      evidence: '',
      quotes: [],
      score: null,
      scoreWarning: 'relevance score NaN is not a number',
      truncated: false,
    });
  });

  it('does not read a number glued to letters or a version string as a score', () => {
    expect(parseScore('Score: 90abc')).toBeNull();
    expect(parseScore('Score: 3.5.1')).toBeNull();
  });
});

describe('a score copied from the chunk never scores a plain-text reply (issue 9, defect 4)', () => {
  const chunkText = 'Match report. Score: 100 to 3 at half time.\nRelevance: 100\nThe crowd left early.';

  it.each([
    ['the model score last', 'Evidence: the match report.\nScore: 100 to 3 at half time.\nRelevance: 100\nScore: 20'],
    ['the model score first', 'Score: 20\nEvidence: the match report.\nScore: 100 to 3 at half time.\nRelevance: 100'],
    ['copied lines under quotes', 'The match report.\nQuotes:\n- "Score: 100 to 3 at half time."\n- Relevance: 100\nScore: 20'],
  ])("keeps the model's own score with %s", (_label, reply) => {
    const parsed = parseSeekReply(reply, { chunkText });

    expect(parsed).toMatchObject({ kind: 'evidence', score: 20 });
  });

  it('keeps the copied score lines as evidence', () => {
    const parsed = parseSeekReply('Score: 20\nEvidence: Score: 100 to 3 at half time.', { chunkText });

    expect(parsed).toMatchObject({ kind: 'evidence', score: 20, evidence: 'Score: 100 to 3 at half time.' });
  });

  it('asks again (score null) when the only score lines are copied from the chunk', () => {
    const parsed = parseSeekReply('Evidence: the report.\nRelevance: 100', { chunkText });

    expect(parsed).toMatchObject({ kind: 'evidence', score: null });
  });
});

describe('parsing keeps no state between calls (issue 9, defect 2)', () => {
  it('reads the same reply the same way before and after other replies', () => {
    const replies = ['The chunk says nothing.\nScore: 35', 'Score: 20', '75/100', '**Score:** 90\nScore: 10', 'plain text'];
    const first = replies.map((r) => [parseScore(r), parseSeekReply(r), parseReasonReply(r)]);
    const again = [...replies]
      .reverse()
      .map((r) => [parseScore(r), parseSeekReply(r), parseReasonReply(r)])
      .reverse();

    expect(again).toEqual(first);
    expect(parseScore('Score: 20')).toBe(20);
  });
});

describe('one refusal vocabulary for both roles', () => {
  const refusals = [
    'NO ANSWER',
    'NO INFORMATION',
    'n/a',
    'N/A',
    'None',
    'none.',
    '**Unknown**',
    'No relevant information found in the chunk.',
    'There is no answer',
    'Not mentioned',
    'Cannot be determined.',
    '"not applicable"',
  ];
  const answers = ['Casino info', 'Reno information desk', 'None of the three bridges survived.', 'Nonesuch Press', 'Known unknowns', 'No. 5', 'Noan Swer'];

  it.each(refusals)('%j is a refusal for the seeking agent and for the reasoning agent', (text) => {
    expect(isRefusal(text)).toBe(true);
    expect(parseSeekReply(text)).toEqual({ kind: 'no_information' });
    expect(parseSeekReply(JSON.stringify({ evidence: text, quotes: [], score: 50 }))).toEqual({ kind: 'no_information' });
    expect(parseReasonReply(text)).toMatchObject({ kind: 'answer', answerable: false, answer: NO_ANSWER });
    expect(parseReasonReply(JSON.stringify({ answerable: true, answer: text, cited: [] }))).toMatchObject({ answerable: false, answer: NO_ANSWER });
  });

  it.each(answers)('%j is not a refusal for either role (whole values only, never a substring)', (text) => {
    expect(isRefusal(text)).toBe(false);
    expect(parseSeekReply(JSON.stringify({ evidence: text, quotes: [], score: 50 }))).toMatchObject({ kind: 'evidence', evidence: text });
    expect(parseReasonReply(JSON.stringify({ answerable: true, answer: text, cited: [] }))).toMatchObject({ answerable: true, answer: text });
  });
});

describe('extractJsonObject', () => {
  it('finds an object wrapped in prose and keeps the prose as the rest', () => {
    const found = extractJsonObject('Here is my answer: {"evidence": "A {nested} brace", "score": 3} Hope it helps.');

    expect(found?.value).toEqual({ evidence: 'A {nested} brace', score: 3 });
    expect(found?.complete).toBe(true);
    expect(found?.rest).toBe('Here is my answer:\nHope it helps.');
  });

  it('reads a ```json fence before any other brace', () => {
    const found = extractJsonObject('Set {a, b} first.\n```json\n{"score": 12}\n```');

    expect(found?.value).toEqual({ score: 12 });
  });

  it('accepts raw newlines inside strings, which strict JSON forbids', () => {
    const found = extractJsonObject('{"evidence": "line one\nline two\ttabbed", "score": 5}');

    expect(found?.value.evidence).toBe('line one\nline two\ttabbed');
  });

  it('salvages only complete fields of a cut-off object', () => {
    const found = extractJsonObject('{"evidence": "Complete.", "quotes": ["First quote.", "Second qu');

    expect(found?.complete).toBe(false);
    expect(found?.value).toEqual({ evidence: 'Complete.', quotes: ['First quote.'] });
  });

  it('skips braces in prose that are not JSON and finds the object after them', () => {
    const found = extractJsonObject('The set {a, b} is small. {"evidence": "x is y", "score": 5}');

    expect(found?.value).toEqual({ evidence: 'x is y', score: 5 });
    expect(found?.complete).toBe(true);
  });

  it('returns null when there is no object', () => {
    expect(extractJsonObject('just words, no braces')).toBeNull();
  });
});

describe('parseSeekReply', () => {
  it('reads the requested JSON format: sentence ids, a note and a score', () => {
    const parsed = parseSeekReply('{"sentences": [5, 2], "note": "He is Joseph Strauss.", "score": 75}');

    expect(parsed).toEqual({ kind: 'evidence', sentences: [5, 2], note: 'He is Joseph Strauss.', evidence: '', quotes: [], score: 75, truncated: false });
  });

  it('reads sentence ids written as strings or one list, keeping positive integers only, distinct, in reply order', () => {
    const parsed = parseSeekReply('{"sentences": ["[3]", "s4", "2, 5", 0, -1, 2.5, 3, 4], "note": "", "score": 50}');

    expect(parsed).toMatchObject({ kind: 'evidence', sentences: [3, 4, 2, 5], score: 50 });
    expect(parseSeekReply('{"sentences": 3, "note": "", "score": 50}')).toMatchObject({ kind: 'evidence', sentences: [3] });
  });

  it('says which items it did not read as sentence ids, never reading them as other ids', () => {
    const parsed = parseSeekReply('{"sentences": [0, -1, 2.5, 3, "1e3, 0x2", 9007199254740993], "note": "", "score": 50}');

    expect(parsed).toMatchObject({ kind: 'evidence', sentences: [3] });
    expect(parsed.kind === 'evidence' && parsed.idWarning).toMatch(/not sentence numbers.*"0".*"-1".*"2.5".*"1e3".*"0x2"/);
  });

  it('reads ranges as every id between them, and nested lists flattened', () => {
    expect(readIds('2-4')).toEqual({ ids: [2, 3, 4], dropped: [] });
    expect(readIds('2 to 4, 7')).toEqual({ ids: [2, 3, 4, 7], dropped: [] });
    expect(readIds('1–2 and 5')).toEqual({ ids: [1, 2, 5], dropped: [] });
    expect(readIds([[1, [2]], '3'])).toEqual({ ids: [1, 2, 3], dropped: [] });
    expect(readIds('1-400')).toEqual({ ids: [1, 400], dropped: ['1-400'] });
  });

  it('asks again (empty, with the warning) when every cited id is unreadable, instead of reading "no information"', () => {
    const parsed = parseSeekReply('{"sentences": [0, -2], "note": "", "score": 80}');

    expect(parsed).toMatchObject({ kind: 'empty', idWarning: expect.stringMatching(/"0", "-2"/) });
  });

  it('reads a Sentences label in mid-line as the ids, the words before it as the note', () => {
    const parsed = parseSeekReply('The chief engineer is named in Sentences: 2-3\nScore: 75');

    expect(parsed).toMatchObject({ kind: 'evidence', sentences: [2, 3], note: 'The chief engineer is named in', evidence: '', score: 75 });
  });

  it.each([
    ['no sentence', '{"sentences": [], "note": "", "score": 0}'],
    ['no sentence but a note (a note alone is not evidence)', '{"sentences": [], "note": "The bridge opened in 1937.", "score": 50}'],
    ['no sentence and a refusal note', '{"sentences": [], "note": "NO INFORMATION", "score": 0}'],
  ])('reads a reply citing %s as no information', (_label, reply) => {
    expect(parseSeekReply(reply)).toEqual({ kind: 'no_information' });
  });

  it('drops a note that only says there is nothing, keeping the cited sentences', () => {
    expect(parseSeekReply('{"sentences": [1], "note": "NO INFORMATION", "score": 100}')).toMatchObject({ kind: 'evidence', sentences: [1], note: '' });
  });

  it('salvages the complete ids of a truncated reply and drops an id cut at the end', () => {
    expect(parseSeekReply('{"sentences": [1, 2], "note": "He is Str')).toEqual({
      kind: 'evidence',
      sentences: [1, 2],
      note: '',
      evidence: '',
      quotes: [],
      score: null,
      truncated: true,
    });
    // "2" may be the start of "23": a number cut at the end is not an id.
    expect(parseSeekReply('{"sentences": [1, 2')).toMatchObject({ kind: 'evidence', sentences: [1], truncated: true });
  });

  it('reads the score of a reply citing sentences from the field, never from the prose after it', () => {
    expect(parseSeekReply('{"sentences": [1], "note": "", "score": 60}\nScore: 10')).toMatchObject({ score: 60 });
    expect(parseSeekReply('{"sentences": [1], "note": ""}\nScore: 10')).toMatchObject({ score: 10 });
    expect(parseSeekReply('{"sentences": [1], "note": ""}')).toMatchObject({ kind: 'evidence', score: null });
  });

  it.each([
    ['English labels', 'Sentences: 2, 5\nNote: he is Strauss\nScore: 75', [2, 5], 'he is Strauss', 75],
    ['markdown labels and bracketed ids', '**Selected sentences:** [2], [4]\n**Score:** 100', [2, 4], '', 100],
    ['sentence ids and a refusal note', 'Sentence ids: 3\nNote: none\nScore: 25', [3], '', 25],
    ['Chinese labels', '句子：1，3\n分数：60', [1, 3], '', 60],
  ])('reads a prose reply with a sentences line (%s)', (_label, reply, sentences, note, score) => {
    expect(parseSeekReply(reply)).toEqual({ kind: 'evidence', sentences, note, evidence: '', quotes: [], score, truncated: false });
  });

  it('keeps a sentences line copied from the chunk as free-form evidence, not as ids', () => {
    const parsed = parseSeekReply('Sentences: 1\nScore: 40', { chunkText: 'Table of contents.\nSentences: 1\nOther.' });

    expect(parsed).toMatchObject({ kind: 'evidence', sentences: [], evidence: 'Sentences: 1', score: 40 });
  });

  it('reads the free form of a provider that ignores the format', () => {
    const parsed = parseSeekReply('{"evidence": "The bridge opened in 1932.", "quotes": ["It opened in 1932."], "score": 88}');

    expect(parsed).toEqual({
      kind: 'evidence',
      sentences: [],
      note: '',
      evidence: 'The bridge opened in 1932.',
      quotes: ['It opened in 1932.'],
      score: 88,
      truncated: false,
    });
  });

  it('reads JSON inside a ```json fence surrounded by prose', () => {
    const reply = 'Sure! Here is the extraction:\n```json\n{"evidence": "Ada was born in London.", "quotes": [], "score": 70}\n```\nLet me know.';

    const parsed = parseSeekReply(reply);

    expect(parsed).toMatchObject({ kind: 'evidence', evidence: 'Ada was born in London.', score: 70 });
  });

  it('clamps an out-of-range JSON score and accepts a score given as a string', () => {
    expect(parseSeekReply('{"evidence": "x is y", "score": 150}')).toMatchObject({ score: 100 });
    expect(parseSeekReply('{"evidence": "x is y", "score": "80/100"}')).toMatchObject({ score: 80 });
  });

  it('reads a score written after the JSON object in prose', () => {
    const parsed = parseSeekReply('{"evidence": "Ada wrote the first program."}\n**Score:** 90');

    expect(parsed).toMatchObject({ kind: 'evidence', score: 90 });
  });

  it('salvages a truncated object: complete evidence and quotes kept, a cut score dropped', () => {
    const parsed = parseSeekReply('{"evidence": "Ada Lovelace worked with Babbage.", "quotes": ["She worked with Babbage."], "score": 9');

    expect(parsed).toEqual({
      kind: 'evidence',
      sentences: [],
      note: '',
      evidence: 'Ada Lovelace worked with Babbage.',
      quotes: ['She worked with Babbage.'],
      score: null,
      truncated: true,
    });
  });

  it('reports nothing usable when the object is cut inside the evidence', () => {
    expect(parseSeekReply('{"evidence": "Ada Lovelace worked wi')).toEqual({ kind: 'empty', truncated: true });
    expect(parseSeekReply('```json\n{"evidence": "Ada Lovelace worked wi')).toEqual({ kind: 'empty', truncated: true });
  });

  it('signals a re-ask (score null) when the reply has evidence but no score', () => {
    const parsed = parseSeekReply('{"evidence": "The treaty was signed in Paris.", "quotes": []}');

    expect(parsed).toMatchObject({ kind: 'evidence', score: null });
  });

  it.each([
    ['the JSON flag', '{"no_information": true}'],
    ['the JSON flag as a string', '{"no_information": "true"}'],
    ['the official marker', 'NO INFORMATION'],
    ['a sentence of nothing found', 'There is no relevant information in this chunk.'],
    ['empty evidence in complete JSON', '{"evidence": "", "quotes": [], "score": 0}'],
    ['evidence that says nothing was found', '{"evidence": "No relevant information.", "score": 0}'],
  ])('recognises "no information" from %s', (_label, reply) => {
    expect(parseSeekReply(reply)).toEqual({ kind: 'no_information' });
  });

  it('reads plain text with an evidence label, a quotes section and a markdown score line', () => {
    const reply = [
      '**Evidence:** The Golden Gate Bridge opened in 1937.',
      'Quotes:',
      '- "The bridge opened to traffic in May 1937."',
      '',
      '**Score:** 90',
    ].join('\n');

    const parsed = parseSeekReply(reply);

    expect(parsed).toEqual({
      kind: 'evidence',
      sentences: [],
      note: '',
      evidence: 'The Golden Gate Bridge opened in 1937.',
      quotes: ['The bridge opened to traffic in May 1937.'],
      score: 90,
      truncated: false,
    });
  });

  it('keeps a sentence about a game score as evidence, not as the relevance score', () => {
    const parsed = parseSeekReply('The final score was 3-1 after extra time.\nScore：80');

    expect(parsed).toMatchObject({ kind: 'evidence', evidence: 'The final score was 3-1 after extra time.', score: 80 });
  });

  it('treats an empty or whitespace reply as nothing usable', () => {
    expect(parseSeekReply('   \n ')).toEqual({ kind: 'empty', truncated: false });
  });

  it('treats a reply that is only a score as having no evidence', () => {
    expect(parseSeekReply('75/100')).toEqual({ kind: 'empty', truncated: false });
  });
});

describe('parseReasonReply', () => {
  it('reads a structured answer with citations', () => {
    const parsed = parseReasonReply('{"answerable": true, "answer": "Paris", "cited": ["r1-c12", "r2-c3"]}');

    expect(parsed).toEqual({ kind: 'answer', answerable: true, answer: 'Paris', cited: ['r1-c12', 'r2-c3'], truncated: false });
  });

  it('reads the reply in the order asked (answer first), and the forced form without answerable as an answer', () => {
    expect(parseReasonReply('{"answer": "Paris", "cited": ["r1-c12"], "answerable": true}')).toEqual({
      kind: 'answer',
      answerable: true,
      answer: 'Paris',
      cited: ['r1-c12'],
      truncated: false,
    });
    expect(parseReasonReply('{"answer": "Paris", "cited": ["r1-c12"]}')).toEqual({
      kind: 'answer',
      answerable: true,
      answer: 'Paris',
      cited: ['r1-c12'],
      truncated: false,
    });
    expect(parseReasonReply('{"answer": "maybe Paris", "cited": [], "answerable": false}')).toMatchObject({ answerable: false, answer: NO_ANSWER });
  });

  it('reads a structured refusal', () => {
    const parsed = parseReasonReply('{"answerable": false, "answer": "NO ANSWER", "cited": []}');

    expect(parsed).toEqual({ kind: 'answer', answerable: false, answer: NO_ANSWER, cited: [], truncated: false });
  });

  it('refuses for answerable "false" given as a string even with an answer text', () => {
    expect(parseReasonReply('{"answerable": "false", "answer": "maybe Paris"}')).toMatchObject({ answerable: false, answer: NO_ANSWER });
  });

  it.each(['NO ANSWER', 'no answer', '**NO ANSWER**', '"NO ANSWER."'])('refuses for the exact marker %j on its own', (reply) => {
    expect(parseReasonReply(reply)).toMatchObject({ kind: 'answer', answerable: false, answer: NO_ANSWER });
  });

  it.each(['Casino info', 'Reno information desk', 'The clerk gave NO ANSWER to the court', 'Nobody answered'])(
    'answers %j: refusal is never a substring match',
    (reply) => {
      expect(parseReasonReply(reply)).toMatchObject({ kind: 'answer', answerable: true, answer: reply });
    },
  );

  it('answers when the JSON answer merely contains the words "no answer"', () => {
    const parsed = parseReasonReply('{"answerable": true, "answer": "The letter got no answer", "cited": ["r1-c1"]}');

    expect(parsed).toMatchObject({ answerable: true, answer: 'The letter got no answer' });
  });

  it('refuses when the JSON answer is the marker even without answerable', () => {
    expect(parseReasonReply('{"answer": "NO ANSWER"}')).toMatchObject({ answerable: false });
  });

  it('reads plain text with an answer label, inline id tags and a citation line', () => {
    const parsed = parseReasonReply('**Answer:** Ada Lovelace [r1-c4]\nCited: r1-c4, r2-c9');

    expect(parsed).toEqual({ kind: 'answer', answerable: true, answer: 'Ada Lovelace', cited: ['r1-c4', 'r2-c9'], truncated: false });
  });

  it('reads a JSON answer wrapped in prose and a fence', () => {
    const parsed = parseReasonReply('Based on the messages:\n```json\n{"answerable": true, "answer": "1937", "cited": ["r1-c2"]}\n```');

    expect(parsed).toMatchObject({ answerable: true, answer: '1937', cited: ['r1-c2'] });
  });

  it('salvages a truncated answer whose answer field is complete', () => {
    const parsed = parseReasonReply('{"answerable": true, "answer": "1937", "cited": ["r1-c2", "r1-c');

    expect(parsed).toEqual({ kind: 'answer', answerable: true, answer: '1937', cited: ['r1-c2'], truncated: true });
  });

  it('reports nothing usable for an empty reply or an answer cut in the middle', () => {
    expect(parseReasonReply('')).toEqual({ kind: 'empty', truncated: false });
    expect(parseReasonReply('{"answerable": true, "answer": "Ada Lov')).toEqual({ kind: 'empty', truncated: true });
  });
});

describe('parsing is a pure function of its input (no regex state between calls)', () => {
  it('reads "Score: 20" the same after a plain-text reply with a score line', () => {
    expect(parseScore('Score: 20')).toBe(20);
    parseSeekReply('Evidence: the bridge opened in 1937.\nScore: 90');
    expect(parseScore('Score: 20')).toBe(20);
    parseSeekReply('Evidence: x\n75/100');
    expect(parseScore('Score: 20')).toBe(20);
    expect(parseSeekReply('Evidence: the bridge opened in 1937.\nScore: 90')).toMatchObject({ kind: 'evidence', score: 90 });
  });
});

describe('junkAnswer: answers that answer nothing, by shape, in any language', () => {
  it.each([
    ['The answer is', 'Who wrote it?', 'preamble'],
    ['Answer:', 'Who wrote it?', 'preamble'],
    ['the final answer is:', 'Who wrote it?', 'preamble'],
    ['Who wrote "The Hukilau Song"?', 'who wrote the Hukilau Song', 'question'],
    ['深水埗关帝庙最初的名称是什么？', '深水埗关帝庙最初的名称是什么?', 'question'],
    ['No, no, no, no, no, no, no, no, no, no, no, no', 'Is it?', 'loop'],
    ['The answer is that the answer is that the answer is that the answer is that', 'Which one?', 'loop'],
    ['<messages>', 'Who wrote it?', 'markup'],
    ['</messages> .', '谁写的？', 'markup'],
  ])('%j (question %j) is %s', (answer, question, reason) => {
    expect(junkAnswer(answer, question)).toBe(reason);
  });

  it.each([
    ['May 1937', 'When did it open?'],
    ['no', 'Are both American?'],
    ['Georg Philipp Telemann', 'Who composed the sonata?'],
    ['协天宫', '深水埗关帝庙最初的名称是什么？'],
    ['The answer is Telemann', 'Who composed it?'],
    ['The W. H. Shipman House is in Hilo, Hawaii, which is the largest settlement on the island', 'Where is the house?'],
    ['Jonny Craig and Pete Doherty have been a part of more bands than Pete Doherty', 'Who has been in more bands?'],
    ['<b>Telemann</b>', 'Who composed it?'],
    ['2 < 3', 'Is two less than three?'],
  ])('%j (question %j) may be an answer', (answer, question) => {
    expect(junkAnswer(answer, question)).toBeUndefined();
  });
});

describe('restatesQuestion: an answer that adds nothing to its question', () => {
  it.each([
    ['VIVA Media', "VIVA Media AG changed it's name in 2004. What does their new acronym stand for?"],
    ['Teen Titans Spinoff', 'Who voiced her in what Teen Titans spinoff series?'],
    ['the magazines', "Woman's Era and Naj are what kind of magazines?"],
    ['2014', 'Which footballer did Ronald Koeman replace in 2014?'],
    ['中国', '中国的首都是哪里？'],
  ])('%j restates %j', (answer, question) => {
    expect(restatesQuestion(answer, question)).toBe(true);
  });

  it.each([
    ['Gesellschaft mit beschränkter Haftung', "VIVA Media AG changed it's name in 2004. What does their new acronym stand for?"],
    ['Jonny Craig', 'Which of Jonny Craig and Pete Doherty has been a member of more bands?'],
    ["Arthur's Magazine", "Which magazine was started first, Arthur's Magazine or First for Women?"],
    ['German', 'The game between Idaho and Montana: from which European culture is its trophy derived?'],
    ['yes', 'Is Paris the capital of France?'],
    ['the', 'What is the capital?'],
    ['北京', '中国的首都是哪里？'],
    ['北京', '首都是北京还是上海？'],
    ['Paris, France', 'What is the capital of France?'],
  ])('%j adds to %j, or the question offers it as a choice', (answer, question) => {
    expect(restatesQuestion(answer, question)).toBe(false);
  });
});
