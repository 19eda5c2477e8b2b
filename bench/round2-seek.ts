/**
 * What a round-2 seeking agent makes of the synchronized messages, at two synchronization budgets
 * (issue 38: the default budget of a model with a fixed chunk size follows the chunk,
 * models/context.ts `syncBudgetForChunk`). For each HotpotQA bridge question (the answer in one gold
 * paragraph, the entity that leads to it in the other), padded to `--length` tokens
 * (eval/datasets.ts `buildHotpotLongContext`), round 1 runs through the product's workflow
 * (`localWorkflowRunner`, what `extagents ask` runs) with the model's defaults and the wide budget;
 * the reasoning agent's round-1 steps are refused without a model call, so round 2 runs; then the
 * chunk that holds the answer's supporting sentence is sought in round 2 twice, with the workflow's
 * synchronized messages (the wide budget) and with the same list fitted to the narrow budget
 * (`synchronizationSnapshot`, the product's rule); the other chunks of round 2 are not sought.
 *
 * Per question and condition (round 1, round 2 wide, round 2 narrow): whether the seeking agent's
 * evidence holds the gold answer (HotpotQA normalization), its relevance score, the prompt tokens it
 * evaluated (prompt − read from the KV cache; the narrow call follows the wide one on the same
 * sequence and reuses its prefix, so its count is not a run's and the table leaves it out); for
 * round 2, whether the bridge paragraph's supporting sentence was among the synchronized messages.
 * Paired bootstrap of the answer-hit difference.
 * Run it alone (2 cores: a second model process slows both).
 *
 * Usage: npx tsx bench/round2-seek.ts --model "llama:<gguf>?ctx=4096" [--dataset hotpot-train|hotpotqa]
 *   [--limit 30] [--length 4096] [--narrow 150] [--records file.jsonl] [--json]
 */
import { appendFileSync, existsSync } from 'node:fs';
import { z } from 'zod';
import path from 'node:path';
import { contextFittedRunOptionDefaults } from '../models/context';
import { disposeLlamaModels } from '../models/llama/llama';
import { parseRunOptions } from '../shared/config';
import { buildHotpotLongContext, defaultDataRoot, readFillerParagraphs, readHotpotQa, type HotpotQuestion } from '../eval/datasets';
import { formatWarning } from '../eval/jsonl';
import { normalizeAnswer } from '../eval/scorers';
import { pairedBootstrap } from '../eval/stats';
import { localWorkflowRunner } from '../local/engine/eval-workflow';
import { synchronizationSnapshot } from '../shared/method';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../shared/ports';
import { zeroUsage } from '../shared/run-counters';
import { parseTokenCount } from '../shared/token-count';
import { NO_ANSWER } from '../shared/types';
import { benchArgs, usageError } from './support/args';
import { llamaSpecArg, loadBenchLlama } from './support/llama';
import { readBenchRecords } from './support/records';

const USAGE = `Usage: npx tsx bench/round2-seek.ts --model "llama:<gguf>?ctx=4096" [--dataset hotpot-train|hotpotqa]
  [--limit 30] [--length 4096] [--narrow 150] [--records file.jsonl] [--json]

What a round-2 seeking agent makes of the synchronized messages at two budgets: per HotpotQA bridge
question, padded to --length tokens, round 1 through the product's workflow (model defaults, the
context's wide synchronization budget), then the chunk holding the answer sought in round 2 with the
workflow's synchronized messages and with the same list fitted to --narrow tokens. Prints how often
its evidence holds the gold answer in round 1 and in round 2 at each budget, scores, evaluated
prompt tokens, and the paired difference. Run it alone.

Options:
  --model SPEC        a llama: spec (the reference model: llama:$(./scripts/fetch-reference-model.sh)?ctx=4096)
  --dataset NAME      hotpot-train (HotpotQA train, the tuning set; default) or hotpotqa (dev)
  --limit N           first N bridge questions whose answer chunk is found (default 30)
  --length N          padded context length, o200k tokens (default 4096)
  --narrow N          the narrow synchronization budget, o200k tokens (default 150)
  --records FILE      append one JSON line per question; questions already in it are skipped
  --json              one JSON object instead of the table
  -h, --help          print this and exit
`;

