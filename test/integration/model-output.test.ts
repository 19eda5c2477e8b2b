/**
 * Bad model output through the whole local workflow: the LLM agents (shared/llm/agents.ts) over a
 * scripted chat model whose replies are the known failure shapes (markdown and full-width score
 * labels, JSON in a fence, a score out of range, no score, an empty reply, a reply cut off at the
 * output limit, an answer that merely contains "info"). Each is parsed when its meaning is clear,
 * otherwise retried or re-asked a bounded number of times and counted as a warning; the run goes on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import { startLocalStack } from '../../local/engine/stack';
import { DEFAULT_MAX_OUTPUT_TOKENS, FALLBACK_SCORE, LlmAgents } from '../../shared/llm/agents';
import type { ChatModel, ChatRequest, ChatResponse } from '../../shared/ports';
import { note, writeCorpus } from '../support/corpus';

jest.setTimeout(60_000);

/** Document marker -> the seeking agent's replies for the chunk that holds it, in order. */
const SEEK_REPLIES: Record<string, Array<Partial<ChatResponse>>> = {
  ALPHA: [{ text: '**Score:** 90\nEvidence: Visitors get maps at the Reno information desk.' }],
  BRAVO: [{ text: 'Here is my answer:\n```json\n{"evidence": "The desk opens at nine.", "quotes": [], "score": "Score：80"}\n```' }],
  CHARLIE: [{ text: '' }, { text: '   ' }],
  DELTA: [
    { text: '{"evidence": "The museum shop sells', stopReason: 'max_tokens' },
    { text: '{"evidence": "The museum', stopReason: 'max_tokens' },
  ],
  ECHO: [{ text: '{"evidence": "Parking is free on Sundays.", "quotes": []}' }, { text: 'I would rather not rate it.' }],
  FOXTROT: [{ text: '{"evidence": "Maps of the valley cost nothing.", "score": 150}' }],
  GOLF: [{ text: 'NO INFORMATION' }],
};

/** A chat model that answers by the marker in the prompt; counts its calls. */
class MarkerChatModel implements ChatModel {
  readonly modelId = 'scripted';
  readonly calls: Record<string, number> = {};
  readonly reasonReplies: string[] = [];

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const prompt = request.messages.map((m) => m.text).join('\n');
    const base = { stopReason: 'end_turn' as const, inputTokens: 100, outputTokens: 10 };
    if (request.role === 'reasoner') {
      const reno = /<message id="(r\d+-c\d+)"[^>]*>\nVisitors get maps at the Reno information desk\./.exec(prompt);
      const text = reno ? `Reno information desk [${reno[1]}]` : 'NO ANSWER';
      this.reasonReplies.push(text);
      return { ...base, text };
    }
    const marker = Object.keys(SEEK_REPLIES).find((m) => new RegExp(`<chunk>[\\s\\S]*${m}[\\s\\S]*</chunk>`).test(request.messages[0].text));
    if (!marker) return { ...base, text: '{"no_information": true}' };
    const n = (this.calls[marker] = (this.calls[marker] ?? 0) + 1);
    const replies = SEEK_REPLIES[marker];
    return { ...base, text: '', ...replies[Math.min(n, replies.length) - 1] };
  }
}

describe('bad model output in a local run', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-model-output-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('parses what has a clear meaning, retries or re-asks the rest a bounded number of times, counts warnings and goes on', async () => {
    // Arrange: one chunk per marker (each document fills more than 3/4 of an 80-token chunk)
    const docs = Object.fromEntries(Object.keys(SEEK_REPLIES).map((m, i) => [`${m.toLowerCase()}.txt`, `${m}. ${note(i)} ${note(i + 100)}`]));
    const files = await resolveCorpus([writeCorpus(dir, docs)]);
    const chat = new MarkerChatModel();
    const model = new LlmAgents({ seeker: chat, reasoner: chat });

    // Act
    const stateDir = path.join(dir, 'state');
    const result = await runLocal({
      files,
      question: 'Where do visitors get maps?',
      options: { chunkTokens: 80, rounds: 1, ranking: 'score' },
      stateDir,
      runId: 'mo',
      model,
    });

    // Assert: the run answered; "Reno information desk" is an answer, not a refusal
    expect(result.chunks).toBe(Object.keys(SEEK_REPLIES).length);
    expect(result.answerable).toBe(true);
    expect(result.answer).toBe('Reno information desk');
    expect(result.citations[0]).toMatchObject({ documentId: 'alpha.txt', score: 90 });
    // Bounded calls per chunk: one, or one retry of an unusable reply, or one score re-ask
    expect(chat.calls).toEqual({ ALPHA: 1, BRAVO: 1, CHARLIE: 2, DELTA: 2, ECHO: 2, FOXTROT: 1, GOLF: 1 });
    expect(result.usage.seeker.calls).toBe(10);
    // Scores: markdown 90, full-width colon 80, 150 clamped to 100, no score -> fallback with a warning
    expect(result.poolSize).toBe(4); // ALPHA, BRAVO, ECHO, FOXTROT; the empty, cut-off and "no information" chunks yield none
    const stack = await startLocalStack({ stateDir, persistent: true });
    const pool = await stack.store.topK('mo', 10, 99);
    await stack.stop();
    expect(pool.map((m) => [m.evidence, m.score])).toEqual([
      ['Maps of the valley cost nothing.', 100],
      ['Visitors get maps at the Reno information desk.', 90],
      ['The desk opens at nine.', 80],
      ['Parking is free on Sundays.', FALLBACK_SCORE],
    ]);
    const chunkOf = (marker: string) => Object.keys(SEEK_REPLIES).indexOf(marker);
    const warnings = result.warnings.join('\n');
    expect(warnings).toContain(`chunk ${chunkOf('CHARLIE')}, round 1: seeking agent reply empty or unreadable twice; the chunk yields no message`);
    const limit = DEFAULT_MAX_OUTPUT_TOKENS.seek;
    expect(warnings).toContain(`chunk ${chunkOf('DELTA')}, round 1: seeking agent reply cut off at the output limit (${limit} tokens); retried once`);
    expect(warnings).toContain(
      `chunk ${chunkOf('DELTA')}, round 1: seeking agent reply cut off at the output limit (${limit} tokens) twice; the chunk yields no message`,
    );
    expect(warnings).toContain(
      `chunk ${chunkOf('ECHO')}, round 1: relevance score missing or not a number after 1 re-ask; fallback score ${FALLBACK_SCORE} used`,
    );
    expect(warnings).toContain(`chunk ${chunkOf('FOXTROT')}, round 1: relevance score 150 out of 0-100; clamped to 100`);
    expect(result.warnings).toHaveLength(5);
    // KAR: k=1 gives the clamped 100 (no answer in it), k=2 adds the 90: answered
    expect(result.trace.map((s) => [s.k, s.outcome])).toEqual([
      [1, 'refused'],
      [2, 'answered'],
    ]);
    expect(chat.reasonReplies).toEqual(['NO ANSWER', `Reno information desk [r1-c${chunkOf('ALPHA')}]`]);
  });
});
