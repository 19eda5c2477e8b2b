/**
 * Capacity of the AWS path (issue 28, item 2): the capacity model (shared/capacity.ts) for corpora
 * of 1M, 10M and 100M tokens under a few model quotas, and its check against the local engine.
 *
 * Table mode (default): for each corpus and quota, the run's calls and tokens (shared/cost.ts
 * `estimateRun`, default run options, 8,000-token chunks), its cost (shared/prices.json, the model
 * `--model`), the seeking Map's MaxConcurrency under the quota (shared/quota.ts, as Prepare derives
 * it, the run asking for `--concurrency`), the pre-flight check's refusal, and the model's time per
 * round, time to answer, throttled attempts and failed chunks (seed `--seed`). With `--unaware`, a
 * second line per quota runs the Map at `--concurrency` ignoring the quota (what a fixed
 * concurrency does). Nothing is measured in this mode: every time is modeled, under the
 * assumptions named in the output (latency per token, cold start, quota bucket).
 *
 * `--check-local`: the model against the local workflow at small scale (test/support/capacity-check.ts):
 * a scripted model that enforces a request quota and throttles above it (ModelThrottledError, as the
 * Bedrock adapter raises), through runLocal with the workflow's retry policy on a clock
 * `--time-scale` times as fast; printed side by side: seeking time and throttles, measured and modeled
 * (the mean and range of 20 seeds, and the means with no and with twice the local engine's calibrated
 * work per seek), once with the quota unknown to the run and once stated to it.
 *
 * Usage: npx tsx bench/capacity.ts [--quotas 800:300000,2000:2000000,10000:20000000] [--concurrency 10000]
 *   [--seek-reserved 100] [--unaware] [--seed 1] [--model <spec>] [--json] [--check-local] [--time-scale 0.05]
 */
import { parseRunOptions } from '../shared/config';
import { estimateRun, formatUsd, priceEstimate } from '../shared/cost';
import { DEFAULT_LATENCY_MODEL } from '../shared/latency';
import { DEFAULT_MODEL_SPEC } from '../models/spec';
import { modelPricing } from '../models';
import { checkQuota, describeQuota, planRunConcurrency } from '../shared/quota';
import {
  DEFAULT_QUOTA_BURST_SECONDS,
  DEFAULT_SEEK_OVERHEAD_SECONDS,
  DEFAULT_SEEK_RESERVED_CONCURRENCY,
  DEFAULT_THROTTLED_ATTEMPT_SECONDS,
  LAMBDA_DEFAULTS,
  scenarioOfRun,
  simulateCapacity,
  type CapacityResult,
  type LambdaCapacity,
} from '../shared/capacity';
import type { ModelQuota } from '../shared/types';
import { LOCAL_CHECK, runCapacityCheck, type CapacityCheckResult } from '../test/support/capacity-check';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/capacity.ts [--quotas 800:300000,2000:2000000,10000:20000000] [--concurrency 10000]
  [--seek-reserved 100] [--unaware] [--seed 1] [--model <spec>] [--json] [--check-local] [--time-scale 0.05]