const { values } = benchArgs(USAGE, {
  model: { type: 'string' },
  dataset: { type: 'string', default: 'hotpot-train' },
  limit: { type: 'string', default: '30' },
  length: { type: 'string', default: '4096' },
  narrow: { type: 'string', default: '150' },
  records: { type: 'string' },
  json: { type: 'boolean', default: false },
});
if (values.model === undefined) usageError(USAGE, '--model is required');
if (!['hotpot-train', 'hotpotqa'].includes(values.dataset)) usageError(USAGE, `--dataset: hotpot-train or hotpotqa expected, got ${values.dataset}`);
const limit = /^[0-9]{1,6}$/.test(values.limit) ? Number(values.limit) : 0;
if (limit < 1) usageError(USAGE, `--limit: a whole number 1-999999 expected, got ${values.limit}`);
const length = parseTokenCount(values.length);
if (length === undefined || length < 500 || length > 1_000_000) usageError(USAGE, `--length: a token count of 500-1M expected, got ${values.length}`);
const narrow = parseTokenCount(values.narrow);
if (narrow === undefined || narrow < 1 || narrow > 200_000) usageError(USAGE, `--narrow: a token count of 1-200k expected, got ${values.narrow}`);

const spec = llamaSpecArg(values.model as string, USAGE);
/**
 * The settings a record was made with (the model by its file names and context, not its path, so
 * that records resume on another machine): a record of other settings is not resumed from.
 */
const RUN = {
  model: `llama:${[...new Set([spec.seekerModelId, spec.reasonerModelId])].map((f) => path.basename(f)).join(',')}${spec.contextTokens !== undefined ? `?ctx=${spec.contextTokens}` : ''}`,
  dataset: values.dataset,
  length: length as number,
  narrow: narrow as number,
};

/**
 * One seek of the answer chunk, as `--records` stores it: whether its evidence holds the answer, its
 * score, the prompt tokens it evaluated; in round 2 the synchronized messages, their tokens (o200k)
 * and whether the bridge sentence is among them.
 */
const SeekSchema = z.object({
  hit: z.boolean(),
  score: z.number(),
  evaluated: z.number(),
  synchronized: z.object({ messages: z.number(), tokens: z.number(), bridge: z.boolean() }).optional(),
});
type Seek = z.infer<typeof SeekSchema>;
/** One question's record (a line of `--records`). */
const QuestionRecordSchema = z.object({
  id: z.string().min(1),
  run: z.object({ model: z.string(), dataset: z.string(), length: z.number(), narrow: z.number() }),
  round1: SeekSchema,
  wide: SeekSchema,
  narrow: SeekSchema,
});
type QuestionRecord = z.infer<typeof QuestionRecordSchema>;

/**
 * The records of `--records` (none when the file does not exist yet), read before the model loads.
 * @returns never for a directory, a missing folder, a line that is not a record, or a record made with
 *   other settings: a usage error naming the file and line.
 */
function readRecords(file: string | undefined): Map<string, QuestionRecord> {
  const done = new Map<string, QuestionRecord>();
  if (file === undefined) return done;
  if (file === '') usageError(USAGE, '--records: a file name expected');
  if (!existsSync(file)) {
    if (!existsSync(path.dirname(path.resolve(file)))) usageError(USAGE, `--records: the folder of ${file} does not exist`);
    return done;
  }
  for (const { line, value } of readBenchRecords(file, QuestionRecordSchema, USAGE, 'a record of this bench')) {
    const run = value.run;
    if (run.model !== RUN.model || run.dataset !== RUN.dataset || run.length !== RUN.length || run.narrow !== RUN.narrow) {
      usageError(USAGE, `${file}:${line}: a record of another run (${JSON.stringify(run)}); this run is ${JSON.stringify(RUN)}: give another --records file`);
    }
    done.set(value.id, value);
  }
  return done;
}
const done = readRecords(values.records);

/** The gold sentence of a paragraph's first supporting fact, trimmed. */
function supportingSentence(q: HotpotQuestion, title: string): string | undefined {
  const fact = q.supportingFacts.find((f) => f.title === title);
  const paragraph = q.context.find((p) => p.title === title);
  return fact === undefined ? undefined : paragraph?.sentences[fact.sentence]?.trim();
}

