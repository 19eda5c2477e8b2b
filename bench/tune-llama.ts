/**
 * Choosing the `llama:` defaults by measurement (issue 41 item 4): the product's workflow (`runLocal`
 * through the eval's `localWorkflowRunner`, what `extagents ask` runs) over HotpotQA questions padded
 * to `--length` tokens, once per configuration, on the TRAINING questions by default (never the dev
 * questions the eval reports).
 *
 * A configuration is a `+`-joined list of `key=value` (`--configs` takes a comma list of them):
 *   reply=prose|json       the reasoning agent's reply (shared/llm/prompts.ts REASONER_REPLIES)
 *   seek=json|prose        the seeking agent's reply (SEEKER_REPLIES)
 *   ranking=score|hybrid|retrieval, rounds=N, chunk=N (chunkTokens), firstk=N (karFirstK),
 *   budget=N (reasonerBudgetTokens), sync=N (syncBudgetTokens), stop=first|confirmed|checked (karStop),
 *   karrounds=each|last (karRounds),
 *   synchronization=plain|follow-up, leads=on|off (the prose seeker's paragraph leads)
 * Unset keys take the run options the product fits to the model's context.
 *
 * Identical model calls are answered from a call memo kept on disk (`--memo`, one JSON line per call,
 * keyed by the SHA-256 of the model, its context, the reply form and the whole request), so the
 * configurations of one question share their seeks (the seek request does not depend on the reasoner)
 * and a rerun or a later configuration pays only for what is new. The model must be deterministic for
 * that to hold (temperature 0, a fixed thread count: docs/EVAL.md, "Thread count"). `newModelMs` of a
 * record counts only the calls that reached the model.
 *
 * Records (`--records`, one JSON line per question and configuration, skipped on a rerun) hold the
 * prediction, official HotpotQA F1/EM, the question type (bridge / comparison), the KAR trace, rounds,
 * calls and tokens (all calls, memo or not), and the share of gold paragraphs the answer's citations
 * point into. The table prints per configuration mean F1 with a 95% bootstrap interval, by type, and
 * the paired difference with the first configuration.
 *
 * Usage: npx tsx bench/tune-llama.ts --model llama:<gguf>[?ctx=N] [--dataset hotpot-train|hotpotqa]
 *   [--limit 12] [--offset 0] [--length 16k] [--configs reply=prose,reply=json+firstk=4]
 *   [--memo tune-memo.jsonl] [--records tune.jsonl] [--json]
 * Set TUNE_TRACE=1 to print every seek (its chunk, GOLD when it holds a gold paragraph, the score and
 * evidence) and every reasoning step's messages.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { loadLlamaModels } from '../models/llama/llama';
import type { RunOptionsInput } from '../shared/config';
import { contextFittedRunOptionDefaults } from '../models/context';
import { buildHotpotLongContext, defaultDataRoot, readFillerParagraphs, readHotpotQa } from '../eval/datasets';
import { hotpotExactMatch, hotpotF1 } from '../eval/scorers';
import { bootstrapMeanInterval, pairedBootstrap } from '../eval/stats';
import { localWorkflowRunner } from '../local/engine/eval-workflow';
import type {
  AgentModel,
  ChatModel,
  ChatRequest,
  CheckRequest,
  CheckResult,
  FollowUpRequest,
  FollowUpResult,
  ReasonRequest,
  ReasonResult,
  SeekRequest,
  SeekResult,
} from '../shared/ports';
import { LlmAgents } from '../shared/llm/agents';
import { REASONER_REPLIES, type ReasonerReply, SEEKER_REPLIES, type SeekerReply } from '../shared/llm/prompts';
import { benchArgs, usageError } from './support/args';
import { llamaSpecArg } from './support/llama';
import { parseTokenCount, TOKEN_COUNT_FORMS } from '../shared/token-count';
import { llamaThreadsFromEnv } from '../models/llama/llama';
import { KAR_ROUNDS, KAR_STOP_RULES, SYNCHRONIZATION_MODES, type KarRounds, type KarStopRule, type SynchronizationMode } from '../shared/kar';

const USAGE = `Usage: npx tsx bench/tune-llama.ts --model llama:<gguf>[?ctx=N] [--dataset hotpot-train|hotpotqa]
  [--limit 12] [--offset 0] [--length 16k] [--configs reply=prose,reply=json+firstk=4]
  [--memo tune-memo.jsonl] [--records tune.jsonl] [--json]

Choose llama: defaults by measurement: the product's workflow over HotpotQA questions (training
questions by default) padded to --length tokens, once per configuration, identical model calls
answered from a call memo on disk. A configuration is key=value pairs joined by "+": seek=json|prose,
reply=prose|json,
ranking=score|hybrid|retrieval, rounds=N, chunk=N, firstk=N, budget=N, sync=N, stop=first|confirmed|checked, karrounds=each|last,
synchronization=plain|follow-up, leads=on|off;
unset keys take the
options the product fits to the model's context. Prints mean F1 [95% CI] per configuration, by
question type, and the paired difference with the first configuration. Run it alone.

Options:
  --model SPEC      a llama: spec (required), e.g. llama:/path/model.gguf?ctx=4096
  --dataset NAME    hotpot-train (HotpotQA train sample, default) or hotpotqa (dev)
  --limit N         questions (default 12)
  --offset N        questions skipped first (default 0)
  --length N        padded context, tokens (default 16k)
  --configs LIST    comma-separated configurations (default reply=prose,reply=json)
  --memo FILE       the call memo (default: none, calls shared within this process only)
  --records FILE    append one JSON line per (question, configuration); skip those present
  --json            print one JSON object instead of the table
  -h, --help        print this and exit
`;

/** One configuration: its text and the run options / reply form it sets. */
interface Config {
  name: string;
  reply?: ReasonerReply;
  seek?: SeekerReply;
  /** The prose seeker's paragraph leads (`LlmAgentsOptions.proseLeads`); unset: off. */
  leads?: boolean;
  options: RunOptionsInput;
}

