/**
 * The CLI's text output of a result (local/cli/format.ts): what the answer is, when the reader says.
 */
import { formatResult, terminalSafe } from '../../local/cli/format';
import { NO_ANSWER, type RunResult } from '../../shared/types';

const base: RunResult = {
  runId: 'run-1',
  question: 'When did the library of Millbrook open?',
  answer: 'Its library opened in 1903.',
  answerable: true,
  citations: [],
  trace: [{ round: 1, k: 1, messagesUsed: 1, evidenceTokens: 20, outcome: 'answered' }],
  usage: { seeker: { calls: 1, inputTokens: 30, outputTokens: 10 }, reasoner: { calls: 1, inputTokens: 20, outputTokens: 8 } },
  rounds: 1,
  chunks: 1,
  poolSize: 1,
  skipped: [],
  chunkFailures: [],
  retries: { total: 0, byRole: { seeker: 0, reasoner: 0 }, byError: {} },
  warnings: [],
};

describe('terminalSafe', () => {
  it('shows control characters but line feed and tab as \\xNN (no escape sequence reaches the terminal)', () => {
    expect(terminalSafe('What about\u0001\u0007\u001b[31m taxes?\r\u007f\u009b')).toBe('What about\\x01\\x07\\x1b[31m taxes?\\x0d\\x7f\\x9b');
    expect(terminalSafe('line one\n\tline two, café 中文')).toBe('line one\n\tline two, café 中文');
  });
});

describe('formatResult', () => {
  it('says under the answer what it is, or why the reader refused, and nothing for a model that does not say', () => {
    const answered = formatResult({
      ...base,
      answerBasis: "extractive: a sentence chosen by word overlap, covering 100% of the question's weighted words (it answers from 50%)",
    });
    const refused = formatResult({
      ...base,
      answer: NO_ANSWER,
      answerable: false,
      answerBasis: "extractive: no sentence covers 50% of the question's weighted words (the best covers 31%)",
    });
    const llm = formatResult(base);

    expect(answered.split('\n').slice(1, 4)).toEqual([
      'Answer: Its library opened in 1903.',
      'Answerable: yes',
      "Answered by: extractive: a sentence chosen by word overlap, covering 100% of the question's weighted words (it answers from 50%)",
    ]);
    expect(refused.split('\n')[3]).toBe("Refused by: extractive: no sentence covers 50% of the question's weighted words (the best covers 31%)");
    expect(llm).not.toMatch(/Answered by|Refused by/);
  });

  it('says how many chunks a grow run sought, and nothing of coverage for a full read', () => {
    const grow = formatResult({ ...base, chunks: 100, coverage: { mode: 'grow', covered: 8, cap: 100, tranches: 2 } });

    expect(grow).toMatch(/^Coverage \(grow\): 8 chunks of 100 sought per round, in 2 tranches \(at most 100\)$/m);
    expect(formatResult(base)).not.toMatch(/Coverage/);
  });

  it("says the seeking agents' throttle wait is summed over chunks, not the run's wall time (issue 37 #3: 6,366 s in a 2-minute run)", () => {
    const throttled = formatResult({
      ...base,
      concurrency: {
        concurrency: 5,
        requested: 64,
        boundBy: 'requestsPerMinute',
        quota: { requestsPerMinute: 300 },
        tokensPerSeek: 1200,
        seekLatencySeconds: 1,
        byRequests: 5,
        expectedRequestsPerMinute: 300,
        expectedTokensPerMinute: 360_000,
        reasoning: [],
        warnings: [],
        throttledCalls: 412,
        throttleWaitSeconds: 6366,
      },
    });

    expect(throttled).toMatch(
      /^ {2}throttled model calls: 412 \(each retried\); seeking agents waited 6366 s in all for the retries \(summed over chunks: chunks wait side by side, so this is not the run's wall time\)$/m,
    );
  });

  it('never prints an unsupported best-effort guess as the answer: a refusal, the guess on its own line, and the trace says why', () => {
    const text = formatResult({
      ...base,
      answer: NO_ANSWER,
      answerable: false,
      unsupportedAnswer: '1000',
      trace: [
        { round: 1, k: 1, messagesUsed: 1, evidenceTokens: 20, outcome: 'unsupported' },
        { round: 1, k: 1, messagesUsed: 1, evidenceTokens: 20, outcome: 'refused', followUp: 'What did the repair cost?' },
        { round: 2, k: 1, messagesUsed: 1, evidenceTokens: 20, outcome: 'unsupported', forced: true },
      ],
    });
    expect(text).toContain('Answer: NO ANSWER\nAnswerable: no\n');
    expect(text).toContain('Unsupported guess (best effort; not in the quotes it cites, so refused): 1000');
    expect(text).toContain('round 1: k=1 unsupported, k=1 refused (follow-up: "What did the repair cost?")');
    expect(text).toContain('round 2: k=1 best-effort unsupported');
    expect(text).not.toMatch(/Answerable: (yes|best effort)/);
  });
});
