/**
 * Fidelity benchmark: how much of a model's own ability survives the agent protocol and the
 * distractors. The same model answers each question several ways, side by side:
 *
 * - `plain`: one plain prompt, "answer from these passages", over the question's gold paragraphs and
 *   nothing else: no JSON, no agents (the model's own ceiling);
 * - `gold`: the product's workflow (`runLocal`, the workflow `extagents ask` runs) over the same
 *   gold paragraphs, one document each (protocol fidelity = gold F1 / plain F1);
 * - `own`: the workflow over the question's own paragraphs (HotpotQA: 2 gold + 8 distractors);
 * - `padded`: the workflow over those paragraphs mixed into other questions' Wikipedia paragraphs up
 *   to `--length` tokens (eval/datasets.ts `buildHotpotLongContext`; ceiling retention =
 *   padded F1 / gold F1).
 *
 * Per condition it prints F1 and EM (HotpotQA's official rules, eval/scorers.ts; CMRC's for
 * `--dataset cmrc`), with 95% bootstrap intervals; refusals (the workflow's NO ANSWER; for `plain`, a
 * reply that is empty or in the refusal vocabulary); the located-quote share (messages whose
 * evidence has at least one quote located in the chunk, among messages with evidence, counted at
 * the seeking agents; every citation of the result is also checked to slice its document exactly);
 * evidence recall (share of gold paragraphs among the documents the answer's citations point into,
 * for `gold` and `own`/`padded` via paragraph offsets); calls and tokens per question; and the ratios.
 *
 * FIDELITY_DEBUG=1 prints every citation whose offsets do not slice its quote.
 * Usage: npx tsx bench/fidelity.ts --model llama:<gguf> [--dataset hotpotqa|hotpot-train|cmrc]
 *   [--limit 30] [--offset 0] [--conditions plain,gold,own,padded] [--length 8000]
 *   [--chunk-tokens N] [--ranking score|hybrid|retrieval] [--reasoner-reply json|prose] [--best-effort]
  [--records file.jsonl] [--json]
 * `--records` appends one JSON line per (question, condition) and skips pairs already in the file,
 * so a long run resumes. Run it alone: two model processes on 2 cores slow each other many times.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { runLocal } from '../local/engine/run';
import { resolveCorpus } from '../local/engine/corpus';
import { loadLlamaModels } from '../models/llama/llama';
import { MAX_MODEL_SEQUENCES } from '../local/engine/defaults';
import type { RunOptionsInput } from '../shared/config';
import { contextFittedRunOptionDefaults } from '../models/context';
import { buildHotpotLongContext, defaultDataRoot, readFillerParagraphs, readHotpotQa, type HotpotQuestion } from '../eval/datasets';
import { cmrcF1, hotpotExactMatch, hotpotF1 } from '../eval/scorers';
import { bootstrapMeanInterval } from '../eval/stats';
import { isRefusal } from '../shared/llm/parse';
import type { AgentModel, ChatModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../shared/ports';
import { RANKING_MODES, type RankingMode } from '../shared/ranking';
import { LlmAgents } from '../shared/llm/agents';
import { REASONER_REPLIES, type ReasonerReply } from '../shared/llm/prompts';
import type { RunResult } from '../shared/types';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import { benchArgs, usageError } from './support/args';
import { llamaSpecArg } from './support/llama';
import { KAR_STOP_RULES, SYNCHRONIZATION_MODES, type KarStopRule, type SynchronizationMode } from '../shared/kar';
import { parseTokenCount, TOKEN_COUNT_FORMS } from '../shared/token-count';

const USAGE = `Usage: npx tsx bench/fidelity.ts --model llama:<gguf> [--dataset hotpotqa|hotpot-train|cmrc]
  [--limit 30] [--offset 0] [--conditions plain,gold,own,padded] [--length 8000]
  [--chunk-tokens N] [--ranking score|hybrid|retrieval] [--reasoner-reply json|prose] [--best-effort]
  [--kar-stop first|confirmed|checked] [--kar-first-k N] [--synchronization plain|follow-up] [--prose-leads]
  [--records file.jsonl] [--json]

Fidelity: how much of a model's own ability survives the agent protocol and the distractors. The same
model answers each question several ways: 'plain' (one plain prompt over the gold paragraphs, no
agents: the model's ceiling), 'gold' (the workflow 'extagents ask' runs, over the gold paragraphs),
'own' (the workflow over the question's own paragraphs, gold and distractors) and 'padded' (those
paragraphs mixed into other questions' paragraphs up to --length tokens). Prints per condition F1 and
EM with 95% bootstrap intervals, refusals, located-quote share, exact citations, evidence recall,
calls and tokens per question, and the ratios plain -> gold (protocol fidelity) and gold -> padded
(ceiling retention). Run it alone: two model processes on 2 cores slow each other many times.

Options:
  --model llama:<gguf>    the model, a llama: spec naming a GGUF file (required)
  --dataset NAME          hotpotqa (HotpotQA dev, distractor setting), hotpot-train (HotpotQA train
                          sample) or cmrc (CMRC 2018 dev, Chinese; no 'padded') (default hotpotqa)
  --limit N               questions (default 30)
  --offset N              questions skipped first (default 0)
  --conditions LIST       comma-separated, of plain, gold, own, padded (default plain,gold,own,padded)
  --length N              the padded context's length, tokens, 8000 or 8k (default 8000)
  --chunk-tokens N        chunk size, tokens, 8000 or 8k (default: fitted to the model's context, 40% of it,
                          64 to 8000)
  --ranking MODE          pool ranking, score|hybrid|retrieval (default: the run option's, hybrid)
  --reasoner-reply FORM   the reasoning agent's reply, json|prose (default: the llama: provider's)
  --best-effort           answer from the best evidence after the last round instead of refusing
                          (default off)
  --kar-stop RULE         the run option karStop, first|confirmed|checked (default: the run option's)
  --kar-first-k N         the run option karFirstK, messages of each round's first KAR step (default:
                          the model profile's, models/llama/profiles.ts)
  --synchronization MODE  the run option synchronization, plain|follow-up (default: the run option's)
  --prose-leads           the prose seeker also cites each cited sentence's paragraph lead
                          (LlmAgentsOptions.proseLeads; default off)
  --records FILE          append one JSON line per (question, condition) and skip the pairs already
                          in FILE, so a long run resumes (default: none)
  --json                  print one JSON line instead of the table (default off)
  -h, --help              print this and exit
Environment: FIDELITY_DEBUG=1 prints every citation whose offsets do not slice its quote.
`;

const CONDITIONS = ['plain', 'gold', 'own', 'padded'] as const;
type Condition = (typeof CONDITIONS)[number];

/** One benchmark question: its text, gold answers and paragraphs (gold flagged). */
interface BenchQuestion {
  id: string;
  question: string;
  answers: string[];
  paragraphs: Array<{ title: string; text: string; gold: boolean }>;
  hotpot?: HotpotQuestion;
}