const KEYS: Record<string, keyof RunOptionsInput> = {
  ranking: 'ranking',
  rounds: 'rounds',
  chunk: 'chunkTokens',
  firstk: 'karFirstK',
  budget: 'reasonerBudgetTokens',
  sync: 'syncBudgetTokens',
};

function parseConfig(text: string): Config {
  const config: Config = { name: text, options: {} };
  for (const pair of text.split('+')) {
    const [key, value] = pair.split('=').map((s) => s.trim());
    if (key === 'seek') {
      if (!SEEKER_REPLIES.includes(value as SeekerReply)) usageError(USAGE, `seek: one of ${SEEKER_REPLIES.join(', ')}; got ${value}`);
      config.seek = value as SeekerReply;
    } else if (key === 'reply') {
      if (!REASONER_REPLIES.includes(value as ReasonerReply)) usageError(USAGE, `reply: one of ${REASONER_REPLIES.join(', ')}; got ${value}`);
      config.reply = value as ReasonerReply;
    } else if (key === 'ranking') {
      (config.options as Record<string, unknown>).ranking = value;
    } else if (key === 'leads') {
      if (value !== 'on' && value !== 'off') usageError(USAGE, `leads: on or off; got ${value}`);
      config.leads = value === 'on';
    } else if (key === 'synchronization') {
      if (!SYNCHRONIZATION_MODES.includes(value as SynchronizationMode))
        usageError(USAGE, `synchronization: one of ${SYNCHRONIZATION_MODES.join(', ')}; got ${value}`);
      config.options.synchronization = value as SynchronizationMode;
    } else if (key === 'karrounds') {
      if (!KAR_ROUNDS.includes(value as KarRounds)) usageError(USAGE, `karrounds: one of ${KAR_ROUNDS.join(', ')}; got ${value}`);
      config.options.karRounds = value as KarRounds;
    } else if (key === 'stop') {
      if (!KAR_STOP_RULES.includes(value as KarStopRule)) usageError(USAGE, `stop: one of ${KAR_STOP_RULES.join(', ')}; got ${value}`);
      config.options.karStop = value as KarStopRule;
    } else if (key in KEYS) {
      const n = parseTokenCount(value ?? '');
      if (n === undefined) usageError(USAGE, `${key}: ${TOKEN_COUNT_FORMS}; got ${value}`);
      (config.options as Record<string, unknown>)[KEYS[key]] = n;
    } else usageError(USAGE, `unknown configuration key "${key}" in "${text}"`);
  }
  return config;
}

