/**
 * Speed with a real model (`llama:`, models/llama/llama.ts): the model's prefill and generation rates on
 * this machine, and the share of an `ask`'s wall time spent outside the model, at `--concurrency 1`
 * and with parallel sequences, measured side by side in one run of this script.
 *
 * - Rates: one prompt of about `--prefill-tokens` tokens with a 1-token reply (prefill), then a free
 *   reply of `--gen-tokens` tokens (generation), each the median of 3, on a fresh sequence.
 * - Outside the model: `runLocal` (the product path: the local stack, the synthesized workflow) over
 *   the first HotpotQA dev questions' paragraphs concatenated to about `--corpus-tokens` tokens, with
 *   the model wrapped so that every interval during which at least one model call is in flight is
 *   recorded; outside = wall time − the union of those intervals. Stack start (CDK synth, dynalite)
 *   is counted as outside time too, since a user waits for it; the model load (once per process,
 *   about 0.5 s) is not.
 *
 * Usage: npx tsx bench/llama-speed.ts [--model <gguf>] [--corpus-tokens 32000] [--parallel 1,2,4] [--rounds 1]
 *   [--prefill-tokens 2000] [--gen-tokens 128]
 * Model default: EXTAGENTS_TEST_MODEL or the cache path of scripts/fetch-test-model.sh.
 * Prints one JSON line per measurement. Target (issue): under 10% outside the model for 32k tokens.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../local/engine/corpus';
import { disposeLlamaModels, LlamaChatModel } from '../models/llama/llama';
import { runLocal } from '../local/engine/run';
import { LlmAgents } from '../shared/llm/agents';
import type { ChatModel, ChatRequest, ChatResponse } from '../shared/ports';
import { countTokens } from '../shared/tokenizer';
import { DEFAULT_TEST_MODEL_PATH } from '../test/support/real-model';
import { benchArgs } from './support/args';

const USAGE = `Usage: npx tsx bench/llama-speed.ts [--model <gguf>] [--corpus-tokens 32000] [--parallel 1,2,4] [--rounds 1]
  [--prefill-tokens 2000] [--gen-tokens 128]

Speed with a real model (llama:, node-llama-cpp in this process): the model's prefill and generation
rates on this machine (each the median of 3, on a fresh sequence), then the share of an ask's wall
time spent outside the model: runLocal (the product path) over the first HotpotQA dev questions'
paragraphs concatenated to about --corpus-tokens tokens, once per --parallel value, with every
interval during which at least one model call is in flight recorded; outside = wall time minus the
union of those intervals (the stack's start counts as outside, the model load does not). Prints one
JSON line per measurement (rates, corpus, one per ask). Target: under 10% outside the model for 32k
tokens.

Options:
  --model <gguf>         the GGUF file (default: EXTAGENTS_TEST_MODEL, else where
                         scripts/fetch-test-model.sh caches it: ${DEFAULT_TEST_MODEL_PATH})
  --corpus-tokens N      the ask's corpus, tokens of the project's tokenizer (o200k) (default 32000)
  --parallel LIST        comma-separated numbers of parallel sequences, one ask each, run at that
                         concurrency (default 1,2,4)
  --rounds N             the ask's rounds (default 1)
  --prefill-tokens N     the prefill prompt's length, tokens of the model (default 2000)
  --gen-tokens N         the generated reply's length, tokens of the model (default 128)
  -h, --help             print this and exit
`;

const { values } = benchArgs(USAGE, {
  model: { type: 'string' },
  'corpus-tokens': { type: 'string', default: '32000' },
  parallel: { type: 'string', default: '1,2,4' },
  rounds: { type: 'string', default: '1' },
  'prefill-tokens': { type: 'string', default: '2000' },
  'gen-tokens': { type: 'string', default: '128' },
});
const modelPath = values.model ?? process.env.EXTAGENTS_TEST_MODEL ?? DEFAULT_TEST_MODEL_PATH;

/** A ChatModel wrapper recording the intervals with at least one call in flight. */
class InFlight implements ChatModel {
  readonly modelId: string;
  private active = 0;
  private since = 0;
  busyMs = 0;
  constructor(private readonly inner: ChatModel) {
    this.modelId = inner.modelId;
  }
  async complete(request: ChatRequest): Promise<ChatResponse> {
    if (this.active++ === 0) this.since = performance.now();
    try {
      return await this.inner.complete(request);
    } finally {
      if (--this.active === 0) this.busyMs += performance.now() - this.since;
    }
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function rates(): Promise<void> {
  const model = await LlamaChatModel.load(modelPath, { sequences: 1 });
  const filler = 'The committee met on Tuesday to review the annual budget of the regional library network. ';
  const prompt = filler.repeat(Math.ceil(Number(values['prefill-tokens']) / model.countTokens(filler)));
  const prefill: number[] = [];
  const generation: number[] = [];
  for (let i = 0; i < 3; i++) {
    // A distinct first line each time, so no prefix of the previous prompt is reused from the cache.
    const request: ChatRequest = { role: 'seeker', system: `Run ${i}.`, messages: [{ role: 'user', text: `${i} ${prompt}` }], maxTokens: 1, temperature: 0 };
    let started = performance.now();
    const one = await model.complete(request);
    prefill.push(one.inputTokens / ((performance.now() - started) / 1000));
    const gen: ChatRequest = {
      role: 'seeker',
      system: `Story ${i}.`,
      messages: [{ role: 'user', text: `Write a long story about a library, number ${i}.` }],
      maxTokens: Number(values['gen-tokens']),
      temperature: 0,
    };
    started = performance.now();
    const reply = await model.complete(gen);
    const ms = performance.now() - started;
    generation.push(reply.outputTokens / (ms / 1000));
  }
  process.stdout.write(
    `${JSON.stringify({ measure: 'rates', model: path.basename(modelPath), prefillTokensPerSecond: Math.round(median(prefill)), generationTokensPerSecond: Math.round(median(generation)) })}\n`,
  );
}

async function askShare(corpusFile: string, question: string, parallel: number): Promise<void> {
  const loaded = await LlamaChatModel.load(modelPath, { sequences: parallel });
  const wrapped = new InFlight(loaded);
  const stateDir = mkdtempSync(path.join(tmpdir(), 'extagents-llama-bench-'));
  try {
    const started = performance.now();
    const result = await runLocal({
      files: await resolveCorpus([corpusFile]),
      question,
      // The same options a llama: run gets by default (runOptionDefaultsForContext), set here since
      // the model is given directly.
      options: { concurrency: parallel, rounds: Number(values.rounds), chunkTokens: 3276, syncBudgetTokens: 983, reasonerBudgetTokens: 4505 },
      model: new LlmAgents({ seeker: wrapped, reasoner: wrapped }),
      stateDir,
    });
    const wallMs = performance.now() - started;
    const outsideMs = wallMs - wrapped.busyMs;
    process.stdout.write(
      `${JSON.stringify({
        measure: 'ask',
        parallel,
        chunks: result.chunks,
        calls: result.usage.seeker.calls + result.usage.reasoner.calls,
        inputTokens: result.usage.seeker.inputTokens + result.usage.reasoner.inputTokens,
        outputTokens: result.usage.seeker.outputTokens + result.usage.reasoner.outputTokens,
        wallMs: Math.round(wallMs),
        modelBusyMs: Math.round(wrapped.busyMs),
        outsideShare: Number((outsideMs / wallMs).toFixed(3)),
        answer: result.answer,
      })}\n`,
    );
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  await rates();
  const data = JSON.parse(readFileSync(path.resolve(__dirname, '../../shared/data/hotpotqa/hotpot_dev_distractor_100.reflexion.json'), 'utf8')) as Array<{
    question: string;
    context: Array<[string, string[]]>;
  }>;
  const target = Number(values['corpus-tokens']);
  const parts: string[] = [];
  let tokens = 0;
  for (const example of data) {
    for (const [title, sentences] of example.context) {
      const text = `${title}\n${sentences.join('')}\n`;
      parts.push(text);
      tokens += countTokens(text);
    }
    if (tokens >= target) break;
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'extagents-llama-corpus-'));
  const corpusFile = path.join(dir, 'corpus.txt');
  writeFileSync(corpusFile, parts.join('\n'));
  process.stdout.write(`${JSON.stringify({ measure: 'corpus', tokens })}\n`);
  for (const parallel of values.parallel.split(',').map(Number)) await askShare(corpusFile, data[0].question, parallel);
  rmSync(dir, { recursive: true, force: true });
  await disposeLlamaModels();
}

void main();
