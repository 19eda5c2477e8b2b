/**
 * A two-hop question whose answer depends on round 2 (global knowledge synchronization): the crash
 * sweep's fixture (test/integration/crash-sweep.test.ts, test/support/crash-run.ts).
 *
 * The corpus is eight notes of one chunk each (chunkTokens 64; two never share a chunk). One says where Ada Quill was born
 * (Freedonia); another, among filler, names the capital of Freedonia. In round 1 the seeking agent of
 * the capital's chunk does not know the country matters and returns only filler; in round 2, given
 * the synchronized message that names Freedonia, it returns the capital. The reasoning agent never
 * answers unforced, so every run goes through all KAR steps of both rounds and ends with the
 * best-effort answer, whose text depends on round 2: "Fredville" with round 2's message, "Freedonia"
 * without it. A resume that skipped or misread round 2 cannot pass.
 */
import type { AgentModel, ChatModel, ChatRequest, ChatResponse, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../../shared/ports';
import { ModelError } from '../../shared/errors';
import { LlmAgents } from '../../shared/llm/agents';
import { NO_ANSWER } from '../../shared/types';
import { note } from './corpus';

export const TWO_HOP_QUESTION = 'What is the capital of the country where Ada Quill was born?';
export const TWO_HOP_OPTIONS = { chunkTokens: 64, rounds: 2, concurrency: 2, bestEffort: true, syncMaxMessages: 4 } as const;
/** The coverage options of the sweep's grow run: one chunk first, so the run grows its coverage 1, 2, 4, 7 before round 2. */
export const TWO_HOP_GROW = { coverage: 'grow', coverageFirstChunks: 1 } as const;

const BIRTH = 'Ada Quill was born in Freedonia.';
const CAPITAL = 'The capital of Freedonia is Fredville.';
/** The sentence before the capital in its note. */
const CAPITAL_FILLER = 'Rain fell on district 5.';

/** The eight notes (or `count`): `n0.txt` … `n7.txt`; n2 holds the birth place, n5 the capital (after filler). */
export function twoHopCorpus(count = 8): Record<string, string> {
  const docs: Record<string, string> = {};
  for (let i = 0; i < count; i++) docs[`n${i}.txt`] = note(i);
  docs['n2.txt'] = `Note 2. ${BIRTH}`;
  docs['n5.txt'] = `Note 5. ${CAPITAL_FILLER} ${CAPITAL}`;
  return docs;
}

const usage = { calls: 1, inputTokens: 10, outputTokens: 2 };

/** The two-hop scripted model (see the file comment); deterministic, so a replay sees the same replies. */
export function twoHopModel(): AgentModel {
  const quote = (req: SeekRequest, text: string, score: number): SeekResult => {
    const start = req.chunk.text.indexOf(text);
    return { evidence: text, score, spans: [{ start, end: start + text.length }], usage, warnings: [] };
  };
  return {
    description: 'two-hop scripted model (tests)',
    async seek(req: SeekRequest): Promise<SeekResult> {
      if (req.chunk.text.includes(BIRTH)) return quote(req, BIRTH, 90);
      const knowsCountry = req.synchronized.some((m) => m.evidence.includes('Freedonia'));
      if (req.chunk.text.includes(CAPITAL) && knowsCountry) return quote(req, CAPITAL, 95);
      // Filler: the chunk's first sentence, low score, so that the pool has one message per chunk.
      const first = req.chunk.text.slice(0, req.chunk.text.indexOf('.', 8) + 1);
      return quote(req, first, 10 + (req.chunk.index % 5));
    },
    async reason(req: ReasonRequest): Promise<ReasonResult> {
      if (!req.force) return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
      const capital = req.messages.find((m) => m.evidence.includes(CAPITAL));
      const birth = req.messages.find((m) => m.evidence.includes(BIRTH));
      if (capital && birth) return { answerable: true, answer: 'Fredville', citedMessageIds: [capital.id, birth.id], usage, warnings: [] };
      if (birth) return { answerable: true, answer: 'Freedonia', citedMessageIds: [birth.id], usage, warnings: [] };
      return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
    },
  };
}

/** A one-hop question over the same corpus: answered in round 1 by the birth note alone. */
export const BIRTH_QUESTION = 'Where was Ada Quill born?';

/**
 * The two-hop seeking agents (as {@link twoHopModel}) with a reasoning agent that answers unforced
 * as soon as its evidence suffices: {@link TWO_HOP_QUESTION} with the capital's and the birth
 * place's messages (so only in round 2, at k = 2), {@link BIRTH_QUESTION} with the birth place's
 * (round 1, k = 1); it refuses otherwise. The pipelined-rounds fixture (test/integration/pipeline.test.ts,
 * bench/pipeline.ts).
 */
export function twoHopAnsweringModel(): AgentModel {
  const seeker = twoHopModel();
  return {
    description: 'two-hop answering scripted model (tests)',
    seek: (req) => seeker.seek(req),
    async reason(req: ReasonRequest): Promise<ReasonResult> {
      const capital = req.messages.find((m) => m.evidence.includes(CAPITAL));
      const birth = req.messages.find((m) => m.evidence.includes(BIRTH));
      if (req.question === TWO_HOP_QUESTION && capital && birth) {
        return { answerable: true, answer: 'Fredville', citedMessageIds: [capital.id, birth.id], usage, warnings: [] };
      }
      if (req.question === BIRTH_QUESTION && birth) return { answerable: true, answer: 'Freedonia', citedMessageIds: [birth.id], usage, warnings: [] };
      return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
    },
  };
}

/** One model call as {@link withLatency} saw it: role, round (seekers), start and end (ms, performance.now()). */
export interface TimedCall {
  role: 'seeker' | 'reasoner';
  round?: number;
  start: number;
  end: number;
}

/**
 * A model whose every call first waits a fixed time (a model's latency: `seekMs` per seeking call,
 * `reasonMs` per reasoning call), then answers as `model` does; each call is appended to `calls`.
 */
export function withLatency(model: AgentModel, latency: { seekMs: number; reasonMs: number }, calls: TimedCall[] = []): AgentModel {
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  return {
    description: `${model.description}, ${latency.seekMs} ms a seek and ${latency.reasonMs} ms a reasoning step`,
    async seek(req: SeekRequest): Promise<SeekResult> {
      const start = performance.now();
      await sleep(latency.seekMs);
      const result = await model.seek(req);
      calls.push({ role: 'seeker', round: req.round, start, end: performance.now() });
      return result;
    },
    async reason(req: ReasonRequest): Promise<ReasonResult> {
      const start = performance.now();
      await sleep(latency.reasonMs);
      const result = await model.reason(req);
      calls.push({ role: 'reasoner', start, end: performance.now() });
      return result;
    },
  };
}

/**
 * Two-hop seeking agents that stay quiet where they find nothing (reseek 'promising', shared/reseek.ts):
 * the birth place's chunk gives its message in every round, the capital's chunk gives the capital once
 * it knows the country (a synchronized message naming Freedonia), and in round 1 either a low-scored
 * filler message (`capitalFiller`: it found something, the sentence of the capital's note before it) or nothing; every other chunk gives nothing.
 * `quietAfterRound1`: every seeking agent of rounds >= 2 finds nothing. The reasoning agent answers
 * "Fredville" from the capital's and the birth place's messages, unforced; forced (best effort),
 * "Freedonia" from the birth place's alone; it refuses otherwise. Deterministic.
 */
export function twoHopSparseModel(options: { capitalFiller: boolean; quietAfterRound1?: boolean }): AgentModel {
  const quote = (req: SeekRequest, text: string, score: number): SeekResult => {
    const start = req.chunk.text.indexOf(text);
    return { evidence: text, score, spans: [{ start, end: start + text.length }], usage, warnings: [] };
  };
  const none: SeekResult = { evidence: null, score: 0, spans: [], usage, warnings: [] };
  return {
    description: `two-hop sparse scripted model (tests; capital filler ${options.capitalFiller})`,
    async seek(req: SeekRequest): Promise<SeekResult> {
      if (options.quietAfterRound1 && req.round >= 2) return none;
      if (req.chunk.text.includes(BIRTH)) return quote(req, BIRTH, 90);
      if (!req.chunk.text.includes(CAPITAL)) return none;
      if (req.synchronized.some((m) => m.evidence.includes('Freedonia'))) return quote(req, CAPITAL, 95);
      return options.capitalFiller && req.round === 1 ? quote(req, CAPITAL_FILLER, 10) : none;
    },
    async reason(req: ReasonRequest): Promise<ReasonResult> {
      const capital = req.messages.find((m) => m.evidence.includes(CAPITAL));
      const birth = req.messages.find((m) => m.evidence.includes(BIRTH));
      if (capital && birth) return { answerable: true, answer: 'Fredville', citedMessageIds: [capital.id, birth.id], usage, warnings: [] };
      if (req.force && birth) return { answerable: true, answer: 'Freedonia', citedMessageIds: [birth.id], usage, warnings: [] };
      return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
    },
  };
}

/**
 * The two-hop facts in one long document over several 64-token chunks (`atlas.txt`: the birth place in
 * its first chunk, the capital in its last, filler between) beside `notes` one-chunk notes.
 */
export function twoHopAtlasCorpus(notes = 4): Record<string, string> {
  const docs: Record<string, string> = {};
  for (let i = 0; i < notes; i++) docs[`n${i}.txt`] = note(i);
  const filler = [0, 1, 2, 3, 4, 5].map((i) => `Chapter ${i + 1}. The rivers of the north were mapped by surveyors who walked the banks for many seasons.`);
  docs['atlas.txt'] = [BIRTH, ...filler, `Chapter 7. ${CAPITAL}`].join(' ');
  return docs;
}

/**
 * The two-hop seeking agents of {@link twoHopModel} at the chat level (the batch path needs the
 * seeker's chat calls: shared/pipeline/seek-batch.ts): the LLM agents (shared/llm/agents.ts) over a
 * scripted chat model that replies with the JSON seek format, with the two-hop reasoning agent.
 * `failOnce` makes the first call for a chunk holding that text throw a ModelError (a failed batch
 * record); `calls` counts the seeker's chat calls by the chunk's first words.
 */
export function twoHopChatModel(options: { failOnce?: string } = {}): {
  chat: ChatModel;
  agents: (wrapSeeker?: (chat: ChatModel) => ChatModel) => AgentModel;
  calls: string[];
} {
  const calls: string[] = [];
  let failed = false;
  const chat: ChatModel = {
    modelId: 'two-hop-chat',
    async complete(request: ChatRequest): Promise<ChatResponse> {
      const prompt = request.messages[0].text;
      const chunk = /<chunk>([\s\S]*?)<\/chunk>/.exec(prompt)?.[1] ?? '';
      calls.push(
        chunk
          .replace(/\[\d+\]\s*/g, '')
          .trim()
          .slice(0, 12),
      );
      if (options.failOnce !== undefined && !failed && chunk.includes(options.failOnce)) {
        failed = true;
        throw new ModelError('scripted failure of one record');
      }
      const reply = (text: string, score: number) => ({
        text: JSON.stringify({ evidence: text, quotes: [text], score }),
        stopReason: 'end_turn' as const,
        inputTokens: 10,
        outputTokens: 2,
      });
      if (chunk.includes(BIRTH)) return reply(BIRTH, 90);
      if (chunk.includes(CAPITAL) && prompt.replace(chunk, '').includes('Freedonia')) return reply(CAPITAL, 95);
      return { text: '{"no_information": true}', stopReason: 'end_turn', inputTokens: 10, outputTokens: 2 };
    },
  };
  const reasoner = twoHopModel();
  const agents = (wrapSeeker?: (chat: ChatModel) => ChatModel): AgentModel => {
    const llm = new LlmAgents({ seeker: wrapSeeker ? wrapSeeker(chat) : chat, reasoner: chat });
    return { description: 'two-hop chat model (tests)', seek: (req) => llm.seek(req), reason: (req) => reasoner.reason(req) };
  };
  return { chat, agents, calls };
}
