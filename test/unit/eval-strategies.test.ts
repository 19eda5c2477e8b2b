import { chunkCorpus } from '../../shared/chunking';
import { ExtractiveReader } from '../../shared/extractive';
import { evidenceRecall } from '../../eval/evidence';
import { scoreAnswer } from '../../eval/score';
import { DEFAULT_STRATEGY_OPTIONS, STRATEGY_FUNCTIONS, type StrategyInput, type StrategyOptions } from '../../eval/strategies';
import { confidenceOf } from '../../eval/strategies/mapreduce';
import { EVAL_STRATEGIES, STRATEGIES, type EvalCall } from '../../eval/records';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../../shared/ports';
import { countTokens } from '../../shared/tokenizer';
import { NO_ANSWER, type Chunk, type SourceDocument } from '../../shared/types';

/**
 * A scripted two-hop world. Chunk texts hold facts marked by keywords:
 * - "ALPHA" (first hop): found in round 1, score 80;
 * - "BRIDGE" (second hop): found only when the synchronized messages (or the note) contain ALPHA, score 60;
 * the reasoning agent answers "Paris" only when it reads both ALPHA and BRIDGE, else refuses; forced, it says GUESS, words of ALPHA's sentence (an answer its quotes hold: shared/support.ts).
 * A pseudo-chunk (official score call, mapreduce collapse) is rated 70 when it holds any fact.
 */
/** The forced answer: words of ALPHA's sentence, so the stopping rule's support check holds it. */
const GUESS = 'the city of lights';

class ScriptedModel implements AgentModel {
  readonly description = 'scripted';
  async seek(request: SeekRequest): Promise<SeekResult> {
    const text = request.chunk.text;
    const known = request.synchronized.map((m) => m.evidence).join(' ');
    const usage = {
      calls: 1,
      inputTokens: countTokens(request.question) + request.chunk.tokens + request.synchronized.reduce((s, m) => s + m.tokens, 0),
      outputTokens: 0,
    };
    const none: SeekResult = { evidence: null, score: 0, spans: [], usage, warnings: [] };
    const pseudo = request.chunk.segments.some((s) => s.documentId.startsWith('msg:'));
    if (pseudo) return /ALPHA|BRIDGE/.test(text) ? { evidence: text, score: 70, spans: [{ start: 0, end: text.length }], usage, warnings: [] } : none;
    const fact = (word: string, score: number): SeekResult | null => {
      const at = text.indexOf(word);
      if (at < 0 || known.includes(word)) return null;
      const end = text.indexOf('.', at) + 1;
      return { evidence: text.slice(at, end), score, spans: [{ start: at, end }], usage: { ...usage, outputTokens: 5 }, warnings: [] };
    };
    const alpha = fact('ALPHA', 80);
    if (alpha) return alpha;
    if (request.round >= 2 && known.includes('ALPHA')) return fact('BRIDGE', 60) ?? none;
    return none;
  }
  async reason(request: ReasonRequest): Promise<ReasonResult> {
    const all = request.messages.map((m) => m.evidence).join(' ');
    const usage = { calls: 1, inputTokens: countTokens(request.question) + request.messages.reduce((s, m) => s + m.tokens, 0), outputTokens: 1 };
    if (all.includes('ALPHA') && all.includes('BRIDGE'))
      return { answerable: true, answer: 'Paris', citedMessageIds: request.messages.map((m) => m.id), usage, warnings: [] };
    if (request.force) return { answerable: true, answer: GUESS, citedMessageIds: [], usage, warnings: [] };
    return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
  }
}

const FILLER = 'The weather report mentions rain over the hills and a quiet market day in the valley town.';
/** Five documents (FILLER is 18 tokens): ALPHA in doc-1, BRIDGE in doc-3. */
function world(): SourceDocument[] {
  return [
    { id: 'doc-0', text: FILLER },
    { id: 'doc-1', text: `${FILLER} ALPHA the founder was born in the city of lights.` },
    { id: 'doc-2', text: FILLER },
    { id: 'doc-3', text: `${FILLER} BRIDGE the city of lights is Paris.` },
    { id: 'doc-4', text: FILLER },
  ];
}