/** A call memo on disk: request hash -> result, one JSON line per call. */
class DiskMemo {
  private readonly entries = new Map<string, unknown>();
  constructor(private readonly file: string | undefined) {
    if (file && existsSync(file)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (line.trim() === '') continue;
        try {
          const { key, value } = JSON.parse(line) as { key: string; value: unknown };
          this.entries.set(key, value);
        } catch {
          // a torn last line of a killed run: that call is made again
        }
      }
    }
  }
  async get<T>(key: string, call: () => Promise<T>, onNew: (ms: number) => void): Promise<T> {
    if (this.entries.has(key)) return this.entries.get(key) as T;
    const started = performance.now();
    const value = await call();
    onNew(performance.now() - started);
    this.entries.set(key, value);
    if (this.file) appendFileSync(this.file, `${JSON.stringify({ key, value })}\n`);
    return value;
  }
}

/** One letter per KAR outcome in the progress line: answered, refused, unsupported (x), unconfirmed (c). */
const OUTCOME_LETTER: Record<string, string> = { answered: 'a', refused: 'r', unsupported: 'x', unconfirmed: 'c' };

interface TuneRecord {
  id: string;
  type: string;
  config: string;
  length: number;
  prediction: string;
  answerable: boolean;
  gold: string;
  f1: number;
  em: number;
  /** KAR steps: round, k, outcome. */
  trace: Array<{ round: number; k: number; outcome: string; messagesUsed: number }>;
  rounds: number;
  chunks: number;
  seekCalls: number;
  reasonCalls: number;
  inputTokens: number;
  /** Gold paragraphs the answer's citations point into / gold paragraphs. */
  citedGold: number;
  newModelMs: number;
  wallMs: number;
  error?: string;
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    model: { type: 'string' },
    dataset: { type: 'string', default: 'hotpot-train' },
    limit: { type: 'string', default: '12' },
    offset: { type: 'string', default: '0' },
    length: { type: 'string', default: '16k' },
    configs: { type: 'string', default: 'reply=prose,reply=json' },
    memo: { type: 'string' },
    records: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (!values.model?.startsWith('llama:')) usageError(USAGE, '--model llama:<gguf file> is required');
  const length = parseTokenCount(values.length);
  if (length === undefined) usageError(USAGE, `--length: ${TOKEN_COUNT_FORMS}; got ${values.length}`);
  const file = values.dataset === 'hotpotqa' ? 'hotpot_dev_distractor_100.reflexion.json' : 'hotpot_train_100.hipporag.json';
  const questions = readHotpotQa(path.join(defaultDataRoot(), 'hotpotqa', file)).questions.slice(
    Number(values.offset),
    Number(values.offset) + Number(values.limit),
  );
  const configs = values.configs.split(',').map(parseConfig);
  const llama = await loadLlamaModels(llamaSpecArg(values.model, USAGE), { sequences: 1 });
  const fitted = contextFittedRunOptionDefaults(llama.contextTokens, llama.runDefaults);
  // The memo holds chat calls (the whole ChatRequest as key), so a change of how replies are read
  // (parsing, locating) reuses the model's replies.
  let onNewCall: (ms: number) => void = () => undefined;
  const memoChat = (chat: ChatModel): ChatModel => ({
    modelId: chat.modelId,
    complete: (request: ChatRequest) =>
      memo.get(
        hash('chat', request),
        () => chat.complete(request),
        (ms) => onNewCall(ms),
      ),
  });
  const seekerChat = memoChat(llama.seeker);
  const reasonerChat = llama.reasoner === llama.seeker ? seekerChat : memoChat(llama.reasoner);
  const agentsCache = new Map<string, LlmAgents>();
  const agentsFor = (seek: SeekerReply, reply: ReasonerReply, leads: boolean): LlmAgents => {
    const key = `${seek}/${reply}/${leads}`;
    let agents = agentsCache.get(key);
    if (!agents) {
      agents = new LlmAgents({ seeker: seekerChat, reasoner: reasonerChat, reasonerReply: reply, seekerReply: seek, proseLeads: leads });
      agentsCache.set(key, agents);
    }
    return agents;
  };
  const defaultReply = llama.reasoner.profile.reasonerReply;
  const defaultSeek = llama.seeker.profile.seekerReply;
  const memo = new DiskMemo(values.memo);
  const modelKey = `${values.model}#threads=${llamaThreadsFromEnv() ?? 'default'}`;
  const hash = (kind: string, request: unknown): string =>
    createHash('sha256')
      .update(JSON.stringify([modelKey, kind, request]))
      .digest('hex');
  const filler = readFillerParagraphs().paragraphs;
  const trace = process.env.TUNE_TRACE === '1';
  const done = new Map<string, TuneRecord>();
  if (values.records && existsSync(values.records)) {
    for (const line of readFileSync(values.records, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      try {
        const r = JSON.parse(line) as TuneRecord;
        done.set(`${r.id}|${r.config}|${r.length}`, r);
      } catch {
        // torn line
      }
    }
  }
  const records: TuneRecord[] = [];
  for (const [i, q] of questions.entries()) {
    const built = buildHotpotLongContext(q, filler, { targetTokens: length });
    const doc = built.document;
    const goldTitles = [...new Set(q.supportingFacts.map((f) => f.title))];
    const goldSpans = (doc.paragraphs ?? []).filter((p) => p.own && goldTitles.includes(p.title));
    const goldHeads = goldSpans.map((p) => doc.text.slice(p.start, p.end).split('\n').pop()!.slice(0, 60));
    for (const config of configs) {
      const key = `${q.id}|${config.name}|${length}`;
      const previous = done.get(key);
      if (previous) {
        records.push(previous);
        continue;
      }
      const reply = config.reply ?? defaultReply;
      const seekMode = config.seek ?? defaultSeek;
      const agents = agentsFor(seekMode, reply, config.leads ?? false);
      let newModelMs = 0;
      const counts = { seek: 0, reason: 0, input: 0 };
      onNewCall = (ms: number): void => {
        newModelMs += ms;
      };
      const model: AgentModel = {
        description: `${llama.agents.description} (${reply})`,
        seek: async (request: SeekRequest): Promise<SeekResult> => {
          const r = await agents.seek(request);
          counts.seek += 1;
          if (trace) {
            const gold = goldHeads.filter((h) => request.chunk.text.includes(h)).length;
            process.stderr.write(
              `  seek r${request.round} c${request.chunk.index}${gold > 0 ? ` GOLD×${gold}` : ''} score=${r.score} ${JSON.stringify((r.evidence ?? '').slice(0, 140))}\n`,
            );
          }
          counts.input += r.usage.inputTokens;
          return r;
        },
        reason: async (request: ReasonRequest): Promise<ReasonResult> => {
          const r = await agents.reason(request);
          counts.reason += 1;
          if (trace) {
            process.stderr.write(`  reason k=${request.messages.length}${request.force ? ' forced' : ''} -> ${JSON.stringify(r.answer)}\n`);
            for (const m of request.messages)
              process.stderr.write(
                `    ${m.id} s=${m.score}${goldHeads.some((h) => m.evidence.includes(h.slice(0, 40))) ? ' GOLD' : ''} ${JSON.stringify(m.evidence.slice(0, 110))}\n`,
              );
          }
          counts.input += r.usage.inputTokens;
          return r;
        },
        checkAnswer: async (request: CheckRequest): Promise<CheckResult> => {
          const r = await agents.checkAnswer(request);
          counts.reason += r.usage.calls;
          counts.input += r.usage.inputTokens;
          if (trace) process.stderr.write(`  check ${JSON.stringify(request.answer)} -> ${r.verdict}\n`);
          return r;
        },
        followUp: async (request: FollowUpRequest): Promise<FollowUpResult> => {
          const r = await agents.followUp(request);
          counts.reason += r.usage.calls;
          counts.input += r.usage.inputTokens;
          if (trace) process.stderr.write(`  follow-up -> ${JSON.stringify(r.followUp)}\n`);
          return r;
        },
      };
      const options: RunOptionsInput = { ...fitted, concurrency: 1, bestEffort: true, ...config.options };
      const started = performance.now();
      let record: TuneRecord;
      try {
        const { result } = await localWorkflowRunner({ question: q.question, documents: [{ id: doc.id, text: doc.text, title: doc.title }], options, model });
        const answered = result.answerable;
        const f1 = answered ? hotpotF1(result.answer, q.answer).f1 : 0;
        const em = answered ? hotpotExactMatch(result.answer, q.answer) : 0;
        const cited = goldSpans.filter((p) => result.citations.some((c) => c.start < p.end && c.end > p.start)).length;
        record = {
          id: q.id,
          type: q.type ?? 'unknown',
          config: config.name,
          length,
          prediction: result.answer,
          answerable: answered,
          gold: q.answer,
          f1,
          em,
          trace: result.trace.map((s) => ({ round: s.round, k: s.k, outcome: s.outcome, messagesUsed: s.messagesUsed })),
          rounds: result.rounds,
          chunks: result.chunks,
          seekCalls: counts.seek,
          reasonCalls: counts.reason,
          inputTokens: counts.input,
          citedGold: goldSpans.length === 0 ? 0 : cited / goldSpans.length,
          newModelMs,
          wallMs: performance.now() - started,
        };
      } catch (error) {
        record = {
          id: q.id,
          type: q.type ?? 'unknown',
          config: config.name,
          length,
          prediction: '',
          answerable: false,
          gold: q.answer,
          f1: 0,
          em: 0,
          trace: [],
          rounds: 0,
          chunks: 0,
          seekCalls: counts.seek,
          reasonCalls: counts.reason,
          inputTokens: counts.input,
          citedGold: 0,
          newModelMs,
          wallMs: performance.now() - started,
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        };
      }
      records.push(record);
      if (values.records) appendFileSync(values.records, `${JSON.stringify(record)}\n`);
      process.stderr.write(
        `[${i + 1}/${questions.length}] ${config.name} ${record.type} f1=${record.f1.toFixed(2)} ${JSON.stringify(record.prediction).slice(0, 50)} gold=${JSON.stringify(q.answer)} ` +
          `k=${record.trace.map((s) => `${s.round}:${s.k}${OUTCOME_LETTER[s.outcome] ?? '?'}`).join(',')} new ${Math.round(newModelMs / 1000)} s${record.error ? ` ERROR ${record.error}` : ''}\n`,
      );
    }
  }
  printTable(records, configs, values.json);
}

function printTable(records: TuneRecord[], configs: Config[], json: boolean): void {
  const rows = configs.map((c) => {
    const rs = records.filter((r) => r.config === c.name);
    const by = (type?: string): { n: number; f1: number; ci: [number, number] } => {
      const xs = rs.filter((r) => type === undefined || r.type === type).map((r) => r.f1);
      const ci = xs.length > 0 ? bootstrapMeanInterval(xs) : { low: 0, high: 0, mean: 0 };
      return { n: xs.length, f1: xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0, ci: [ci.low, ci.high] };
    };
    const first = records.filter((r) => r.config === configs[0].name);
    const paired = rs.map((r) => ({ a: r.f1, b: first.find((f) => f.id === r.id)?.f1 })).filter((p): p is { a: number; b: number } => p.b !== undefined);
    const diff =
      paired.length > 0 && c !== configs[0]
        ? pairedBootstrap(
            paired.map((p) => p.a),
            paired.map((p) => p.b),
          )
        : undefined;
    const mean = (f: (r: TuneRecord) => number): number => (rs.length ? rs.reduce((s, r) => s + f(r), 0) / rs.length : 0);
    return {
      config: c.name,
      all: by(),
      bridge: by('bridge'),
      comparison: by('comparison'),
      diff,
      refused: rs.filter((r) => !r.answerable).length,
      steps: mean((r) => r.trace.length),
      round2: rs.filter((r) => r.rounds >= 2).length,
      citedGold: mean((r) => r.citedGold),
      inputTokens: mean((r) => r.inputTokens),
      errors: rs.filter((r) => r.error).length,
    };
  });
  if (json) {
    process.stdout.write(`${JSON.stringify(rows)}\n`);
    return;
  }
  const pct = (x: number): string => (x * 100).toFixed(1);
  process.stdout.write(
    '| config | n | F1 [95% CI] | bridge F1 (n) | comparison F1 (n) | ΔF1 vs first [95% CI] | refused | KAR steps | round 2 | cited gold | input tok | errors |\n',
  );
  process.stdout.write('|---|---|---|---|---|---|---|---|---|---|---|---|\n');
  for (const r of rows) {
    process.stdout.write(
      `| ${r.config} | ${r.all.n} | ${pct(r.all.f1)} [${pct(r.all.ci[0])}, ${pct(r.all.ci[1])}] | ${pct(r.bridge.f1)} (${r.bridge.n}) | ${pct(r.comparison.f1)} (${r.comparison.n}) | ` +
        `${r.diff ? `${pct(r.diff.mean)} [${pct(r.diff.low)}, ${pct(r.diff.high)}]` : '–'} | ${r.refused} | ${r.steps.toFixed(1)} | ${r.round2} | ${pct(r.citedGold)} | ${Math.round(r.inputTokens)} | ${r.errors} |\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
