import { CallMemo } from '../../eval/strategies/memo';
import { DEFAULT_STRATEGY_OPTIONS, STRATEGY_FUNCTIONS } from '../../eval/strategies';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../../shared/ports';
import { countTokens } from '../../shared/tokenizer';
import { NO_ANSWER, type Chunk, type SourceDocument } from '../../shared/types';

const chunk = (index: number, text: string): Chunk => ({
  index,
  tokens: countTokens(text),
  chars: text.length,
  segments: [{ documentId: `doc-${index}`, start: 0, end: text.length, chunkStart: 0 }],
  text,
});
const usage = { calls: 1, inputTokens: 10, outputTokens: 1 };

/** Seeks return the whole chunk with a fixed score per chunk; counts the calls that reach it. */
class Counted implements AgentModel {
  readonly description = 'counted';
  seeks = 0;
  reasons = 0;
  failNext = false;
  constructor(private readonly scores: number[] = [50, 50]) {}
  async seek(request: SeekRequest): Promise<SeekResult> {
    this.seeks++;
    if (this.failNext) {
      this.failNext = false;
      throw Object.assign(new Error('throttled'), { name: 'ModelThrottledError' });
    }
    const text = request.chunk.text;
    return { evidence: text, score: this.scores[request.chunk.index] ?? 0, spans: [{ start: 0, end: text.length }], usage, warnings: [] };
  }
  /** Answers with the first message's first word, so the answer shows which message ranked first. */
  async reason(request: ReasonRequest): Promise<ReasonResult> {
    this.reasons++;
    const first = request.messages[0];
    if (first === undefined) return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
    return { answerable: true, answer: first.evidence.split(' ')[0], citedMessageIds: [first.id], usage, warnings: [] };
  }
}

describe("CallMemo (the eval's --reuse-calls)", () => {
  const seek = (c: Chunk, round = 1): SeekRequest => ({ question: 'Who built the bridge?', chunk: c, round, synchronized: [] });

  test('an identical request is answered from memory, any difference reaches the model', async () => {
    const inner = new Counted();
    const memo = new CallMemo(inner);
    const a = chunk(0, 'Anna built the bridge in 1901.');
    const first = await memo.seek(seek(a));
    expect(await memo.seek(seek(a))).toBe(first);
    expect(inner.seeks).toBe(1);
    await memo.seek(seek(a, 2)); // another round
    await memo.seek({ ...seek(a), question: 'Who crossed the bridge?' }); // another question
    await memo.seek(seek(chunk(0, 'Anna built the bridge in 1902.'))); // another text
    expect(inner.seeks).toBe(4);
    const reason: ReasonRequest = { question: 'q', messages: [], force: false };
    await memo.reason(reason);
    await memo.reason(reason);
    await memo.reason({ ...reason, force: true });
    expect(inner.reasons).toBe(2);
    expect(memo.hits).toBe(2);
  });

  test('calls in flight are shared; a failed call is not remembered', async () => {
    const inner = new Counted();
    const memo = new CallMemo(inner);
    const a = chunk(0, 'Anna built the bridge.');
    const [x, y] = await Promise.all([memo.seek(seek(a)), memo.seek(seek(a))]);
    expect(x).toBe(y);
    expect(inner.seeks).toBe(1);
    const b = chunk(1, 'Ben painted it.');
    inner.failNext = true;
    await expect(memo.seek(seek(b))).rejects.toThrow('throttled');
    await expect(memo.seek(seek(b))).resolves.toMatchObject({ evidence: 'Ben painted it.' });
    expect(inner.seeks).toBe(3);
  });
});

describe('ranking ablations (in memory)', () => {
  // Chunk 0: the model's favourite (score 90) shares no word with the question; chunk 1 (score 10) does.
  const documents: SourceDocument[] = [
    { id: 'doc-0', text: 'Orchards grow apples and pears near the quiet hills.' },
    { id: 'doc-1', text: 'Anna built the bridge over the river in 1901.' },
  ];
  const run = (name: 'extagents-rank-score' | 'extagents-rank-retrieval' | 'extagents') =>
    STRATEGY_FUNCTIONS[name]({
      question: 'Who built the bridge over the river?',
      documents,
      chunks: documents.map((d, i) => chunk(i, d.text)),
      model: new Counted([90, 10]),
      options: { ...DEFAULT_STRATEGY_OPTIONS },
    });

  test("score ranks the model's favourite first; retrieval and the default (hybrid) rank the lexically relevant one first", async () => {
    expect((await run('extagents-rank-score')).prediction).toBe('Orchards');
    expect((await run('extagents-rank-retrieval')).prediction).toBe('Anna');
    expect((await run('extagents')).prediction).toBe('Anna');
  });
});
