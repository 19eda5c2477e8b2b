/**
 * Where a local model's time goes in the method (issue 38 item 1): one padded HotpotQA question per
 * length through the product's workflow (`localWorkflowRunner`, what `extagents ask` runs) with a
 * real `llama:` model, measured beside the engine's own rates in the same run:
 *
 * - the engine: prefill rate (one plain prompt of about `--prefill-tokens` tokens of the corpus, a
 *   1-token reply) and generation rate (a free reply of 64 tokens), same model, same threads;
 * - round 1: wall time of the seeking phase, model time, prompt tokens per corpus token (both in
 *   the model's tokenizer), tokens generated per seek, prompt tokens read from the KV cache;
 * - KAR: every step of the round-1 schedule is run for real (the reasoning agent's reply is
 *   recorded, then a refusal is returned to the workflow so the schedule runs to its end), with the
 *   prompt tokens each step evaluated (prompt − read from the cache) against the tokens of the
 *   messages it added to the step before;
 * - round 2 (forced by those refusals): wall time and model time of its seeking phase, against
 *   round 1's.
 * The headline: round 1's seeking wall time divided by the engine's time for the corpus tokens
 * alone (corpus tokens / prefill rate). Run it alone (2 cores: a second model process slows both).
 *
 * Usage: npx tsx bench/llama-method-time.ts [--model llama:<gguf>?ctx=4096] [--lengths 4096,16384]
 *   [--offset 0] [--prefill-tokens 2000] [--json]
 */
import path from 'node:path';
import { contextFittedRunOptionDefaults } from '../models/context';
import { disposeLlamaModels } from '../models/llama/llama';
import { buildHotpotLongContext, defaultDataRoot, readFillerParagraphs, readHotpotQa } from '../eval/datasets';
import { localWorkflowRunner } from '../local/engine/eval-workflow';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../shared/ports';
import { NO_ANSWER } from '../shared/types';
import { parseTokenCount } from '../shared/token-count';
import { DEFAULT_TEST_MODEL_PATH } from '../test/support/real-model';
import { benchArgs, usageError } from './support/args';
import { llamaSpecArg, loadBenchLlama } from './support/llama';

const USAGE = `Usage: npx tsx bench/llama-method-time.ts [--model llama:<gguf>?ctx=4096] [--lengths 4096,16384]
  [--offset 0] [--prefill-tokens 2000] [--json]

Where a local model's time goes in the method: the engine's prefill and generation rates, then one
padded HotpotQA dev question per length through the product's workflow with every KAR step of round
1 run and refused (so the whole schedule and round 2 run): round 1's seeking wall and model time,
prompt tokens per corpus token, tokens generated per seek, KV-cache reads, each KAR step's evaluated
prompt tokens against the tokens it added, round 2's seeking time against round 1's. Headline: round
1's seeking wall time / (corpus tokens / prefill rate). Run it alone.

Options:
  --model SPEC          a llama: spec (default: llama:<the test model>?ctx=4096; the reference
                        model: llama:$(./scripts/fetch-reference-model.sh)?ctx=4096)
  --lengths LIST        padded context lengths, o200k tokens (default 4096,16384: 1x and 4x a 4k window)
  --offset N            which dev question (default 0: the first)
  --prefill-tokens N    the engine's prefill prompt, tokens of the model (default 2000)
  --json                one JSON object instead of the table
  -h, --help            print this and exit
`;

const { values } = benchArgs(USAGE, {
  model: { type: 'string', default: `llama:${DEFAULT_TEST_MODEL_PATH}?ctx=4096` },
  lengths: { type: 'string', default: '4096,16384' },
  offset: { type: 'string', default: '0' },
  'prefill-tokens': { type: 'string', default: '2000' },
  json: { type: 'boolean', default: false },
});
const parsedLengths = values.lengths.split(',').map((l) => parseTokenCount(l.trim()));
if (parsedLengths.some((l) => l === undefined || l < 500)) usageError(USAGE, `--lengths: token counts of at least 500 expected, got ${values.lengths}`);
const lengths = parsedLengths as number[];
const offset = Number(values.offset);
const prefillTokens = Number(values['prefill-tokens']);
if (!Number.isInteger(offset) || offset < 0) usageError(USAGE, `--offset: a whole number expected, got ${values.offset}`);
if (!Number.isInteger(prefillTokens) || prefillTokens < 100) usageError(USAGE, '--prefill-tokens: at least 100');

/** One model call as the bench saw it (ms of wall time; tokens of the model's tokenizer). */
interface Call {
  round: number;
  start: number;
  end: number;
  input: number;
  cacheRead: number;
  output: number;
  /** Tokens (the model's) of the synchronized messages' evidence in the prompt (round >= 2). */
  synchronized: number;
}