The capacity model of the AWS path (shared/capacity.ts: the seeking Distributed Map's MaxConcurrency,
Lambda's concurrency, scaling rate and cold starts, the model's latency per token, its quota, the
workflow's retry policy for throttling, the failed-chunk tolerance) for corpora of 1M, 10M and 100M
tokens under each quota: MaxConcurrency, seeking time per round, time to answer, model calls, tokens,
throttled attempts, failed chunks and model cost. Every time is modeled, not measured.

--check-local runs the model against the local workflow instead (a scripted model that throttles
above a request quota, through runLocal, the retry policy on a faster clock) and prints the measured
and modeled seeking time and throttles side by side.

Options:
  --quotas LIST       requests:tokens per minute of the model, comma-separated (default
                      800:300000,2000:2000000,10000:20000000; illustrative: read yours in the Service
                      Quotas console, "On-demand InvokeModel requests/tokens per minute for <model>")
  --concurrency N     the run's concurrency option: the most seeks at once, the quota deciding below
                      it (default 10000, the Distributed Map's maximum)
  --seek-reserved N   the Seek function's concurrency: the deployment's seekReservedConcurrency
                      (default ${DEFAULT_SEEK_RESERVED_CONCURRENCY}), at most the account's (1,000 by default)
  --unaware           also model the Map at --concurrency ignoring the quota (a fixed concurrency)
  --seed N            seed of the retries' jitter (default 1)
  --model SPEC        model spec for the prices (default ${DEFAULT_MODEL_SPEC})
  --json              one JSON line per row instead of the table
  --check-local       check the model against the local workflow (takes about 10 s)
  --time-scale X      --check-local: real seconds per modeled second (default 0.05)
  -h, --help          print this and exit
`;

const { values } = benchArgs(USAGE, {
  quotas: { type: 'string', default: '800:300000,2000:2000000,10000:20000000' },
  concurrency: { type: 'string', default: '10000' },
  'seek-reserved': { type: 'string', default: String(DEFAULT_SEEK_RESERVED_CONCURRENCY) },
  unaware: { type: 'boolean', default: false },
  seed: { type: 'string', default: '1' },
  model: { type: 'string', default: DEFAULT_MODEL_SPEC },
  json: { type: 'boolean', default: false },
  'check-local': { type: 'boolean', default: false },
  'time-scale': { type: 'string', default: '0.05' },
});

function positive(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) usageError(USAGE, `--${name} must be a positive number (got '${text}')`);
  return n;
}

const CORPORA = [1_000_000, 10_000_000, 100_000_000];
const QUESTION = 'Which programmes did the committee fund after the 2019 review, and why?';

const minutes = (s: number): string => (s < 90 ? `${s.toFixed(0)} s` : s < 5400 ? `${(s / 60).toFixed(1)} min` : `${(s / 3600).toFixed(1)} h`);
const n = (v: number): string => Math.round(v).toLocaleString('en-US');
const mTokens = (v: number): string => (v >= 1e6 ? `${(v / 1e6).toFixed(v >= 1e8 ? 0 : 1)}M` : `${(v / 1e3).toFixed(0)}k`);

interface Row {
  corpusTokens: number;
  quota: ModelQuota;
  mode: 'quota-aware' | 'unaware';
  chunks: number;
  mapConcurrency: number;
  boundBy: string;
  seekLatencySeconds: number;
  tokensPerSeek: number;
  refusal?: string;
  model: CapacityResult;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  usd?: number;
}

function tableRows(quotas: ModelQuota[], requested: number, seed: number, unaware: boolean, lambda: LambdaCapacity): Row[] {
  const spec = modelPricing(values.model);
  const options = parseRunOptions({ concurrency: requested });
  const rows: Row[] = [];
  for (const corpusTokens of CORPORA) {
    const chunks = Math.ceil(corpusTokens / options.chunkTokens);
    const estimate = priceEstimate(estimateRun({ chunks, chunkTokensTotal: corpusTokens, question: QUESTION, options }, spec), spec);
    for (const quota of quotas) {
      const plan = planRunConcurrency(estimate, { ...options, quotaRequestsPerMinute: quota.requestsPerMinute, quotaTokensPerMinute: quota.tokensPerMinute });
      const check = checkQuota(plan);
      const modes: Array<[Row['mode'], number]> = [['quota-aware', plan.concurrency], ...(unaware ? [['unaware', requested] as [Row['mode'], number]] : [])];
      for (const [mode, mapConcurrency] of modes) {
        const model = simulateCapacity({ ...scenarioOfRun(estimate, { ...plan, concurrency: mapConcurrency }, options), lambda, seed });
        rows.push({
          corpusTokens,
          quota,
          mode,
          chunks,
          mapConcurrency,
          boundBy: mode === 'unaware' ? 'fixed' : plan.boundBy,
          seekLatencySeconds: plan.seekLatencySeconds,
          tokensPerSeek: plan.tokensPerSeek,
          ...(check.refusal !== undefined && { refusal: check.refusal }),
          model,
          calls: estimate.seeker.calls + estimate.reasoner.calls,
          inputTokens: estimate.seeker.inputTokens + (estimate.seeker.cacheWriteInputTokens ?? 0) + estimate.reasoner.inputTokens,
          outputTokens: estimate.seeker.outputTokens + estimate.reasoner.outputTokens,
          ...(estimate.totalUsd !== undefined && { usd: estimate.totalUsd }),
        });
      }
    }
  }
  return rows;
}

function printTable(rows: Row[], requested: number, seed: number, lambda: LambdaCapacity): void {
  const first = rows[0];
  const latency = DEFAULT_LATENCY_MODEL.roles;
  process.stdout.write(
    [
      `Capacity of the AWS path, modeled (shared/capacity.ts, seed ${seed}); model ${values.model}; default run options (chunks of 8,000 tokens, 2 rounds, 5% failed chunks tolerated); the run asks for concurrency ${n(requested)}.`,
      `Assumed: a seek ${first?.seekLatencySeconds ?? '?'} s (${latency.seeker.fixedMs} ms + ${latency.seeker.perInputTokenMs} ms/input token + ${latency.seeker.perOutputTokenMs} ms/output token), ` +
        `a reasoning call ${latency.reasoner.fixedMs} ms + ${latency.reasoner.perInputTokenMs} ms/input token + ${latency.reasoner.perOutputTokenMs} ms/output token; ` +
        `a seek's own work ${DEFAULT_SEEK_OVERHEAD_SECONDS} s; the Seek function ${n(lambda.concurrency)} concurrent, +${n(lambda.scalingPer10Seconds)} environments per 10 s, cold start ${lambda.coldStartSeconds} s; ` +
        `the quota a token bucket of ${DEFAULT_QUOTA_BURST_SECONDS} s of it; a throttled attempt ${DEFAULT_THROTTLED_ATTEMPT_SECONDS} s. Calls, tokens and cost are the estimate's upper bound (every KAR step); cost is the model's only.`,
      '',
      '| corpus | quota (requests/min, tokens/min) | Map | MaxConcurrency | seeking per round | time to answer | calls | tokens in / out | throttled attempts | failed chunks | model cost |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows.map((r) => {
        const rounds = r.model.rounds.map((x) => minutes(x.seekingSeconds)).join(' + ');
        const answer = r.model.failedRound !== undefined ? `fails in round ${r.model.failedRound}` : minutes(r.model.totalSeconds);
        const refused = r.refusal !== undefined && r.mode === 'quota-aware' ? ' (refused before it starts)' : '';
        return `| ${mTokens(r.corpusTokens)} (${n(r.chunks)} chunks) | ${n(r.quota.requestsPerMinute ?? 0)}, ${n(r.quota.tokensPerMinute ?? 0)} | ${r.mode} | ${n(r.mapConcurrency)} (${r.boundBy}) | ${rounds} | ${answer}${refused} | ${n(r.calls)} | ${mTokens(r.inputTokens)} / ${mTokens(r.outputTokens)} | ${n(r.model.throttles)} | ${n(r.model.failedChunks)} | ${r.usd !== undefined ? `$${formatUsd(r.usd)}` : 'no price'} |`;
      }),
      '',
    ].join('\n'),
  );
}

