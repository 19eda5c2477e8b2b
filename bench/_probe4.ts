import { chunkCorpus } from '../shared/chunking';
import { loadLlamaModels } from '../models/llama/llama';
import { readHotpotQa, readFillerParagraphs, buildHotpotLongContext, defaultDataRoot } from '../eval/datasets';
import path from 'node:path';
async function main() {
  const m = await loadLlamaModels('llama:' + process.env.HOME + '/.cache/extagents/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf?ctx=4096');
  const size = Number(process.argv[2] ?? 1638);
  for (const qi of (process.argv[3] ?? '3,5').split(',').map(Number)) {
  const q = readHotpotQa(path.join(defaultDataRoot(), 'hotpotqa', 'hotpot_train_100.hipporag.json')).questions[qi];
  const built = buildHotpotLongContext(q, readFillerParagraphs().paragraphs, { targetTokens: 16000 });
  const chunks = chunkCorpus([{ id: 'd', text: built.document.text }], { chunkTokens: size });
  const gold = (built.document.paragraphs ?? []).filter((p) => p.own && q.supportingFacts.some((f) => f.title === p.title));
  console.log('Q', q.question, '|', q.answer);
  for (const c of chunks) {
    const off = c.segments[0].start;
    const has = gold.filter((g) => g.start >= off && g.start < off + c.text.length);
    const cands = has.length ? [c] : [];
    if (!has.length && c.index !== 1) continue;
    console.log('CHUNK', c.index, c.tokens, 'gold', has.map((g) => g.title));
    const variants: Array<[string, string, string]> = [
      ['plainQA', 'You answer questions from the given passages. Reply with the answer only: a word or a short phrase.', `Passages:\n${c.text}\n\nQuestion: ${q.question}\nAnswer:`],
      ['quote', 'You find evidence for a question in a text. Copy word for word the one or two sentences of the text that help answer the question. Reply with the copied sentences only. If nothing in the text helps, reply NONE.', `Text:\n${c.text}\n\nQuestion: ${q.question}\nCopied sentences:`],
      ['quote-qfirst', 'You find evidence for a question in a text. Copy word for word the one or two sentences of the text that help answer the question. Reply with the copied sentences only. If nothing in the text helps, reply NONE.', `Question: ${q.question}\n\nText:\n${c.text}\n\nQuestion: ${q.question}\nCopied sentences:`],
    ];
    for (const [name, system, user] of variants) {
      const t0 = performance.now();
      const r = await m.seeker.complete({ role: 'seeker', system, messages: [{ role: 'user', text: user }], maxTokens: 120, temperature: 0 });
      console.log(`  ${name} ${Math.round(performance.now() - t0)}ms ${JSON.stringify(r.text.slice(0, 220))}`);
    }
  }
  }
  process.exit(0);
}
main();