/** The seeking phase of one round: wall (first start to last end), model time, tokens. */
function phase(calls: readonly Call[]): {
  calls: number;
  wallS: number;
  modelS: number;
  input: number;
  cacheRead: number;
  outputPerCall: number;
  evaluatedPerCall: number;
  synchronizedPerCall: number;
} {
  if (calls.length === 0) return { calls: 0, wallS: 0, modelS: 0, input: 0, cacheRead: 0, outputPerCall: 0, evaluatedPerCall: 0, synchronizedPerCall: 0 };
  const sum = (f: (c: Call) => number): number => calls.reduce((s, c) => s + f(c), 0);
  return {
    calls: calls.length,
    wallS: (Math.max(...calls.map((c) => c.end)) - Math.min(...calls.map((c) => c.start))) / 1000,
    modelS: sum((c) => c.end - c.start) / 1000,
    input: sum((c) => c.input),
    cacheRead: sum((c) => c.cacheRead),
    outputPerCall: sum((c) => c.output) / calls.length,
    evaluatedPerCall: sum((c) => c.input - c.cacheRead) / calls.length,
    synchronizedPerCall: sum((c) => c.synchronized) / calls.length,
  };
}

/** The KAR steps after the first, summed: tokens evaluated against tokens of the messages they added. */
function karAfterFirst(steps: ReadonlyArray<{ evaluated: number; addedTokens: number }>): { evaluated: number; added: number } {
  const later = steps.slice(1);
  return { evaluated: later.reduce((n, s) => n + s.evaluated, 0), added: later.reduce((n, s) => n + s.addedTokens, 0) };
}

