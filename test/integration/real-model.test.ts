/**
 * A real language model in the loop: SmolLM2-135M-Instruct (test/support/real-model.ts) through the
 * synthesized workflows, in-process (`llama:`) and behind a 127.0.0.1 OpenAI-compatible server
 * (`openai:`, test/support/llama-openai-server.ts). A 135M model answers few questions right, so
 * these tests assert properties, not wording: valid structure, citations whose quotes are the
 * corpus text at their offsets, bounded calls, cut-off replies counted, structured replies used.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../../local/cli/cli';
import { resolveCorpus } from '../../local/engine/corpus';
import { disposeLlamaModels, LlamaChatModel, LlamaRuntime, loadLlamaModels } from '../../models/llama/llama';
import { MIN_LLAMA_CONTEXT_TOKENS } from '../../models/llama/traits';
import { parseModelSpec } from '../../models/spec';
import { runLocal } from '../../local/engine/run';
import { startLocalStack, type LocalStack } from '../../local/engine/stack';
import { runLocalSurvey } from '../../local/engine/survey';
import type { ChatResponse } from '../../shared/ports';
import { NO_ANSWER, type RunResult } from '../../shared/types';
import { startLlamaOpenAiServer, type LlamaOpenAiServer } from '../support/llama-openai-server';
import { describeWithRealModel } from '../support/real-model';
import { describeWithSharedData, SHARED_DATA } from '../support/shared-data';
import { SURVEY_PAPERS } from '../support/survey-corpus';

jest.setTimeout(300_000);

const DATA = SHARED_DATA;

interface HotpotExample {
  _id: string;
  question: string;
  answer: string;
  context: Array<[string, string[]]>;
}

async function hotpot(count: number): Promise<HotpotExample[]> {
  const all = JSON.parse(await fs.readFile(path.join(DATA, 'hotpotqa/hotpot_dev_distractor_100.reflexion.json'), 'utf8')) as HotpotExample[];
  return all.slice(0, count);
}

/** One question's ten paragraphs as one document (title line, then its sentences). */
function contextText(example: HotpotExample): string {
  return example.context.map(([title, sentences]) => `${title}\n${sentences.join('')}`).join('\n\n');
}

/**
 * The properties every real-model run must have: a structured answer or refusal; every citation's
 * quote is exactly the document text at its offsets; calls bounded by the method (per seek at
 * most 3 calls, per KAR step at most 2).
 */
async function expectWellFormed(result: RunResult, corpusDir: string): Promise<void> {
  expect(typeof result.answer).toBe('string');
  expect(result.answerable).toBe(result.answer !== NO_ANSWER);
  for (const citation of result.citations) {
    const text = await fs.readFile(path.join(corpusDir, citation.documentId), 'utf8');
    // The citation's quote is the cited range, whitespace flattened, cut at 300 characters with "…".
    const range = text.slice(citation.start, citation.end).replace(/\s+/g, ' ').trim();
    expect(citation.end).toBeGreaterThan(citation.start);
    expect(range.startsWith(citation.quote.replace(/…$/, ''))).toBe(true);
  }
  const seeks = result.chunks * result.trace.reduce((rounds, step) => Math.max(rounds, step.round), 1);
  expect(result.usage.seeker.calls).toBeLessThanOrEqual(3 * seeks);
  expect(result.usage.reasoner.calls).toBeLessThanOrEqual(2 * Math.max(1, result.trace.length));
  expect(result.usage.seeker.inputTokens).toBeGreaterThan(0);
  expect(result.usage.seeker.outputTokens).toBeGreaterThan(0);
  expect(result.usage.seeker.modelMs).toBeGreaterThan(0);
}

/**
 * Seek replies lost to the output limit: a reply cut off twice (the chunk yields no message). One cut
 * off and retried is tolerated: the budget assumes 2 characters a token (shared/llm/schemas.ts
 * `outputTokenBudget`), and a note of digits ("200, 200, …"), one token a character in the test
 * model's tokenizer, can outrun it; the retry with a brevity reminder closes. (The answer's
 * "reached the 160-character bound … may be cut off" is a different warning.)
 */