/** One chunk per document (constructed directly: the chunker would fill chunks across documents). */
function chunksOf(documents: readonly SourceDocument[]): Chunk[] {
  return documents.map((d, index) => ({
    index,
    tokens: countTokens(d.text),
    chars: d.text.length,
    segments: [{ documentId: d.id, start: 0, end: d.text.length, chunkStart: 0 }],
    text: d.text,
  }));
}

function input(options: Partial<StrategyOptions> = {}, model: AgentModel = new ScriptedModel(), documents = world()): StrategyInput {
  return { question: 'Where was the founder born?', documents, chunks: chunksOf(documents), model, options: { ...DEFAULT_STRATEGY_OPTIONS, ...options } };
}

/** Calls per stage and role, e.g. "0:seeker*5 1:reasoner*1". */
function shape(calls: EvalCall[]): string {
  const counts = new Map<string, number>();
  for (const c of calls) counts.set(`${c.stage}:${c.role}`, (counts.get(`${c.stage}:${c.role}`) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => Number(a.split(':')[0]) - Number(b.split(':')[0]) || a.localeCompare(b))
    .map(([k, n]) => `${k}*${n}`)
    .join(' ');
}

describe('evaluation strategies on a scripted two-hop corpus', () => {
  test('extagents: one seek per chunk per round, KAR k=1 then k=2 in round 2, answers with both hops', async () => {
    const result = await STRATEGY_FUNCTIONS.extagents(input());
    // round 1 seeks; KAR k=1 (pool of 1: exhausted); round 2 seeks; KAR k=1, k=2.
    expect(shape(result.calls)).toBe('0:seeker*5 1:reasoner*1 2:seeker*5 3:reasoner*1 4:reasoner*1');
    expect(result.prediction).toBe('Paris');
    expect(result.answerable).toBe(true);
    expect(result.finalContext.map((m) => m.id)).toEqual(['r1-c1', 'r2-c3']);
    expect(result.finalContext[1].quotes[0]).toMatchObject({ documentId: 'doc-3' });
  });

  test('extagents-no-sync: one round, then the best-effort answer (or a refusal without it)', async () => {
    const forced = await STRATEGY_FUNCTIONS['extagents-no-sync'](input());
    expect(shape(forced.calls)).toBe('0:seeker*5 1:reasoner*1 2:reasoner*1');
    expect(forced.prediction).toBe(GUESS);
    const refused = await STRATEGY_FUNCTIONS['extagents-no-sync'](input({ bestEffort: false }));
    expect(shape(refused.calls)).toBe('0:seeker*5 1:reasoner*1');
    expect(refused).toMatchObject({ prediction: NO_ANSWER, answerable: false });
    expect(refused.finalContext.map((m) => m.id)).toEqual(['r1-c1']);
  });

  test('extagents-no-kar: one reasoning call per round over all messages', async () => {
    const result = await STRATEGY_FUNCTIONS['extagents-no-kar'](input());
    expect(shape(result.calls)).toBe('0:seeker*5 1:reasoner*1 2:seeker*5 3:reasoner*1');
    expect(result.prediction).toBe('Paris');
  });

  test('official: two calls per chunk per round (extract, score), one reasoning call per round', async () => {
    const result = await STRATEGY_FUNCTIONS.official(input());
    expect(shape(result.calls)).toBe('0:seeker*5 1:seeker*5 2:reasoner*1 3:seeker*5 4:seeker*5 5:reasoner*1');
    expect(result.prediction).toBe('Paris');
    // Message scores come from the separate score call (70), not from the extraction (80 / 60).
    expect(result.finalContext.map((m) => m.score)).toEqual([70, 70]);
  });

  test('official forces an answer in its last round', async () => {
    const result = await STRATEGY_FUNCTIONS.official(input({ officialMaxRounds: 1 }));
    expect(shape(result.calls)).toBe('0:seeker*5 1:seeker*5 2:reasoner*1');
    expect(result.prediction).toBe(GUESS);
  });

  test('extagents makes at most 0.55x the calls of official on 20 chunks (2N+3 against 4N+2)', async () => {
    const twenty = [...world(), ...Array.from({ length: 15 }, (_, i) => ({ id: `more-${i}`, text: FILLER }))];
    const ours = await STRATEGY_FUNCTIONS.extagents(input({}, new ScriptedModel(), twenty));
    const theirs = await STRATEGY_FUNCTIONS.official(input({}, new ScriptedModel(), twenty));
    expect([ours.calls.length, theirs.calls.length]).toEqual([43, 82]);
    expect(ours.calls.length / theirs.calls.length).toBeLessThanOrEqual(0.55);
  });

  test('direct: one reasoning call over the whole input as one message when it fits', async () => {
    const result = await STRATEGY_FUNCTIONS.direct(input());
    expect(shape(result.calls)).toBe('0:reasoner*1');
    expect(result.finalContext).toHaveLength(1);
    expect(result.prediction).toBe('Paris');
    expect(new Set(result.finalContext[0].quotes.map((q) => q.documentId)).size).toBe(5);
  });

  test('direct truncates to the context window: the front, or the first and last halves', async () => {
    const question = countTokens('Where was the founder born?');
    const window = { contextWindowTokens: question + 48, promptReserveTokens: 0 };
    const front = await STRATEGY_FUNCTIONS.direct(input({ ...window, truncation: 'front' }));
    expect(front.finalContext[0].quotes.map((q) => q.documentId)).toEqual(['doc-0', 'doc-1']);
    expect(front.finalContext[0].tokens).toBeLessThanOrEqual(49);
    expect(front.prediction).toBe(GUESS);
    const middle = await STRATEGY_FUNCTIONS.direct(input({ ...window, truncation: 'middle' }));
    const docs = middle.finalContext[0].quotes.map((q) => q.documentId);
    expect(docs[0]).toBe('doc-0');
    expect(docs.at(-1)).toBe('doc-4');
    expect(docs).not.toContain('doc-2');
  });

  test('rag: the BM25-best chunks packed into the reasoning budget, one call', async () => {
    const documents = world();
    const result = await STRATEGY_FUNCTIONS.rag({ ...input({ reasonerBudgetTokens: 70 }), question: 'Which city is Paris, the city of lights?' });
    expect(shape(result.calls)).toBe('0:reasoner*1');
    expect(result.finalContext.map((m) => m.id)).toEqual(['chunk-3']);
    expect(documents).toHaveLength(5);
  });

  test('chain-of-agents: one worker stage per chunk in order, the note carries ALPHA to BRIDGE, a manager answers', async () => {
    const result = await STRATEGY_FUNCTIONS['chain-of-agents'](input());
    expect(shape(result.calls)).toBe('0:seeker*1 1:seeker*1 2:seeker*1 3:seeker*1 4:seeker*1 5:reasoner*1');
    expect(result.prediction).toBe('Paris');
    // Order matters: with BRIDGE before ALPHA the note cannot help.
    const reversed = world().reverse();
    const late = await STRATEGY_FUNCTIONS['chain-of-agents'](input({}, new ScriptedModel(), reversed));
    expect(late.prediction).toBe(GUESS);
  });

  test('mapreduce: map every chunk, collapse when over budget, reduce', async () => {
    const fits = await STRATEGY_FUNCTIONS.mapreduce(input());
    expect(shape(fits.calls)).toBe('0:seeker*5 1:reasoner*1');
    expect(fits.prediction).toBe(GUESS); // the map finds ALPHA only (no synchronization)
    const doc = (id: string, text: string): SourceDocument => ({ id, text });
    // Three map results of ~17 tokens (with overhead) over a budget of 30; groups up to one chunk (~42 tokens).
    const many = ['one', 'two', 'three'].map((n) => doc(n, `${FILLER} ${FILLER} ALPHA ${n} fact here.`));
    const collapsed = await STRATEGY_FUNCTIONS.mapreduce(input({ reasonerBudgetTokens: 30 }, new ScriptedModel(), many));
    // level 1: results 1+2 collapsed, 3 passes through; level 2: the two remaining collapsed; reduce.
    expect(shape(collapsed.calls)).toBe('0:seeker*3 1:seeker*1 2:seeker*1 3:reasoner*1');
    expect(collapsed.finalContext.map((m) => m.id)).toEqual(['collapse2-g0']);
    expect(collapsed.finalContext[0].quotes.map((q) => q.documentId)).toEqual(['one', 'two', 'three']);
  });

  test('confidence 1-5 from a relevance score', () => {
    expect([0, 19, 20, 59, 80, 100].map(confidenceOf)).toEqual([1, 1, 2, 3, 5, 5]);
  });

  test('every strategy name has an implementation', () => {
    expect(Object.keys(STRATEGY_FUNCTIONS).sort()).toEqual([...EVAL_STRATEGIES].sort());
  });
});

describe('evaluation strategies with the extractive reader', () => {
  const filler = (i: number): string =>
    `Paragraph ${i} describes the harvest festival of a small village, with music, bread and dancing until late at night. ` +
    'Farmers bring apples and pears to the square, and children play games near the old fountain.';
  const documents: SourceDocument[] = [
    ...Array.from({ length: 6 }, (_, i) => ({ id: `filler-${i}`, text: filler(i) })),
    { id: 'gold', text: 'Gustave Eiffel. The Eiffel Tower in Paris was completed in 1889 for the World Fair by the company of Gustave Eiffel.' },
    ...Array.from({ length: 6 }, (_, i) => ({ id: `filler-${i + 6}`, text: filler(i + 6) })),
  ];
  const gold = [{ documentId: 'gold', start: 0, end: documents[6].text.length }];

  test.each(STRATEGIES.filter((s) => s !== 'question-only'))('%s answers a single-hop question from the right document', async (name) => {
    const model = new ExtractiveReader();
    const result = await STRATEGY_FUNCTIONS[name]({
      question: 'In what year was the Eiffel Tower in Paris completed?',
      documents,
      chunks: chunkCorpus(documents, { chunkTokens: 96 }),
      model,
      options: { ...DEFAULT_STRATEGY_OPTIONS, reasonerBudgetTokens: 400, contextWindowTokens: 4000 },
    });
    expect(result.answerable).toBe(true);
    expect(result.prediction).toContain('1889');
    expect(scoreAnswer('hotpotqa', result.prediction, result.answerable, ['1889']).f1).toBeGreaterThan(0);
    expect(evidenceRecall(gold, result.finalContext)).toBe(1);
  });

  test('question-only gives the reasoning agent the question and no passage (one forced call)', async () => {
    const seen: ReasonRequest[] = [];
    const model: AgentModel = {
      description: 'spy',
      seek: () => Promise.reject(new Error('question-only must not seek')),
      reason: async (request) => {
        seen.push(request);
        return { answerable: true, answer: 'Paris', citedMessageIds: [], usage: { calls: 1, inputTokens: 20, outputTokens: 2 }, warnings: [] };
      },
    };
    const result = await STRATEGY_FUNCTIONS['question-only']({
      question: 'Where is the Eiffel Tower?',
      documents,
      chunks: chunkCorpus(documents, { chunkTokens: 96 }),
      model,
      options: DEFAULT_STRATEGY_OPTIONS,
    });
    expect(seen).toHaveLength(1);
    expect(seen[0].force).toBe(true);
    expect(seen[0].messages.map((m) => m.evidence)).toEqual(['']);
    expect(result.prediction).toBe('Paris');
    expect(result.calls).toEqual([{ stage: 0, role: 'reasoner', inputTokens: 20, outputTokens: 2 }]);
    expect(evidenceRecall(gold, result.finalContext)).toBe(0);
  });
});