async function main(): Promise<void> {
  const llama = await loadBenchLlama(llamaSpecArg(values.model, USAGE), { sequences: 1 }, USAGE);
  const chat = llama.seeker;
  const filler = readFillerParagraphs().paragraphs;
  const [question] = readHotpotQa(path.join(defaultDataRoot(), 'hotpotqa', 'hotpot_dev_distractor_100.reflexion.json')).questions.slice(offset, offset + 1);
  if (question === undefined) usageError(USAGE, `--offset ${offset}: no such dev question`);

  // The engine's own rates, before any call of the method (so nothing is in the KV cache yet).
  const plainText = buildHotpotLongContext(question, filler, { targetTokens: Math.max(...lengths) }).document.text;
  const words = plainText.split(/\s+/);
  let prefillPrompt = '';
  for (let n = 200; n <= words.length; n += 200) {
    prefillPrompt = words.slice(0, n).join(' ');
    if (chat.countTokens(prefillPrompt) >= prefillTokens) break;
  }
  const timed = async (text: string, maxTokens: number): Promise<{ ms: number; input: number; output: number }> => {
    const started = performance.now();
    const r = await chat.complete({ role: 'seeker', system: '', messages: [{ role: 'user', text }], maxTokens, temperature: 0 });
    return { ms: performance.now() - started, input: r.inputTokens - (r.cacheReadInputTokens ?? 0), output: r.outputTokens };
  };
  const prefill = await timed(prefillPrompt, 1);
  const generation = await timed('Write a long story about a lighthouse keeper.', 64);
  const prefillRate = prefill.input / (prefill.ms / 1000);
  const generationRate = generation.output / Math.max(0.001, (generation.ms - (generation.input / prefillRate) * 1000) / 1000);

  const fitted = contextFittedRunOptionDefaults(llama.contextTokens, llama.runDefaults);
  const results = [];
  for (const length of lengths) {
    const doc = buildHotpotLongContext(question, filler, { targetTokens: length }).document;
    const calls: Call[] = [];
    const steps: Array<{ k: number; input: number; cacheRead: number; evaluated: number; addedTokens: number; ms: number }> = [];
    let round = 1;
    let previousIds: string[] = [];
    const model: AgentModel = {
      description: llama.agents.description,
      seek: async (request: SeekRequest): Promise<SeekResult> => {
        round = request.round;
        const start = performance.now();
        const r = await llama.agents.seek(request);
        calls.push({
          round: request.round,
          start,
          end: performance.now(),
          input: r.usage.inputTokens,
          cacheRead: r.usage.cacheReadInputTokens ?? 0,
          output: r.usage.outputTokens,
          synchronized: request.round >= 2 ? request.synchronized.reduce((n, m) => n + chat.countTokens(m.evidence), 0) : 0,
        });
        return r;
      },
      reason: async (request: ReasonRequest): Promise<ReasonResult> => {
        const start = performance.now();
        const r = await llama.agents.reason(request);
        if (round === 1 && !request.force) {
          const added = request.messages.filter((m) => !previousIds.includes(m.id));
          previousIds = request.messages.map((m) => m.id);
          const cacheRead = r.usage.cacheReadInputTokens ?? 0;
          steps.push({
            k: request.messages.length,
            input: r.usage.inputTokens,
            cacheRead,
            evaluated: r.usage.inputTokens - cacheRead,
            addedTokens: added.reduce((s, m) => s + chat.countTokens(m.evidence), 0),
            ms: performance.now() - start,
          });
          // Refused to the workflow, so the whole schedule and round 2 run (the reply is measured above).
          return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage: r.usage, warnings: r.warnings };
        }
        return r;
      },
    };
    const started = performance.now();
    const { result } = await localWorkflowRunner({
      question: question.question,
      documents: [{ id: doc.id, text: doc.text, title: doc.title }],
      options: { ...fitted, concurrency: 1, rounds: 2, bestEffort: true },
      model,
    });
    const wallS = (performance.now() - started) / 1000;
    const corpusTokens = chat.countTokens(doc.text);
    const r1 = phase(calls.filter((c) => c.round === 1));
    const r2 = phase(calls.filter((c) => c.round === 2));
    const engineS = corpusTokens / prefillRate;
    const karLater = karAfterFirst(steps);
    results.push({
      length,
      chunks: result.chunks,
      corpusTokens,
      engineS,
      round1: r1,
      round2: r2,
      kar: steps,
      karLater,
      headline: {
        round1OverEngine: r1.wallS / engineS,
        round2OverRound1: r1.modelS > 0 ? r2.modelS / r1.modelS : 0,
        karEvaluatedOverAdded: karLater.added > 0 ? karLater.evaluated / karLater.added : 0,
      },
      promptTokensPerCorpusToken: r1.input / corpusTokens,
      wallS,
      answer: result.answer,
    });
  }
  const out = { model: values.model, question: question.id, prefillRate, generationRate, results };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } else {
    const f = (n: number, d = 2): string => n.toFixed(d);
    process.stdout.write(`engine: prefill ${f(prefillRate, 0)} tokens/s (${prefill.input} tokens), generation ${f(generationRate, 1)} tokens/s\n\n`);
    process.stdout.write(
      '| length | chunks | corpus tokens | engine s | round 1 wall s (×engine) | round 1 model s | prompt/corpus | gen/seek | cache-read share | round 2 model s (×round 1) |\n|---|---|---|---|---|---|---|---|---|---|\n',
    );
    for (const r of results) {
      process.stdout.write(
        `| ${r.length} | ${r.chunks} | ${r.corpusTokens} | ${f(r.engineS, 1)} | ${f(r.round1.wallS, 1)} (${f(r.headline.round1OverEngine)}) | ${f(r.round1.modelS, 1)} | ${f(r.promptTokensPerCorpusToken)} | ${f(r.round1.outputPerCall, 1)} | ${f(r.round1.cacheRead / Math.max(1, r.round1.input))} | ${f(r.round2.modelS, 1)} (${f(r.headline.round2OverRound1)}) |\n`,
      );
    }
    process.stdout.write(
      '\nKAR steps of round 1 (every step run): k, prompt tokens, read from the KV cache, evaluated, tokens of the messages added, evaluated / added, seconds\n',
    );
    for (const r of results) {
      for (const s of r.kar) {
        process.stdout.write(
          `  ${r.length}: k=${s.k} prompt ${s.input} cache ${s.cacheRead} evaluated ${s.evaluated} added ${s.addedTokens} ratio ${s.addedTokens > 0 ? f(s.evaluated / s.addedTokens) : '-'} ${f(s.ms / 1000, 1)} s\n`,
        );
      }
      const later = r.karLater;
      if (later.added > 0)
        process.stdout.write(
          `  ${r.length}: steps after the first: evaluated ${later.evaluated} / added ${later.added} = ${f(later.evaluated / later.added)}\n`,
        );
    }
    process.stdout.write(
      '\nSeeking calls per round: prompt tokens, read from the KV cache, evaluated, synchronized-message tokens (all per call), generated per call\n',
    );
    for (const r of results) {
      for (const [name, p] of [
        ['round 1', r.round1],
        ['round 2', r.round2],
      ] as const) {
        process.stdout.write(
          `  ${r.length} ${name}: ${p.calls} calls, prompt ${f(p.input / Math.max(1, p.calls), 0)}, cache ${f(p.cacheRead / Math.max(1, p.calls), 0)}, evaluated ${f(p.evaluatedPerCall, 0)}, synchronized ${f(p.synchronizedPerCall, 0)}, generated ${f(p.outputPerCall, 1)}, model ${f(p.modelS / Math.max(1, p.calls), 2)} s\n`,
        );
      }
    }
  }
  await disposeLlamaModels();
}

main().catch((error: unknown) => {
  process.stderr.write(`llama-method-time: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