/** One record: a question under one condition. */
interface BenchRecord {
  id: string;
  condition: Condition;
  answer: string;
  answered: boolean;
  f1: number;
  em: number;
  /** Messages with evidence, and those with at least one located quote (workflow conditions). */
  messages?: number;
  located?: number;
  /** Citations of the result, and those whose quote slices its document exactly. */
  citations?: number;
  exactCitations?: number;
  /** Gold paragraphs cited / gold paragraphs (workflow conditions). */
  recall?: number;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  ms: number;
}

/** A plain prompt over passages: the model's own ceiling (no JSON, no agents). */
const PLAIN_SYSTEM = 'You answer questions from the given passages. Reply with the answer only: a word or a short phrase.';

function plainUser(q: BenchQuestion): string {
  const passages = q.paragraphs
    .filter((p) => p.gold)
    .map((p) => `${p.title}\n${p.text}`)
    .join('\n\n');
  return `Passages:\n${passages}\n\nQuestion: ${q.question}\nAnswer:`;
}

/** Counts the seeking agents' messages and their located quotes (the model passed to the workflow). */
class CountingModel implements AgentModel {
  readonly description: string;
  messages = 0;
  located = 0;
  /** The inner model's follow-up question and sufficiency check, forwarded (absent when it has none). */
  readonly followUp?: AgentModel['followUp'];
  readonly checkAnswer?: AgentModel['checkAnswer'];
  constructor(private readonly inner: AgentModel) {
    this.description = inner.description;
    if (inner.followUp !== undefined) this.followUp = inner.followUp.bind(inner);
    if (inner.checkAnswer !== undefined) this.checkAnswer = inner.checkAnswer.bind(inner);
  }
  async seek(request: SeekRequest): Promise<SeekResult> {
    const result = await this.inner.seek(request);
    if (result.evidence !== null && result.evidence.trim() !== '') {
      this.messages += 1;
      if (result.spans.length > 0) this.located += 1;
    }
    return result;
  }
  reason(request: ReasonRequest): Promise<ReasonResult> {
    return this.inner.reason(request);
  }
}

