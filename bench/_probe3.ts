import { chunkCorpus } from '../shared/chunking';
import { loadLlamaModels } from '../models/llama/llama';
import { LlmAgents } from '../shared/llm/agents';
import { readHotpotQa, readFillerParagraphs, buildHotpotLongContext, defaultDataRoot } from '../eval/datasets';
import type { ChatModel, ChatRequest } from '../shared/ports';
import path from 'node:path';
async function main() {
  const m = await loadLlamaModels('llama:' + process.env.HOME + '/.cache/extagents/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf?ctx=4096');
  const qi = Number(process.argv[2] ?? 3);
  const q = readHotpotQa(path.join(defaultDataRoot(), 'hotpotqa', 'hotpot_train_100.hipporag.json')).questions[qi];
  const built = buildHotpotLongContext(q, readFillerParagraphs().paragraphs, { targetTokens: 16000 });
  const size = Number(process.argv[3] ?? 1638);
  const chunks = chunkCorpus([{ id: 'd', text: built.document.text }], { chunkTokens: size });
  const gold = (built.document.paragraphs ?? []).filter((p) => p.own && q.supportingFacts.some((f) => f.title === p.title));
  const logging: ChatModel = { ...m.seeker, modelId: m.seeker.modelId, complete: async (r: ChatRequest) => { const x = await m.seeker.complete(r); process.stdout.write(`RAW ${JSON.stringify(x.text).slice(0, 300)}\n`); return x; } } as ChatModel;
  const agents = new LlmAgents({ seeker: logging, reasoner: m.reasoner, reasonerReply: 'prose', seekerReply: 'prose' });
  for (const c of chunks) {
    const off = c.segments[0].start;
    const has = gold.filter((g) => g.start >= off && g.start < off + c.text.length);
    if (has.length === 0 && c.index % 7 !== 1) continue;
    console.log('CHUNK', c.index, c.tokens, 'gold', has.map((g) => g.title));
    const t0 = performance.now();
    const r = await agents.seek({ question: q.question, chunk: c, round: 1, synchronized: [] });
    console.log('score', r.score, Math.round(performance.now() - t0), 'ms', JSON.stringify(r.evidence?.slice(0, 200)));
  }
  process.exit(0);
}
main();