function printCheck(results: CapacityCheckResult[]): void {
  for (const r of results) {
    const s = r.scenario;
    const times = r.modeled.runs.map((x) => x.seekingSeconds);
    const throttles = r.modeled.runs.map((x) => x.throttles);
    const line = {
      scenario: `${s.chunks} chunks, ${describeQuota(s.quota)} enforced (bucket of ${s.burstSeconds} s), seek ${s.seekSeconds} s, quota ${s.stateQuota ? 'stated to the run' : 'unknown to the run'}, MaxConcurrency ${r.mapConcurrency}, time x${s.timeScale}`,
      seekingSeconds: {
        measured: round1(r.measured.seekingSeconds),
        modeledMean: round1(r.modeled.seekingSeconds),
        modeledRange: [round1(Math.min(...times)), round1(Math.max(...times))],
        ratio: round2(r.measured.seekingSeconds / r.modeled.seekingSeconds),
        modeledMeanAtNoAndTwiceOverhead: [round1(r.bounds.noOverhead.seekingSeconds), round1(r.bounds.doubleOverhead.seekingSeconds)],
      },
      throttles: {
        measured: r.measured.throttles,
        reportedByRun: r.measured.reportedThrottles,
        modeledMean: round1(r.modeled.throttles),
        modeledRange: [Math.min(...throttles), Math.max(...throttles)],
        modeledMeanAtTwiceAndNoOverhead: [round1(r.bounds.doubleOverhead.throttles), round1(r.bounds.noOverhead.throttles)],
      },
      seekOverheadSeconds: round2(r.seekOverheadSeconds),
      failedChunks: { measured: r.measured.failedChunks, modeledMean: round1(r.modeled.failedChunks) },
      wallSeconds: round1(r.measured.wallSeconds),
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
}

const round1 = (v: number): number => Math.round(v * 10) / 10;
const round2 = (v: number): number => Math.round(v * 100) / 100;

async function main(): Promise<void> {
  const seed = Math.round(positive('seed', values.seed));
  if (values['check-local']) {
    const timeScale = positive('time-scale', values['time-scale']);
    const results: CapacityCheckResult[] = [];
    for (const stateQuota of [false, true]) {
      results.push(await runCapacityCheck({ ...LOCAL_CHECK, timeScale, stateQuota }));
    }
    printCheck(results);
    return;
  }
  const requested = Math.round(positive('concurrency', values.concurrency));
  const quotas = values.quotas.split(',').map((pair) => {
    const [rpm, tpm] = pair.split(':');
    if (rpm === undefined || tpm === undefined) usageError(USAGE, `--quotas takes requests:tokens pairs (got '${pair}')`);
    return { requestsPerMinute: positive('quotas', rpm), tokensPerMinute: positive('quotas', tpm) };
  });
  const lambda = { ...LAMBDA_DEFAULTS, concurrency: Math.round(positive('seek-reserved', values['seek-reserved'])) };
  const rows = tableRows(quotas, requested, seed, values.unaware, lambda);
  if (values.json) for (const r of rows) process.stdout.write(`${JSON.stringify({ ...r, model: { ...r.model, rounds: r.model.rounds } })}\n`);
  else printTable(rows, requested, seed, lambda);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