function score(dataset: string, prediction: string, answered: boolean, golds: string[]): { f1: number; em: number } {
  if (!answered) return { f1: 0, em: 0 };
  if (dataset === 'cmrc') return { f1: cmrcF1(prediction, golds), em: golds.some((g) => g.trim() === prediction.trim()) ? 1 : 0 };
  return { f1: Math.max(...golds.map((g) => hotpotF1(prediction, g).f1)), em: Math.max(...golds.map((g) => hotpotExactMatch(prediction, g))) };
}

function loadQuestions(dataset: string, offset: number, limit: number): BenchQuestion[] {
  const root = defaultDataRoot();
  if (dataset === 'cmrc') {
    const raw = JSON.parse(readFileSync(path.join(root, 'chinese', 'cmrc2018_dev.squad.json'), 'utf8')) as {
      data: Array<{ title?: string; paragraphs: Array<{ context: string; qas: Array<{ id: string; question: string; answers: Array<{ text: string }> }> }> }>;
    };
    const out: BenchQuestion[] = [];
    for (const article of raw.data) {
      for (const p of article.paragraphs) {
        const qa = p.qas[0];
        if (qa)
          out.push({
            id: qa.id,
            question: qa.question,
            answers: qa.answers.map((a) => a.text),
            paragraphs: [{ title: article.title ?? '', text: p.context, gold: true }],
          });
      }
    }
    return out.slice(offset, offset + limit);
  }
  const file = dataset === 'hotpot-train' ? 'hotpot_train_100.hipporag.json' : 'hotpot_dev_distractor_100.reflexion.json';
  const { questions } = readHotpotQa(path.join(root, 'hotpotqa', file));
  return questions.slice(offset, offset + limit).map((q) => {
    const goldTitles = new Set(q.supportingFacts.map((f) => f.title));
    return {
      id: q.id,
      question: q.question,
      answers: [q.answer],
      paragraphs: q.context.map((c) => ({ title: c.title, text: c.sentences.join('').trim(), gold: goldTitles.has(c.title) })),
      hotpot: q,
    };
  });
}

