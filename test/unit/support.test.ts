/**
 * The stopping rule of knowledge-accumulating reasoning (shared/support.ts): an answer stands only
 * when its cited quotes hold it and, under karStop 'confirmed', the next step agrees.
 */
import { answerSupport, checkedVerdict, citedAmong, judgeAnswer, sameAnswer } from '../../shared/support';

const cite = (...texts: string[]) => [
  { quotes: texts.map((text, i) => ({ documentId: 'd', start: i, end: i + text.length, text })), evidence: texts.join(' ') },
];

describe('answer support (the answer must be in its cited quotes)', () => {
  it('holds an answer whose words and numbers stand in a cited quote', () => {
    expect(answerSupport('Dundee', 'Where was she born?', cite('Martha Quill was born in Dundee.'))).toEqual({ supported: true });
    expect(answerSupport('in 1871', 'When was it built?', cite('The lighthouse was built in 1871 by Martha Quill.'))).toEqual({ supported: true });
    expect(answerSupport('Hilo, Hawaii', 'Where?', cite('The house is in Hilo, on the island of Hawaii.'))).toEqual({ supported: true });
  });

  it('refuses a number no cited quote holds (a price or cost the documents do not state)', () => {
    const support = answerSupport('1000', 'What did the repair cost?', cite('The repair was approved by the board in March.'));
    expect(support).toEqual({ supported: false, reason: 'its cited quotes do not hold "1000"' });
    expect(answerSupport('23.50', 'What is the price?', cite('The circuit board costs 21.50 per unit.')).supported).toBe(false);
  });

  it('refuses words the quotes do not hold, and an answer that cites nothing', () => {
    expect(answerSupport('Edinburgh Castle', 'Where?', cite('Martha Quill was born in Dundee.')).supported).toBe(false);
    expect(answerSupport('Dundee', 'Where?', [])).toEqual({ supported: false, reason: 'it cites no message' });
  });

  it("reads the quotes, not the evidence, when a message has quotes (a seeking agent's note is not a document)", () => {
    const message = { quotes: [{ documentId: 'd', start: 0, end: 10, text: 'Rain fell.' }], evidence: 'Rain fell.\nNote: the cost was 1000' };
    expect(answerSupport('1000', 'cost?', [message]).supported).toBe(false);
    expect(answerSupport('1000', 'cost?', [{ quotes: [], evidence: 'the cost was 1000' }]).supported).toBe(true);
  });

  it('holds a yes or no, and a choice the question offers', () => {
    expect(answerSupport('yes', 'Are both bands from Leeds?', cite('The band formed in Leeds.')).supported).toBe(true);
    expect(answerSupport('Coldplay', 'Which formed first, Coldplay or Keane?', cite('The other band formed in 1997.')).supported).toBe(true);
    expect(answerSupport('Coldplay', 'Which band formed in 1997?', cite('The other band formed in 1997.')).supported).toBe(false);
  });

  it('reads Chinese by character bigrams', () => {
    expect(answerSupport('北京大学', '他在哪里读书？', cite('他毕业于北京大学中文系。')).supported).toBe(true);
    expect(answerSupport('清华大学', '他在哪里读书？', cite('他毕业于北京大学中文系。')).supported).toBe(false);
  });
});

describe('the same answer twice', () => {
  it('counts one answer inside the other, and yes against yes', () => {
    expect(sameAnswer('Hilo', 'Hilo, Hawaii')).toBe(true);
    expect(sameAnswer('in 1903', '1903')).toBe(true);
    expect(sameAnswer('Yes', 'yes, both are')).toBe(true);
    expect(sameAnswer('1903', '1910')).toBe(false);
    expect(sameAnswer('yes', 'no')).toBe(false);
    expect(sameAnswer('Dundee', 'Perth')).toBe(false);
  });
});

describe('the stopping rule', () => {
  const base = {
    question: 'In what year did the founder die?',
    cited: cite('Born 1840, he founded the firm in 1871 and died in 1903.'),
    previousAnswer: undefined,
    widest: false,
  };

  it("'first': the first supported answer stands; an unsupported one never does", () => {
    expect(judgeAnswer({ ...base, answer: '1871', rule: 'first' })).toEqual({ outcome: 'answered' });
    expect(judgeAnswer({ ...base, answer: '1000', rule: 'first' }).outcome).toBe('unsupported');
    expect(judgeAnswer({ ...base, answer: '1000', rule: 'first', widest: true }).outcome).toBe('unsupported');
  });

  it("'confirmed': an answer waits for the next step, stands when it agrees or when no wider step exists", () => {
    expect(judgeAnswer({ ...base, answer: '1871', rule: 'confirmed' }).outcome).toBe('unconfirmed');
    expect(judgeAnswer({ ...base, answer: '1903', rule: 'confirmed', previousAnswer: '1871' }).outcome).toBe('unconfirmed');
    expect(judgeAnswer({ ...base, answer: '1903', rule: 'confirmed', previousAnswer: '1903' })).toEqual({ outcome: 'answered' });
    expect(judgeAnswer({ ...base, answer: '1903', rule: 'confirmed', widest: true })).toEqual({ outcome: 'answered' });
  });

  it('cites every message given when the answer names none', () => {
    const given = [{ id: 'a' }, { id: 'b' }];
    expect(citedAmong(given, ['b'])).toEqual([{ id: 'b' }]);
    expect(citedAmong(given, [])).toEqual(given);
  });
});

describe("the sufficiency check (karStop 'checked')", () => {
  it('lets a supported answer stand unless the check says no', () => {
    expect(checkedVerdict('yes')).toEqual({ outcome: 'answered' });
    expect(checkedVerdict('unknown')).toEqual({ outcome: 'answered' });
    expect(checkedVerdict('no').outcome).toBe('unconfirmed');
  });

  it("judges a 'checked' answer by support alone before the check", () => {
    const cited = cite('Quill died in 1903.');
    expect(judgeAnswer({ answer: '1903', question: 'When?', cited, rule: 'checked', previousAnswer: undefined, widest: false })).toEqual({
      outcome: 'answered',
    });
    expect(judgeAnswer({ answer: '1000', question: 'When?', cited, rule: 'checked', previousAnswer: undefined, widest: false }).outcome).toBe('unsupported');
  });
});
