/**
 * The synthesized workflow run locally end to end (local/engine/run.ts): the CDK definition executed by
 * aws-local-stepfunctions, handlers in-process, DynamoDB on dynalite, the bucket in a directory.
 * The offline extractive reader answers real questions; a scripted model forces paths the reader
 * cannot be relied on to take (round 2, failing chunks).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EmptyCorpusError, ModelError } from '../../shared/errors';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../../shared/ports';
import { NO_ANSWER } from '../../shared/types';
import { resolveCorpus } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';

jest.setTimeout(60_000);

const usage = { calls: 1, inputTokens: 10, outputTokens: 2 };

/** A paragraph of filler that mentions nothing the questions ask about. */
const filler = (i: number): string =>
  `Report ${i}. The harvest of the year was abundant and the treasury received its customary revenues. ` +
  `Roads were repaired in several districts and the postal service extended its routes to new towns. ` +
  `Commerce with foreign nations continued on a footing of mutual advantage and good faith.`;

describe('the workflow run locally', () => {
  let dir: string;
  let stateDir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-wf-'));
    stateDir = path.join(dir, 'state');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function corpusDir(files: Record<string, string>): string {
    const root = path.join(dir, 'corpus');
    for (const [name, text] of Object.entries(files)) {
      const file = path.join(root, name);
      require('node:fs').mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
    return root;
  }

  it('answers from the one document that holds the answer and cites it with its character range', async () => {
    const needle =
      'A part of the Cherokees, known by the name of Chickamaugas, inhabiting five villages on the Tennessee River, have long been in the practice of committing depredations.';
    const docs: Record<string, string> = {};
    for (let i = 0; i < 12; i++) docs[`address-${String(i).padStart(2, '0')}.txt`] = [filler(i), filler(i + 100)].join('\n\n');
    docs['address-07.txt'] = [filler(7), needle, filler(107)].join('\n\n');
    const files = await resolveCorpus([corpusDir(docs)]);

    const result = await runLocal({
      files,
      question: 'By what name was the part of the Cherokees living in five villages on the Tennessee River known?',
      options: { chunkTokens: 128 },
      stateDir,
    });

    expect(result.answerable).toBe(true);
    expect(`${result.answer} ${result.citations.map((c) => c.quote).join(' ')}`).toContain('Chickamaugas');
    const citation = result.citations.find((c) => c.quote.includes('Chickamaugas'));
    expect(citation?.documentId).toBe('address-07.txt');
    const original = docs['address-07.txt'];
    expect(original.slice(citation!.start, citation!.end)).toContain('Chickamaugas');
    expect(result.chunks).toBeGreaterThan(5);
    expect(result.trace[0]).toMatchObject({ round: 1, k: 1 });
    expect(result.trace.at(-1)?.outcome).toBe('answered');
    expect(result.usage.seeker.calls).toBe(result.chunks);
    // the extractive reader's answer says what it is, through the workflow into the result
    expect(result.answerBasis).toMatch(/^extractive: a sentence chosen by word overlap, covering \d+% of the question's weighted words/);
  });

  it('refuses with NO ANSWER when the corpus does not answer the question', async () => {
    const docs: Record<string, string> = {};
    for (let i = 0; i < 8; i++) docs[`address-${i}.txt`] = [filler(i), filler(i + 50)].join('\n\n');
    const files = await resolveCorpus([corpusDir(docs)]);

    const result = await runLocal({
      files,
      question: 'How many lives did a president say were lost when the Titanic struck an iceberg and sank?',
      options: { chunkTokens: 128 },
      stateDir,
    });

    expect(result.answerable).toBe(false);
    expect(result.answer).toBe(NO_ANSWER);
    expect(result.trace.every((s) => s.outcome === 'refused')).toBe(true);
    // no seeking agent found anything: no KAR step ran, so there is no reader's reason to give
    expect(result.poolSize).toBe(0);
    expect(result.answerBasis).toBeUndefined();
  });

  it('runs a second round with the synchronized messages when the first round cannot answer a multi-hop question', async () => {
    // Hop 1: "the treaty was signed in Ghent". Hop 2 is only recognisable once Ghent is known.
    const docs = {
      'a.txt': [filler(1), 'The treaty of peace was signed in the city of Ghent.'].join('\n\n'),
      'b.txt': [filler(2), 'Ghent lies on the river Scheldt.'].join('\n\n'),
      'c.txt': [filler(3), filler(4)].join('\n\n'),
    };
    const files = await resolveCorpus([corpusDir(docs)]);
    const seen: Array<{ round: number; synchronized: string[] }> = [];
    const model: AgentModel = {
      description: 'scripted two-hop model',
      async seek(req: SeekRequest): Promise<SeekResult> {
        seen.push({ round: req.round, synchronized: req.synchronized.map((m) => m.evidence) });
        const knowsGhent = req.synchronized.some((m) => m.evidence.includes('Ghent'));
        const find = (needle: string): SeekResult => {
          const start = req.chunk.text.indexOf(needle);
          return { evidence: needle, score: 80, spans: [{ start, end: start + needle.length }], usage, warnings: [] };
        };
        if (req.round === 1 && req.chunk.text.includes('treaty of peace')) return find('The treaty of peace was signed in the city of Ghent.');
        if (knowsGhent && req.chunk.text.includes('Scheldt')) return find('Ghent lies on the river Scheldt.');
        return { evidence: null, score: 0, spans: [], usage, warnings: [] };
      },
      async reason(req: ReasonRequest): Promise<ReasonResult> {
        const hop2 = req.messages.find((m) => m.evidence.includes('Scheldt'));
        if (!hop2) return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
        return { answerable: true, answer: 'the Scheldt', citedMessageIds: req.messages.map((m) => m.id), usage, warnings: [] };
      },
    };

    const result = await runLocal({
      files,
      question: 'On which river lies the city where the treaty was signed?',
      options: { chunkTokens: 64 },
      stateDir,
      model,
    });

    expect(result.answer).toBe('the Scheldt');
    expect(result.answerBasis).toBeUndefined(); // a model that states no basis: its own reply
    expect(result.rounds).toBe(2);
    expect(result.trace.filter((s) => s.round === 1).every((s) => s.outcome === 'refused')).toBe(true);
    expect(result.trace.at(-1)).toMatchObject({ round: 2, outcome: 'answered' });
    const round2 = seen.filter((s) => s.round === 2);
    expect(round2.length).toBe(result.chunks);
    expect(round2.every((s) => s.synchronized.some((e) => e.includes('Ghent')))).toBe(true);
    expect(result.citations.map((c) => c.documentId).sort()).toEqual(['a.txt', 'b.txt']);
  });

  describe('the stopping rule (shared/support.ts)', () => {
    // Four notes of one chunk each: the founder's years (birth, founding, death) in one, the rest filler.
    const YEARS = 'Born in 1840, Martha Quill founded the firm in 1871 and died in 1903.';
    function notes(): Record<string, string> {
      return { 'a.txt': YEARS, 'b.txt': filler(1), 'c.txt': filler(2), 'd.txt': filler(3) };
    }
    /** Seeks quote the chunk's first sentence (YEARS scored highest); the reasoning agent answers `answers[i]` at its i-th call. */
    function scripted(answers: string[]): AgentModel & { reasoned: number } {
      const model = {
        reasoned: 0,
        description: 'scripted stopping-rule model',
        async seek(req: SeekRequest): Promise<SeekResult> {
          const text = req.chunk.text.includes(YEARS) ? YEARS : req.chunk.text.slice(0, req.chunk.text.indexOf('.') + 1);
          const start = req.chunk.text.indexOf(text);
          return { evidence: text, score: text === YEARS ? 90 : 20 + req.chunk.index, spans: [{ start, end: start + text.length }], usage, warnings: [] };
        },
        async reason(req: ReasonRequest): Promise<ReasonResult> {
          const answer = answers[Math.min(model.reasoned++, answers.length - 1)];
          return { answerable: true, answer, citedMessageIds: req.messages.map((m) => m.id), usage, warnings: [] };
        },
      };
      return model;
    }
    const question = 'In what year did Martha Quill die?';

    it('does not stop on an answer its cited quotes do not hold ("1000"): KAR reads on to a supported one', async () => {
      const files = await resolveCorpus([corpusDir(notes())]);
      const result = await runLocal({ files, question, options: { chunkTokens: 64, rounds: 1 }, stateDir, model: scripted(['1000', '1903']) });
      expect(result).toMatchObject({ answer: '1903', answerable: true });
      expect(result.trace.map((s) => [s.k, s.outcome])).toEqual([
        [1, 'unsupported'],
        [2, 'answered'],
      ]);
      expect(result.warnings.some((w) => w.includes('"1000" not supported: its cited quotes do not hold "1000"'))).toBe(true);
    });

    it("with karStop 'confirmed' an early answer the next step does not repeat is not the answer", async () => {
      const files = await resolveCorpus([corpusDir(notes())]);
      const result = await runLocal({
        files,
        question,
        options: { chunkTokens: 64, rounds: 1, karStop: 'confirmed' },
        stateDir,
        model: scripted(['1871', '1903', '1903']),
      });
      expect(result.answer).toBe('1903');
      expect(result.trace.map((s) => [s.k, s.outcome])).toEqual([
        [1, 'unconfirmed'],
        [2, 'unconfirmed'],
        [4, 'answered'],
      ]);
    });

    it("with karStop 'checked' an answer the sufficiency check rejects is not the answer: KAR reads on", async () => {
      const files = await resolveCorpus([corpusDir(notes())]);
      const model = scripted(['1871', '1903']);
      const checked: string[] = [];
      const checking: AgentModel = {
        ...model,
        seek: model.seek.bind(model),
        reason: model.reason.bind(model),
        async checkAnswer(req) {
          checked.push(req.answer);
          return { verdict: req.answer === '1903' ? 'yes' : 'no', usage, warnings: [] };
        },
      };
      const result = await runLocal({ files, question, options: { chunkTokens: 64, rounds: 1, karStop: 'checked' }, stateDir, model: checking });
      expect(result.answer).toBe('1903');
      expect(result.trace.map((s) => [s.k, s.outcome])).toEqual([
        [1, 'unconfirmed'],
        [2, 'answered'],
      ]);
      expect(checked).toEqual(['1871', '1903']);
    });

    it('says so when a stopping rule or follow-up synchronization cannot take effect (a model without them, rounds 1)', async () => {
      const files = await resolveCorpus([corpusDir(notes())]);
      // A model without checkAnswer or followUp that refuses at every step: round 1 ends refused.
      const refusing: AgentModel = {
        ...scripted([]),
        reason: async () => ({ answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] }),
      };
      const answering = scripted(['1903']);
      const plainModel: AgentModel = { description: 'no check', seek: answering.seek.bind(answering), reason: answering.reason.bind(answering) };

      const followUp = await runLocal({ files, question, options: { chunkTokens: 64, synchronization: 'follow-up' }, stateDir, model: refusing });
      const oneRound = await runLocal({
        files,
        question,
        options: { chunkTokens: 64, rounds: 1, synchronization: 'follow-up' },
        stateDir: path.join(dir, 's2'),
        model: refusing,
      });
      const checked = await runLocal({ files, question, options: { chunkTokens: 64, karStop: 'checked' }, stateDir: path.join(dir, 's3'), model: plainModel });

      expect(followUp.warnings).toContainEqual(
        expect.stringMatching(/synchronization 'follow-up': .* asks no follow-up question; round 2 is synchronized plainly/),
      );
      expect(oneRound.warnings).toContain("synchronization 'follow-up' has no effect with rounds 1 (no round follows the first)");
      expect(checked).toMatchObject({ answer: '1903', answerable: true });
      expect(checked.warnings).toContainEqual(
        expect.stringMatching(/karStop 'checked': no check has no sufficiency check; the answer stands on its support alone/),
      );
    });

    it('refuses a best-effort answer its citations do not hold and keeps it apart as the unsupported guess', async () => {
      const files = await resolveCorpus([corpusDir(notes())]);
      const result = await runLocal({ files, question, options: { chunkTokens: 64, rounds: 1, bestEffort: true }, stateDir, model: scripted(['1000']) });
      expect(result).toMatchObject({ answer: NO_ANSWER, answerable: false, unsupportedAnswer: '1000' });
      expect(result.trace.at(-1)).toMatchObject({ forced: true, outcome: 'unsupported' });
    });
  });

  it('does not add to the pool again a round-2 message that cites what its chunk cited in round 1 (one place in the best evidence)', async () => {
    const docs = { 'a.txt': filler(1), 'b.txt': filler(2), 'c.txt': filler(3), 'd.txt': filler(4) };
    const files = await resolveCorpus([corpusDir(docs)]);
    const model: AgentModel = {
      description: "scripted: every round quotes the chunk's first sentence; the reasoning agent refuses",
      async seek(req: SeekRequest): Promise<SeekResult> {
        const text = req.chunk.text.slice(0, req.chunk.text.indexOf('.') + 1);
        const start = req.chunk.text.indexOf(text);
        // Round 2 scores higher: without the rule its copy would rank above the round-1 message.
        return { evidence: text, score: req.round === 1 ? 50 + req.chunk.index : 90, spans: [{ start, end: start + text.length }], usage, warnings: [] };
      },
      async reason(): Promise<ReasonResult> {
        return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
      },
    };

    const result = await runLocal({ files, question: 'Which report mentions the harvest?', options: { chunkTokens: 64, rounds: 2 }, stateDir, model });

    expect(result.rounds).toBe(2);
    expect(result.poolSize).toBe(result.chunks);
    const cited = result.citations.map((c) => `${c.documentId}:${c.start}-${c.end}`);
    expect(cited.length).toBe(3);
    expect(new Set(cited).size).toBe(cited.length);
    expect(result.warnings.filter((w) => w.includes('not added to the pool again')).length).toBe(result.chunks);
  });

  it("asks round 2's seeking agents the reasoning agent's follow-up question (synchronization 'follow-up'), and plain synchronization does not", async () => {
    const docs = {
      'a.txt': [filler(1), 'Ada Quill was born in Freedonia.'].join('\n\n'),
      'b.txt': [filler(2), 'Its capital is Fredville.'].join('\n\n'),
      'c.txt': [filler(3), filler(4)].join('\n\n'),
    };
    const files = await resolveCorpus([corpusDir(docs)]);
    const FOLLOW_UP = 'What is the capital of Freedonia?';
    const asked: Array<{ round: number; followUp?: string }> = [];
    let reasoned = 0;
    const model: AgentModel = {
      description: 'scripted: the capital is found only when asked for it',
      async seek(req: SeekRequest): Promise<SeekResult> {
        asked.push({ round: req.round, followUp: req.followUp });
        const find = (needle: string): SeekResult => {
          const start = req.chunk.text.indexOf(needle);
          return { evidence: needle, score: 80, spans: [{ start, end: start + needle.length }], usage, warnings: [] };
        };
        if (req.round === 1 && req.chunk.text.includes('born in Freedonia')) return find('Ada Quill was born in Freedonia.');
        if (req.followUp === FOLLOW_UP && req.chunk.text.includes('Fredville')) return find('Its capital is Fredville.');
        return { evidence: null, score: 0, spans: [], usage, warnings: [] };
      },
      async reason(req: ReasonRequest): Promise<ReasonResult> {
        reasoned += 1;
        const capital = req.messages.find((m) => m.evidence.includes('Fredville'));
        if (!capital) return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
        return { answerable: true, answer: 'Fredville', citedMessageIds: req.messages.map((m) => m.id), usage, warnings: [] };
      },
      async followUp(req) {
        expect(req.messages.map((m) => m.evidence)).toEqual(['Ada Quill was born in Freedonia.']);
        return { followUp: FOLLOW_UP, usage, warnings: [] };
      },
    };
    const question = 'What is the capital of the country where Ada Quill was born?';

    const result = await runLocal({ files, question, options: { chunkTokens: 64, synchronization: 'follow-up' }, stateDir, model });

    expect(result).toMatchObject({ answer: 'Fredville', answerable: true, rounds: 2 });
    expect(result.trace.filter((s) => s.round === 1).at(-1)).toMatchObject({ outcome: 'refused', followUp: FOLLOW_UP });
    expect(asked.filter((a) => a.round === 2).every((a) => a.followUp === FOLLOW_UP)).toBe(true);
    expect(asked.filter((a) => a.round === 1).every((a) => a.followUp === undefined)).toBe(true);
    // The follow-up call is counted with the reasoning agent's usage: every KAR step's call and one follow-up.
    expect(result.usage.reasoner.calls).toBe(reasoned + 1);

    asked.length = 0;
    const plain = await runLocal({ files, question, options: { chunkTokens: 64 }, stateDir: path.join(dir, 'plain'), model });
    expect(plain.answerable).toBe(false);
    expect(plain.trace.some((s) => s.followUp !== undefined)).toBe(false);
    expect(asked.every((a) => a.followUp === undefined)).toBe(true);
  });

  it('tolerates one permanently failing chunk out of many and lists it in the result', async () => {
    const docs: Record<string, string> = {};
    for (let i = 0; i < 30; i++) docs[`d${String(i).padStart(2, '0')}.txt`] = filler(i);
    docs['d29.txt'] = `${filler(29)} The answer is saffron.`;
    const files = await resolveCorpus([corpusDir(docs)]);
    let failingChunk = -1;
    const model: AgentModel = {
      description: 'scripted model with one broken chunk',
      async seek(req: SeekRequest): Promise<SeekResult> {
        if (req.chunk.segments[0].documentId === 'd03.txt') {
          failingChunk = req.chunk.index;
          throw new ModelError('permanent failure for this chunk');
        }
        const start = req.chunk.text.indexOf('The answer is saffron.');
        if (start < 0) return { evidence: null, score: 0, spans: [], usage, warnings: [] };
        return { evidence: 'The answer is saffron.', score: 90, spans: [{ start, end: start + 22 }], usage, warnings: [] };
      },
      async reason(req: ReasonRequest): Promise<ReasonResult> {
        return { answerable: true, answer: 'saffron', citedMessageIds: req.messages.slice(0, 1).map((m) => m.id), usage, warnings: [] };
      },
    };

    const result = await runLocal({
      files,
      question: 'What is the answer?',
      options: { chunkTokens: 64, toleratedFailurePercentage: 10 },
      stateDir,
      model,
      retryIntervalMs: 0,
    });

    expect(result.answer).toBe('saffron');
    expect(result.chunks).toBeGreaterThanOrEqual(30);
    expect(result.chunkFailures.map((f) => f.chunk)).toEqual([failingChunk]);
  });

  it('fails with a clear cause when more chunks fail than tolerated', async () => {
    const docs: Record<string, string> = {};
    for (let i = 0; i < 10; i++) docs[`d${i}.txt`] = filler(i);
    const files = await resolveCorpus([corpusDir(docs)]);
    const model: AgentModel = {
      description: 'always failing model',
      async seek(): Promise<SeekResult> {
        throw new ModelError('the model is broken');
      },
      async reason(): Promise<ReasonResult> {
        throw new ModelError('unreachable');
      },
    };

    await expect(
      runLocal({ files, question: 'Anything?', options: { chunkTokens: 64, toleratedFailurePercentage: 10 }, stateDir, model, retryIntervalMs: 0 }),
    ).rejects.toMatchObject({
      name: 'ModelError',
      message: expect.stringMatching(
        /^the model is broken \(this error failed the seeking agents of \d+ of the 10 chunk\(s\) of round 1, more than the tolerated 10%; the run stopped\)$/,
      ),
    });
  });

  it('reports an empty corpus before any model call', async () => {
    const files = await resolveCorpus([corpusDir({ 'empty.txt': '', 'blank.txt': '   \n\n ' })]);
    const model: AgentModel = {
      description: 'must not be called',
      seek: jest.fn(),
      reason: jest.fn(),
    };

    await expect(runLocal({ files, question: 'Anything?', stateDir, model })).rejects.toBeInstanceOf(EmptyCorpusError);
    expect(model.seek).not.toHaveBeenCalled();
  });
});