/** The workflow over `documents` (one corpus file each), as `extagents ask` runs it. */
async function viaWorkflow(
  model: AgentModel,
  documents: Array<{ name: string; text: string }>,
  question: string,
  options: RunOptionsInput,
): Promise<RunResult> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'extagents-fidelity-'));
  try {
    const corpus = path.join(dir, 'corpus');
    await fs.mkdir(corpus);
    for (const d of documents) await fs.writeFile(path.join(corpus, d.name), d.text);
    return await runLocal({ files: await resolveCorpus([corpus]), question, options, model, stateDir: path.join(dir, 'state'), persistent: false });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    model: { type: 'string' },
    dataset: { type: 'string', default: 'hotpotqa' },
    limit: { type: 'string', default: '30' },
    offset: { type: 'string', default: '0' },
    conditions: { type: 'string', default: 'plain,gold,own,padded' },
    length: { type: 'string', default: '8000' },
    'chunk-tokens': { type: 'string' },
    ranking: { type: 'string' },
    'reasoner-reply': { type: 'string' },
    'prose-leads': { type: 'boolean', default: false },
    'kar-stop': { type: 'string' },
    'kar-first-k': { type: 'string' },
    synchronization: { type: 'string' },
    'best-effort': { type: 'boolean', default: false },
    records: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (!values.model?.startsWith('llama:')) usageError(USAGE, '--model llama:<gguf file> is required');
  if (!['hotpotqa', 'hotpot-train', 'cmrc'].includes(values.dataset))
    usageError(USAGE, `--dataset: one of hotpotqa, hotpot-train, cmrc; got ${values.dataset}`);
  const conditions = values.conditions.split(',').map((c) => c.trim()) as Condition[];
  for (const c of conditions) if (!CONDITIONS.includes(c)) throw new Error(`unknown condition ${c}; one of ${CONDITIONS.join(', ')}`);
  if (values.ranking !== undefined && !RANKING_MODES.includes(values.ranking as RankingMode)) throw new Error(`--ranking: one of ${RANKING_MODES.join(', ')}`);
  const reply = values['reasoner-reply'];
  if (reply !== undefined && !REASONER_REPLIES.includes(reply as ReasonerReply))
    usageError(USAGE, `--reasoner-reply: one of ${REASONER_REPLIES.join(', ')}; got ${reply}`);
  // Token counts as the CLI reads them (shared/token-count.ts): 8000, 8k.
  const chunkTokens = values['chunk-tokens'] === undefined ? undefined : parseTokenCount(values['chunk-tokens']);
  if (values['chunk-tokens'] !== undefined && chunkTokens === undefined)
    usageError(USAGE, `--chunk-tokens: ${TOKEN_COUNT_FORMS}; got ${values['chunk-tokens']}`);
  const paddedLength = parseTokenCount(values.length);
  if (paddedLength === undefined) usageError(USAGE, `--length: ${TOKEN_COUNT_FORMS}; got ${values.length}`);
  const dataset = values.dataset;
  const questions = loadQuestions(dataset, Number(values.offset), Number(values.limit));
  const llama = await loadLlamaModels(llamaSpecArg(values.model, USAGE), { sequences: Math.min(2, MAX_MODEL_SEQUENCES) });
  const fitted = contextFittedRunOptionDefaults(llama.contextTokens, llama.runDefaults);
  const stop = values['kar-stop'];
  if (stop !== undefined && !KAR_STOP_RULES.includes(stop as KarStopRule)) usageError(USAGE, `--kar-stop: one of ${KAR_STOP_RULES.join(', ')}; got ${stop}`);
  const firstK = values['kar-first-k'] === undefined ? undefined : Number(values['kar-first-k']);
  if (firstK !== undefined && !(Number.isSafeInteger(firstK) && firstK >= 1 && firstK <= 1024))
    usageError(USAGE, `--kar-first-k: an integer from 1 to 1024; got ${values['kar-first-k']}`);
  const sync = values.synchronization;
  if (sync !== undefined && !SYNCHRONIZATION_MODES.includes(sync as SynchronizationMode))
    usageError(USAGE, `--synchronization: one of ${SYNCHRONIZATION_MODES.join(', ')}; got ${sync}`);
  const agents =
    reply === undefined && !values['prose-leads']
      ? llama.agents
      : new LlmAgents({
          seeker: llama.seeker,
          reasoner: llama.reasoner,
          seekerReply: llama.seeker.profile.seekerReply,
          reasonerReply: (reply as ReasonerReply | undefined) ?? llama.reasoner.profile.reasonerReply,
          proseLeads: values['prose-leads'],
        });
  const options: RunOptionsInput = {
    ...fitted,
    concurrency: 1,
    ...(chunkTokens !== undefined && { chunkTokens }),
    ...(values.ranking !== undefined && { ranking: values.ranking as RankingMode }),
    ...(values['best-effort'] && { bestEffort: true }),
    ...(stop !== undefined && { karStop: stop as KarStopRule }),
    ...(firstK !== undefined && { karFirstK: firstK }),
    ...(sync !== undefined && { synchronization: sync as SynchronizationMode }),
  };
  const filler = conditions.includes('padded') && dataset !== 'cmrc' ? readFillerParagraphs().paragraphs : [];
  const done = new Map<string, BenchRecord>();
  if (values.records && existsSync(values.records)) {
    for (const line of readFileSync(values.records, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const r = JSON.parse(line) as BenchRecord;
      done.set(`${r.id}|${r.condition}`, r);
    }
  }
  const records: BenchRecord[] = [];
  for (const [i, q] of questions.entries()) {
    for (const condition of conditions) {
      const key = `${q.id}|${condition}`;
      const previous = done.get(key);
      if (previous) {
        records.push(previous);
        continue;
      }
      const record = await runCondition(condition, q, dataset, llama.reasoner, agents, options, filler, paddedLength);
      records.push(record);
      if (values.records) appendFileSync(values.records, `${JSON.stringify(record)}\n`);
      process.stderr.write(
        `[${i + 1}/${questions.length}] ${condition.padEnd(6)} f1=${record.f1.toFixed(2)} ${record.answered ? '' : '(refused) '}${JSON.stringify(record.answer).slice(0, 60)} gold=${JSON.stringify(q.answers[0])} ${Math.round(record.ms)} ms\n`,
      );
    }
  }
  report(records, conditions, values.json);
}

async function runCondition(
  condition: Condition,
  q: BenchQuestion,
  dataset: string,
  chat: ChatModel,
  agents: AgentModel,
  options: RunOptionsInput,
  filler: ReturnType<typeof readFillerParagraphs>['paragraphs'],
  length: number,
): Promise<BenchRecord> {
  const started = performance.now();
  if (condition === 'plain') {
    const response = await chat.complete({
      role: 'reasoner',
      system: PLAIN_SYSTEM,
      messages: [{ role: 'user', text: plainUser(q) }],
      maxTokens: 64,
      temperature: 0,
    });
    const answer = response.text.trim().split('\n')[0].trim();
    const answered = answer !== '' && !isRefusal(answer);
    return {
      id: q.id,
      condition,
      answer,
      answered,
      ...score(dataset, answer, answered, q.answers),
      calls: 1,
      inputTokens: response.inputTokens,
      outputTokens: response.outputTokens,
      ms: performance.now() - started,
    };
  }
  let documents: Array<{ name: string; text: string; gold: boolean }>;
  if (condition === 'gold') documents = q.paragraphs.filter((p) => p.gold).map((p, i) => ({ name: `p${i}.txt`, text: `${p.title}\n${p.text}`, gold: true }));
  else if (condition === 'own')
    documents = q.paragraphs.map((p, i) => ({ name: `p${String(i).padStart(2, '0')}.txt`, text: `${p.title}\n${p.text}`, gold: p.gold }));
  else {
    if (!q.hotpot) throw new Error('the padded condition needs a HotpotQA dataset');
    const built = buildHotpotLongContext(q.hotpot, filler, { targetTokens: length });
    documents = [{ name: 'context.txt', text: built.document.text, gold: false }];
  }
  const counting = new CountingModel(agents);
  const result = await viaWorkflow(counting, documents, q.question, options);
  const texts = new Map(documents.map((d) => [d.name, d.text]));
  // A citation's quote is shown with its white space collapsed and cut at a bound (shared/pipeline/finalize.ts).
  const slices = (c: RunResult['citations'][number]): boolean => {
    const slice = texts.get(c.documentId)?.slice(c.start, c.end);
    return slice !== undefined && slice.replace(/\s+/g, ' ').trim().startsWith(c.quote.replace(/…$/, ''));
  };
  const exact = result.citations.filter(slices).length;
  if (process.env.FIDELITY_DEBUG) {
    for (const c of result.citations) {
      if (!slices(c))
        console.error(
          `inexact citation ${c.documentId} [${c.start}, ${c.end}): quote ${JSON.stringify(c.quote)} slice ${JSON.stringify(texts.get(c.documentId)?.slice(c.start, c.end))}`,
        );
    }
  }
  let recall: number | undefined;
  if (condition !== 'padded') {
    const golds = documents.filter((d) => d.gold).map((d) => d.name);
    const cited = new Set(result.citations.map((c) => c.documentId));
    recall = golds.length > 0 ? golds.filter((g) => cited.has(g)).length / golds.length : undefined;
  } else if (q.hotpot) {
    const built = buildHotpotLongContext(q.hotpot, filler, { targetTokens: length });
    const goldTitles = new Set(q.paragraphs.filter((p) => p.gold).map((p) => p.title));
    const gold = (built.document.paragraphs ?? []).filter((p) => p.own && goldTitles.has(p.title));
    const hit = gold.filter((p) => result.citations.some((c) => c.start < p.end && c.end > p.start)).length;
    recall = gold.length > 0 ? hit / gold.length : undefined;
  }
  const calls = result.usage.seeker.calls + result.usage.reasoner.calls;
  return {
    id: q.id,
    condition,
    answer: result.answer,
    answered: result.answerable,
    ...score(dataset, result.answer, result.answerable, q.answers),
    messages: counting.messages,
    located: counting.located,
    citations: result.citations.length,
    exactCitations: exact,
    ...(recall !== undefined && { recall }),
    calls,
    inputTokens: result.usage.seeker.inputTokens + result.usage.reasoner.inputTokens,
    outputTokens: result.usage.seeker.outputTokens + result.usage.reasoner.outputTokens,
    ms: performance.now() - started,
  };
}

function report(records: BenchRecord[], conditions: Condition[], json: boolean): void {
  const rows = conditions.map((condition) => {
    const rs = records.filter((r) => r.condition === condition);
    const mean = (f: (r: BenchRecord) => number): number => (rs.length ? rs.reduce((s, r) => s + f(r), 0) / rs.length : 0);
    const f1 = rs.map((r) => r.f1);
    const interval = rs.length > 1 ? bootstrapMeanInterval(f1) : { low: mean((r) => r.f1), high: mean((r) => r.f1) };
    const msgs = rs.reduce((s, r) => s + (r.messages ?? 0), 0);
    const located = rs.reduce((s, r) => s + (r.located ?? 0), 0);
    const cites = rs.reduce((s, r) => s + (r.citations ?? 0), 0);
    const exact = rs.reduce((s, r) => s + (r.exactCitations ?? 0), 0);
    const withRecall = rs.filter((r) => r.recall !== undefined);
    return {
      condition,
      n: rs.length,
      f1: mean((r) => r.f1),
      f1Low: interval.low,
      f1High: interval.high,
      em: mean((r) => r.em),
      refusals: rs.filter((r) => !r.answered).length,
      located: condition === 'plain' ? null : msgs > 0 ? located / msgs : null,
      messages: msgs,
      exactCitations: condition === 'plain' ? null : cites > 0 ? exact / cites : null,
      recall: withRecall.length ? withRecall.reduce((s, r) => s + (r.recall ?? 0), 0) / withRecall.length : null,
      calls: mean((r) => r.calls),
      inputTokens: mean((r) => r.inputTokens),
      outputTokens: mean((r) => r.outputTokens),
      seconds: mean((r) => r.ms) / 1000,
    };
  });
  const by = new Map(rows.map((r) => [r.condition, r]));
  const ratio = (a?: { f1: number }, b?: { f1: number }): number | null => (a && b && b.f1 > 0 ? a.f1 / b.f1 : null);
  const ratios = {
    protocolFidelity: ratio(by.get('gold'), by.get('plain')),
    ownRetention: ratio(by.get('own'), by.get('gold')),
    ceilingRetention: ratio(by.get('padded'), by.get('gold')),
  };
  if (json) {
    process.stdout.write(`${JSON.stringify({ rows, ratios })}\n`);
    return;
  }
  const pct = (x: number | null): string => (x === null ? '–' : (100 * x).toFixed(1));
  const lines = [
    '| condition | n | F1 [95% CI] | EM | refusals | located quotes | exact citations | evidence recall | calls | input tok | output tok | s/question |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.condition} | ${r.n} | ${pct(r.f1)} [${pct(r.f1Low)}, ${pct(r.f1High)}] | ${pct(r.em)} | ${r.refusals} | ${r.located === null ? '–' : `${pct(r.located)} (of ${r.messages})`} | ${pct(r.exactCitations)} | ${pct(r.recall)} | ${r.calls.toFixed(1)} | ${Math.round(r.inputTokens)} | ${Math.round(r.outputTokens)} | ${r.seconds.toFixed(1)} |`,
    ),
    '',
    `protocol fidelity (gold / plain F1): ${ratios.protocolFidelity === null ? '–' : ratios.protocolFidelity.toFixed(2)}`,
    `own-paragraph retention (own / gold F1): ${ratios.ownRetention === null ? '–' : ratios.ownRetention.toFixed(2)}`,
    `ceiling retention (padded / gold F1): ${ratios.ceilingRetention === null ? '–' : ratios.ceilingRetention.toFixed(2)}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main()
  .then(async () => {
    const { disposeLlamaModels } = await import('../models/llama/llama');
    await disposeLlamaModels();
  })
  .catch((error: unknown) => {
    process.stderr.write(`fidelity: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