/** The answer paragraph's and the bridge paragraph's supporting sentences of a bridge question, or undefined. */
function goldSentences(q: HotpotQuestion): { answer: string; bridge: string } | undefined {
  if (q.type !== 'bridge') return undefined;
  const titles = [...new Set(q.supportingFacts.map((f) => f.title))];
  if (titles.length !== 2) return undefined;
  const answer = normalizeAnswer(q.answer);
  const holds = titles.map((t) => normalizeAnswer(q.context.find((p) => p.title === t)?.sentences.join(' ') ?? '').includes(answer));
  if (holds[0] === holds[1]) return undefined; // both or neither: no single answer paragraph
  const [answerTitle, bridgeTitle] = holds[0] ? titles : [titles[1], titles[0]];
  const a = supportingSentence(q, answerTitle);
  const b = supportingSentence(q, bridgeTitle);
  return a !== undefined && b !== undefined && a.length >= 20 && b.length >= 20 ? { answer: a, bridge: b } : undefined;
}

async function main(): Promise<void> {
  const llama = await loadBenchLlama(spec, { sequences: 1 }, USAGE);
  const fitted = contextFittedRunOptionDefaults(llama.contextTokens, llama.runDefaults);
  // The model's default budget (12% of its context), the one the workflow runs with.
  const wide = fitted.syncBudgetTokens;
  const syncMaxMessages = parseRunOptions({}).syncMaxMessages;
  if ((narrow as number) >= wide) usageError(USAGE, `--narrow ${narrow}: the narrow budget must be below the model's default (wide) budget, ${wide} tokens`);
  const file = values.dataset === 'hotpot-train' ? 'hotpot_train_100.hipporag.json' : 'hotpot_dev_distractor_100.reflexion.json';
  const questions = readHotpotQa(path.join(defaultDataRoot(), 'hotpotqa', file)).questions;
  const filler = readFillerParagraphs().paragraphs;
  const records: QuestionRecord[] = [];
  for (const q of questions) {
    if (records.length >= limit) break;
    const gold = goldSentences(q);
    if (gold === undefined) continue;
    const previous = done.get(q.id);
    if (previous !== undefined) {
      records.push(previous);
      continue;
    }
    const answer = normalizeAnswer(q.answer);
    const holdsAnswer = (evidence: string | null): boolean => evidence !== null && normalizeAnswer(evidence).includes(answer);
    const key = gold.answer.slice(0, 40);
    const seekOf = (r: SeekResult, synchronized?: SeekRequest['synchronized']): Seek => ({
      hit: holdsAnswer(r.evidence),
      score: r.score,
      evaluated: r.usage.inputTokens - (r.usage.cacheReadInputTokens ?? 0),
      ...(synchronized !== undefined && {
        synchronized: {
          messages: synchronized.length,
          tokens: synchronized.reduce((n, m) => n + m.tokens, 0),
          bridge: synchronized.some((m) => m.evidence.includes(gold.bridge.slice(0, 40))),
        },
      }),
    });
    const record: Partial<QuestionRecord> = { id: q.id, run: RUN };
    const model: AgentModel = {
      description: llama.agents.description,
      seek: async (request: SeekRequest): Promise<SeekResult> => {
        const isAnswerChunk = request.chunk.text.includes(key);
        if (request.round === 1) {
          const r = await llama.agents.seek(request);
          if (isAnswerChunk) record.round1 = seekOf(r);
          return r;
        }
        if (!isAnswerChunk) return { evidence: null, score: 0, spans: [], usage: zeroUsage(), warnings: [] };
        const small = synchronizationSnapshot(request.synchronized, {
          syncMaxMessages,
          syncBudgetTokens: narrow as number,
        });
        const r = await llama.agents.seek(request);
        record.wide = seekOf(r, request.synchronized);
        record.narrow = seekOf(await llama.agents.seek({ ...request, synchronized: small }), small);
        return r;
      },
      reason: async (request: ReasonRequest): Promise<ReasonResult> =>
        request.force
          ? { answerable: true, answer: 'unknown', citedMessageIds: [], usage: zeroUsage(), warnings: [] }
          : { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage: zeroUsage(), warnings: [] },
    };
    const built = buildHotpotLongContext(q, filler, { targetTokens: length as number });
    for (const w of built.warnings) process.stderr.write(`[${q.id}] ${formatWarning(w)}\n`);
    const doc = built.document;
    await localWorkflowRunner({
      question: q.question,
      documents: [{ id: doc.id, text: doc.text, title: doc.title }],
      options: { ...fitted, concurrency: 1, rounds: 2, bestEffort: true },
      model,
    });
    if (record.round1 === undefined || record.wide === undefined || record.narrow === undefined) {
      process.stderr.write(`[${q.id}] the answer sentence was not within one chunk: skipped\n`);
      continue;
    }
    const complete = record as QuestionRecord;
    records.push(complete);
    if (values.records !== undefined) appendFileSync(values.records, `${JSON.stringify(complete)}\n`);
    if (!values.json) {
      const s = (x: Seek): string => `${x.hit ? 'hit' : 'miss'} ${x.score}`;
      process.stderr.write(`[${records.length}/${limit}] ${q.id} round 1 ${s(complete.round1)} | wide ${s(complete.wide)} | narrow ${s(complete.narrow)}\n`);
    }
  }
  const share = (f: (r: QuestionRecord) => boolean): number => records.filter(f).length;
  const hits = (c: 'round1' | 'wide' | 'narrow'): number[] => records.map((r) => (r[c].hit ? 1 : 0));
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const summary = {
    model: values.model,
    dataset: values.dataset,
    length,
    budgets: { wide, narrow },
    n: records.length,
    hits: { round1: share((r) => r.round1.hit), wide: share((r) => r.wide.hit), narrow: share((r) => r.narrow.hit) },
    bridgeSynchronized: { wide: share((r) => r.wide.synchronized?.bridge === true), narrow: share((r) => r.narrow.synchronized?.bridge === true) },
    synchronizedTokens: {
      wide: mean(records.map((r) => r.wide.synchronized?.tokens ?? 0)),
      narrow: mean(records.map((r) => r.narrow.synchronized?.tokens ?? 0)),
    },
    // Not the narrow call's: it follows the wide call on the same sequence and reuses its prefix.
    evaluated: {
      round1: mean(records.map((r) => r.round1.evaluated)),
      wide: mean(records.map((r) => r.wide.evaluated)),
    },
    narrowMinusWide: pairedBootstrap(hits('narrow'), hits('wide')),
    wideMinusRound1: pairedBootstrap(hits('wide'), hits('round1')),
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } else {
    const n = summary.n;
    const f = (x: number): string => x.toFixed(0);
    process.stdout.write(`${summary.dataset}, ${n} bridge questions padded to ${length} tokens; budgets wide ${wide}, narrow ${narrow} (o200k tokens)\n\n`);
    process.stdout.write(
      '| seek of the answer chunk | evidence holds the answer | bridge sentence synchronized | synchronized tokens | prompt tokens evaluated |\n|---|---|---|---|---|\n',
    );
    process.stdout.write(`| round 1 | ${summary.hits.round1} of ${n} | – | – | ${f(summary.evaluated.round1)} |\n`);
    process.stdout.write(
      `| round 2, wide (${wide}) | ${summary.hits.wide} of ${n} | ${summary.bridgeSynchronized.wide} of ${n} | ${f(summary.synchronizedTokens.wide)} | ${f(summary.evaluated.wide)} |\n`,
    );
    process.stdout.write(
      `| round 2, narrow (${narrow}) | ${summary.hits.narrow} of ${n} | ${summary.bridgeSynchronized.narrow} of ${n} | ${f(summary.synchronizedTokens.narrow)} | – (reuses the wide call's prefix) |\n\n`,
    );
    const d = (c: typeof summary.narrowMinusWide): string =>
      `${(c.mean * 100).toFixed(1)} points [${(c.low * 100).toFixed(1)}, ${(c.high * 100).toFixed(1)}], p = ${c.p.toFixed(2)}`;
    process.stdout.write(`narrow − wide: ${d(summary.narrowMinusWide)}\nwide − round 1: ${d(summary.wideMinusRound1)}\n`);
  }
  await disposeLlamaModels();
}

main().catch((error: unknown) => {
  process.stderr.write(`round2-seek: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