const cutOffWarnings = (result: RunResult): string[] => result.warnings.filter((w) => /cut off at the output limit .*twice/.test(w));

describeWithSharedData('with the shared datasets', () =>
  describeWithRealModel('a real model (SmolLM2-135M) through the workflow', (modelPath) => {
    let dir: string;

    beforeAll(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'extagents-real-'));
    });
    afterAll(async () => {
      await disposeLlamaModels();
      await fs.rm(dir, { recursive: true, force: true });
    });

    it('llama: answers or refuses a HotpotQA question (two chunks, two rounds) with citations that resolve in the corpus', async () => {
      const [example] = await hotpot(1);
      const corpus = path.join(dir, 'hotpot');
      await fs.mkdir(corpus, { recursive: true });
      await fs.writeFile(path.join(corpus, 'context.txt'), contextText(example));

      const result = await runLocal({
        files: await resolveCorpus([corpus]),
        question: example.question,
        options: { chunkTokens: 700, concurrency: 2 },
        modelSpec: `llama:${modelPath}`,
        stateDir: path.join(dir, 'state-hotpot'),
      });

      expect(result.chunks).toBeGreaterThanOrEqual(2);
      await expectWellFormed(result, corpus);
      // No seek reply is lost to the output limit (see cutOffWarnings).
      expect(cutOffWarnings(result)).toEqual([]);
      expect(result.poolSize).toBeGreaterThan(0);
    });

    it('llama: a model file replaced under a long-lived process is said once, the loaded model still answering (issue 51, item 2)', async () => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'llama-replaced-'));
      // A runtime of its own: the other tests' loaded models are left alone.
      const runtime = new LlamaRuntime();
      try {
        const file = path.join(dir, 'model.gguf');
        await fs.copyFile(modelPath, file);
        const model = await LlamaChatModel.load(file, { sequences: 1, promptStateBytes: 0 }, runtime);
        const ask = () =>
          model.complete({ role: 'reasoner', system: 'Answer briefly.', messages: [{ role: 'user', text: 'Name a colour.' }], maxTokens: 3, temperature: 0 });
        expect((await ask()).warnings ?? []).toEqual([]);
        // `mv new.gguf model.gguf` while the process runs.
        await fs.copyFile(modelPath, `${file}.new`);
        await fs.rename(`${file}.new`, file);
        const after = await ask();
        expect(after.warnings).toEqual([
          expect.stringMatching(
            /^llama model file .*model\.gguf was replaced by another file \(\d+ bytes loaded, \d+ bytes now\) since this process loaded it: the replies are still the loaded model's; restart/,
          ),
        ]);
        expect((await ask()).warnings ?? []).toEqual([]);
      } finally {
        await runtime.dispose();
        await fs.rm(dir, { recursive: true, force: true });
      }
    });

    it('llama: a call that starts as the one before it evaluates only the rest, and says so (cacheReadInputTokens)', async () => {
      const model = await LlamaChatModel.load(modelPath, { sequences: 1 });
      const passage = 'Millbrook was founded in 1842 by the miller Anne Hale. '.repeat(30);
      const ask = (question: string) =>
        model.complete({
          role: 'reasoner',
          system: 'You answer questions about a passage.',
          messages: [{ role: 'user', text: `${passage}\nQuestion: ${question}\nAnswer:` }],
          maxTokens: 4,
          temperature: 0,
        });

      await ask('When was it founded?');
      const next = await ask('Who founded it?');

      // Only the question and the reply's start differ: far less than a fifth of the prompt.
      expect(next.cacheReadInputTokens ?? 0).toBeGreaterThan(next.inputTokens * 0.8);
      expect(next.cacheReadInputTokens ?? 0).toBeLessThan(next.inputTokens);
    });

    it("llama: a passage read before (another chunk's call in between) is loaded from its saved state, not evaluated again", async () => {
      const withStates = await LlamaChatModel.load(modelPath, { sequences: 1 });
      const without = await LlamaChatModel.load(modelPath, { sequences: 1, promptStateBytes: 0 });
      const passage = (n: number): string => `Passage:\n<chunk>\n${`Town ${n} was founded in 18${n}0 by the miller Anne Hale. `.repeat(30)}\n</chunk>`;
      const seek = (model: LlamaChatModel, n: number, question: string) => {
        const suffix = `\nQuestion: ${question}\nAnswer:`;
        return model.complete({
          role: 'seeker',
          system: 'You answer questions from the given passage.',
          messages: [{ role: 'user', text: `${passage(n)}\n${suffix}` }],
          cacheable: { prefix: passage(n), suffix },
          maxTokens: 4,
          temperature: 0,
        });
      };

      const saved: ChatResponse[] = [];
      const evaluatedAgain: ChatResponse[] = [];
      for (const model of [withStates, without]) {
        await seek(model, 1, 'When was it founded?');
        await seek(model, 2, 'When was it founded?');
        const again = await seek(model, 1, 'Who founded it?');
        (model === withStates ? saved : evaluatedAgain).push(again);
      }

      // With saved states only the question differs; without, the passage is evaluated again.
      expect(saved[0].cacheReadInputTokens ?? 0).toBeGreaterThan(saved[0].inputTokens * 0.8);
      expect(evaluatedAgain[0].cacheReadInputTokens ?? 0).toBeLessThan(evaluatedAgain[0].inputTokens * 0.2);
      expect(saved[0].text).toBe(evaluatedAgain[0].text);
    });

    it('llama: the default options adapt to the model context (8,192 tokens): a 10,000-token corpus needs no option', async () => {
      const examples = await hotpot(3);
      const corpus = path.join(dir, 'adapt');
      await fs.mkdir(corpus, { recursive: true });
      await fs.writeFile(path.join(corpus, 'context.txt'), examples.map(contextText).join('\n\n'));

      const result = await runLocal({
        files: await resolveCorpus([corpus]),
        question: examples[2].question,
        options: { rounds: 1 },
        modelSpec: `llama:${modelPath}`,
        stateDir: path.join(dir, 'state-adapt'),
      });

      // 40% of 8,192 tokens per chunk (runOptionDefaultsForContext), so no prompt overflows the context.
      expect(result.chunks).toBeGreaterThanOrEqual(2);
      expect(result.chunkFailures).toEqual([]);
      await expectWellFormed(result, corpus);
    });

    it('llama: the loader refuses a context below the one minimum the spec parser states (1,024 tokens), with that minimum in its message', async () => {
      const load = loadLlamaModels({ kind: 'llama', seekerModelId: modelPath, reasonerModelId: modelPath, contextTokens: 512 });
      await expect(load).rejects.toThrow(new RegExp(`context size must be an integer from ${MIN_LLAMA_CONTEXT_TOKENS} to the model's training context`));
      expect(() => parseModelSpec('llama:m.gguf?ctx=512')).toThrow(`below the smallest context, ${MIN_LLAMA_CONTEXT_TOKENS} tokens`);
    });

    it('llama: chunks too large for the model context are a ConfigurationError naming both sizes, before any seeking agent runs', async () => {
      const corpus = path.join(dir, 'too-big');
      await fs.mkdir(corpus, { recursive: true });
      await fs.writeFile(path.join(corpus, 'a.txt'), 'Some text.');
      const run = runLocal({
        files: await resolveCorpus([corpus]),
        question: 'What?',
        options: { chunkTokens: 7800 },
        modelSpec: `llama:${modelPath}`,
        stateDir: path.join(dir, 'state-too-big'),
      });
      await expect(run).rejects.toThrow(/chunks of 7800 tokens do not fit the model's context of 8192 tokens.*--chunk-tokens 4705 or less.*default, 3276/);
    });

    it('llama: a Chinese question over a Chinese passage (CMRC 2018) runs with citations that resolve', async () => {
      const cmrc = JSON.parse(await fs.readFile(path.join(DATA, 'chinese/cmrc2018_dev.squad.json'), 'utf8')) as {
        data: Array<{ paragraphs: Array<{ context: string; qas: Array<{ question: string }> }> }>;
      };
      const paragraphs = cmrc.data.slice(0, 3).flatMap((d) => d.paragraphs.slice(0, 1));
      const corpus = path.join(dir, 'zh');
      await fs.mkdir(corpus, { recursive: true });
      for (const [i, p] of paragraphs.entries()) await fs.writeFile(path.join(corpus, `p${i}.txt`), p.context);

      const result = await runLocal({
        files: await resolveCorpus([corpus]),
        question: paragraphs[0].qas[0].question,
        options: { rounds: 1 },
        modelSpec: `llama:${modelPath}`,
        stateDir: path.join(dir, 'state-zh'),
      });

      expect(result.chunks).toBeGreaterThanOrEqual(1);
      await expectWellFormed(result, corpus);
    });

    it('llama: a survey of a dozen papers through the survey state machine, every citation checked against its source', async () => {
      const corpus = path.join(dir, 'papers');
      await fs.mkdir(corpus, { recursive: true });
      await fs.writeFile(
        path.join(corpus, 'papers.jsonl'),
        SURVEY_PAPERS.map((p) => JSON.stringify({ id: p.id, title: p.title, abstract: p.text.split('\n\n')[1], authors: p.authors, year: p.year })).join('\n'),
      );
      const stack: LocalStack = await startLocalStack({ stateDir: path.join(dir, 'state-survey'), modelSpec: `llama:${modelPath}`, modelSequences: 2 });
      try {
        const { markdown, metadata } = await runLocalSurvey(
          {
            corpus: [corpus],
            topic: 'language models for planning',
            options: { maxSections: 2, targetWords: 300, rounds: 1 },
            output: path.join(dir, 'survey.md'),
          },
          stack,
        );
        const ids = new Set(SURVEY_PAPERS.map((p) => p.id));
        const cited = [...markdown.matchAll(/\[([^\]\s]+)\]/g)].map((m) => m[1]).filter((c) => !/^\d+$/.test(c));
        // Every [id] left in the text names a source of the corpus (the citation check removed the rest).
        for (const id of cited.flatMap((c) => c.split(/[,;]\s*/))) expect(ids.has(id) || /^https?:/.test(id)).toBe(true);
        expect(metadata.sections.length).toBeGreaterThanOrEqual(1);
        expect(metadata.extractive).toBe(false);
      } finally {
        await stack.stop();
      }
    });

    describe('openai: against a 127.0.0.1 chat-completions server backed by the same model', () => {
      let server: LlamaOpenAiServer;
      const saved = { ...process.env };

      beforeAll(async () => {
        server = await startLlamaOpenAiServer({ modelPath, sequences: 2 });
        process.env.OPENAI_BASE_URL = server.baseUrl;
        delete process.env.OPENAI_STRUCTURED;
      });
      afterAll(async () => {
        await server?.stop();
        process.env = saved;
      });

      it('3 HotpotQA dev questions: evidence for every question, no cut-off seek reply, replies constrained by response_format json_schema', async () => {
        const examples = await hotpot(3);
        for (const [i, example] of examples.entries()) {
          const corpus = path.join(dir, `openai-${i}`);
          await fs.mkdir(corpus, { recursive: true });
          await fs.writeFile(path.join(corpus, 'context.txt'), contextText(example));

          const result = await runLocal({
            files: await resolveCorpus([corpus]),
            question: example.question,
            options: { concurrency: 2 },
            modelSpec: 'openai:smollm2',
            stateDir: path.join(dir, `state-openai-${i}`),
          });

          expect(result.poolSize).toBeGreaterThanOrEqual(1);
          expect(cutOffWarnings(result)).toEqual([]);
          await expectWellFormed(result, corpus);
        }
        expect(server.requests.length).toBeGreaterThan(0);
        expect(server.requests.every((r) => r.responseFormat === 'json_schema')).toBe(true);
      });

      it('a server that rejects response_format: the run falls back to prose once, says so in its warnings, and still finishes', async () => {
        const old = await startLlamaOpenAiServer({ modelPath, sequences: 1, rejectResponseFormat: true });
        process.env.OPENAI_BASE_URL = old.baseUrl;
        try {
          const [example] = await hotpot(1);
          const corpus = path.join(dir, 'old-server');
          await fs.mkdir(corpus, { recursive: true });
          await fs.writeFile(path.join(corpus, 'context.txt'), contextText(example).slice(0, 3000));

          const result = await runLocal({
            files: await resolveCorpus([corpus]),
            question: example.question,
            options: { rounds: 1, concurrency: 1 },
            modelSpec: 'openai:smollm2',
            stateDir: path.join(dir, 'state-old-server'),
          });

          // One warning for the whole fallback (json_schema and json_object both rejected), not one per step.
          expect(result.warnings.filter((w) => /rejected response_format/.test(w))).toHaveLength(1);
          expect(old.requests.map((r) => r.responseFormat).slice(0, 3)).toEqual(['json_schema', 'json_object', 'none']);
          expect(old.requests.slice(3).every((r) => r.responseFormat === 'none')).toBe(true);
          await expectWellFormed(result, corpus);
        } finally {
          process.env.OPENAI_BASE_URL = server.baseUrl;
          await old.stop();
        }
      });
    });

    // Last: the CLI frees the process's models when it ends (disposeLlamaModels).
    it('extagents ask: a chunk size the context cannot hold, and damaged GGUF files (cut in the header, cut in the tensors), are one-line usage errors (exit 2) before any state', async () => {
      const corpus = path.join(dir, 'cli.txt');
      await fs.writeFile(corpus, 'Some text.');
      // Cut in its header's entries (the counts cannot fit: refused before loading) and in its tensors
      // (the header fits: node-llama-cpp refuses it).
      const model = await fs.readFile(modelPath);
      const damaged = path.join(dir, 'damaged.gguf');
      await fs.writeFile(damaged, model.subarray(0, 4096));
      const truncated = path.join(dir, 'truncated.gguf');
      await fs.writeFile(truncated, model.subarray(0, 4 * 2 ** 20));
      const stderr: string[] = [];
      const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
        stderr.push(String(chunk));
        return true;
      });
      const saved = process.exitCode;
      try {
        for (const [args, message] of [
          [['--chunk-tokens', '7800', '--model', `llama:${modelPath}`], /--chunk-tokens: chunks of 7800 tokens do not fit the model's context of 8192 tokens/],
          [
            ['--model', `llama:${damaged}`],
            /--model: llama: model file .*damaged\.gguf is a damaged GGUF header \(272 tensors and 33 metadata entries cannot fit in 4096 bytes\)/,
          ],
          [['--model', `llama:${truncated}`], /--model: llama: cannot load model .*truncated\.gguf/],
        ] as const) {
          stderr.length = 0;
          process.exitCode = undefined;
          const stateDir = path.join(dir, `cli-state-${stderr.length}-${args[1].length}`);
          await main(['node', 'extagents', 'ask', '--corpus', corpus, '--question', 'What?', '--state-dir', stateDir, '--no-progress', ...args]);
          expect(process.exitCode).toBe(2);
          // One line, then the hint naming the command's help.
          expect(stderr.join('').trimEnd().split('\n')).toEqual([expect.stringMatching(/^extagents: /), "(see 'extagents ask --help')"]);
          expect(stderr.join('')).toMatch(message);
          await expect(fs.stat(stateDir)).rejects.toThrow(/ENOENT/);
        }
      } finally {
        spy.mockRestore();
        process.exitCode = saved;
      }
    });
  }),
);
