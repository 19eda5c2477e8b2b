import path from 'node:path';
import { loadLlamaModels } from '../local/engine/llama';
import { LlmAgents } from '../shared/llm/agents';
import { readHotpotQa, defaultDataRoot } from '../shared/eval/datasets';
import type { ChatModel, ChatRequest } from '../shared/ports';
async function main() {
  const llama = await loadLlamaModels(process.argv[2]);
  const logging: ChatModel = { modelId: llama.seeker.modelId, complete: async (r: ChatRequest) => { const res = await llama.seeker.complete(r); console.log('>>', r.role, JSON.stringify(res.text)); return res; } } as ChatModel;
  const agents = new LlmAgents({ seeker: logging, reasoner: logging });
  const { questions } = readHotpotQa(path.join(defaultDataRoot(), 'hotpotqa', process.argv[3] ?? 'hotpot_train_100.hipporag.json'));
  for (const q of questions.slice(0, Number(process.argv[4] ?? 3))) {
    console.log('Q:', q.question, '| gold:', q.answer);
    const gold = new Set(q.supportingFacts.map((f) => f.title));
    const msgs = [];
    for (const [i, c] of q.context.filter((c) => gold.has(c.title)).entries()) {
      const text = `${c.title}\n${c.sentences.join('').trim()}`;
      const r = await agents.seek({ question: q.question, chunk: { index: i, text, tokens: 100, chars: text.length, segments: [{ documentId: 'd', start: 0, end: text.length, chunkStart: 0 }] } as any, round: 1, synchronized: [] });
      console.log('  evidence:', JSON.stringify(r.evidence), r.score);
      if (r.evidence) msgs.push({ id: `r1-c${i}`, round: 1, chunkIndex: i, score: r.score, evidence: r.evidence, tokens: 50, quotes: [], sources: [] });
    }
    const rr = await agents.reason({ question: q.question, messages: msgs, force: false });
    console.log('  answer:', rr.answer, rr.answerable);
  }
}
main().then(() => process.exit(0));
