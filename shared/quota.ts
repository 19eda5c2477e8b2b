/**
 * Quota-aware fan-out: the seeking Map's MaxConcurrency from the model's throughput quota (issue 28,
 * item 1). Pure domain logic, no AWS SDK.
 *
 * Amazon Bedrock limits on-demand inference per model and Region, in requests per minute
 * ("On-demand InvokeModel requests per minute for <model>") and in tokens per minute ("On-demand
 * InvokeModel tokens per minute for <model>", input + output combined; "Cross-Region InvokeModel …"
 * for an inference profile such as `us.meta.llama3-1-8b-instruct-v1:0`). The token quota is reserved
 * at each request's start as its input tokens (cache reads and writes included) plus its `maxTokens`,
 * then settled. Source: https://docs.aws.amazon.com/bedrock/latest/userguide/quotas-runtime.html and
 * "How tokens are counted in Amazon Bedrock" (quotas-token-burndown.html), read 2026-12-03. Some
 * models (Anthropic Claude 3.7 and later) burn output tokens at 5× against the quota: state their
 * quota divided accordingly, or a lower one.
 *
 * Little's law: seeks in flight = arrival rate × time in the system. A seek that takes L seconds,
 * with c of them in flight, makes c / L × 60 requests and c / L × 60 × T tokens a minute (T tokens per
 * seek); so the largest c under a quota of R requests and Q tokens a minute is
 * min(R × L / 60, Q × L / (60 × T)), rounded down. A shorter assumed latency gives a smaller, safer
 * concurrency (the rates are then overestimated).
 */
import { DEFAULT_LATENCY_MODEL } from './latency';
import { QuotaExceededError } from './errors';
import type { ConcurrencyPlan, ModelQuota, RunEstimate, SeekingPlan } from './types';

export type { ConcurrencyPlan, ModelQuota, SeekingPlan } from './types';

/**
 * The workflow's Retry of a throttled model call (infra/extagents-workflow.ts `MODEL_RETRY` is built
 * from these): delays 2, 4, 8, 16, 32, 60 s (doubling, capped at 60 s), each drawn uniformly from
 * [0, delay] (full jitter), 6 retries: 7 attempts in all. More than `toleratedFailurePercentage`
 * (default 5%) of chunks failing this way fails the run.
 */
export const MODEL_RETRY_POLICY = {
  intervalSeconds: 2,
  backoffRate: 2,
  retries: 6,
  maxDelaySeconds: 60,
} as const;

/** Each retry's longest delay, seconds (2, 4, 8, 16, 32, 60). */
export function retryDelaysSeconds(policy: typeof MODEL_RETRY_POLICY = MODEL_RETRY_POLICY): number[] {
  return Array.from({ length: policy.retries }, (_, i) => Math.min(policy.maxDelaySeconds, policy.intervalSeconds * policy.backoffRate ** i));
}

/**
 * The retry budget of one seek, seconds: the expected wait of its retries with full jitter (half of
 * each delay: 61 s) and the longest (122 s).
 */
export function retryBudgetSeconds(policy: typeof MODEL_RETRY_POLICY = MODEL_RETRY_POLICY): { expected: number; longest: number } {
  const longest = retryDelaysSeconds(policy).reduce((a, b) => a + b, 0);
  return { expected: longest / 2, longest };
}

/** A run whose modeled seeking takes longer than this gets a warning with the numbers (1 hour), seconds. */
export const LONG_SEEKING_WARNING_SECONDS = 3600;

/** What the concurrency is derived from. */
export interface ConcurrencyInput {
  /** The stated quota of the seeking model (empty: none stated). */
  quota: ModelQuota;
  /** The run's own concurrency (run option `concurrency`): the most seeking agents at once, whatever the quota. */
  requested: number;
  /** Tokens one seek counts against the token quota: input (cache included) + output at its limit. */
  tokensPerSeek: number;
  /** Expected duration of one seek, seconds (see {@link defaultSeekLatency}). */
  seekLatencySeconds: number;
  /** Where `seekLatencySeconds` comes from, for the reasoning. */
  latencySource: string;
  /** The run's chunks and rounds, for the seeking time (rounds one after another); absent: not modeled. */
  seeks?: { chunks: number; rounds: number };
}

const round1 = (n: number): number => Math.round(n * 10) / 10;
const int = (n: number): string => Math.round(n).toLocaleString('en-US');

/**
 * Tokens one seek counts against the token quota, on average over the run's seeks, from the cost
 * estimate (shared/cost.ts `estimateRun`, the one token estimate of a seek): input, cache writes and
 * output at the seeker's output limit (which Bedrock reserves at the request's start).
 */
export function tokensPerSeek(estimate: RunEstimate): number {
  const s = estimate.seeker;
  if (s.calls === 0) return 0;
  return Math.ceil((s.inputTokens + (s.cacheWriteInputTokens ?? 0) + s.outputTokens) / s.calls);
}

/**
 * The default expected seek latency, seconds, when the run states none: the eval's latency model of
 * the seeker (shared/latency.ts `DEFAULT_LATENCY_MODEL`: 400 ms + 0.1 ms per input token + 10 ms
 * per output token, assumed for a Llama 3.1 8B class model on Bedrock, not measured). Over 8,000-token
 * chunks that is about 3 s (SOTU, two rounds: 3.1 s).
 */
export function defaultSeekLatency(estimate: RunEstimate): { seconds: number; source: string } {
  const s = estimate.seeker;
  const calls = Math.max(1, s.calls);
  const p = DEFAULT_LATENCY_MODEL.roles.seeker;
  const ms = p.fixedMs + (p.perInputTokenMs * (s.inputTokens + (s.cacheWriteInputTokens ?? 0))) / calls + (p.perOutputTokenMs * s.outputTokens) / calls;
  return {
    seconds: round1(Math.max(0.1, ms / 1000)),
    source: `assumed: the eval's seeker latency, ${p.fixedMs} ms + ${p.perInputTokenMs} ms/input token + ${p.perOutputTokenMs} ms/output token, shared/latency.ts; state yours with seekLatencySeconds`,
  };
}

/**
 * The seeking Map's MaxConcurrency under the model's quota, by Little's law (see the file comment):
 * concurrency = rate × latency under each stated limit, rounded down, capped by the run's own
 * concurrency, at least 1.
 * @param input quota (requests and tokens per minute), tokens per seek, seek latency (seconds), the
 *   run's concurrency and, optionally, its seek count.
 */
export function deriveConcurrency(input: ConcurrencyInput): ConcurrencyPlan {
  const { quota, requested, seekLatencySeconds: latency } = input;
  const tokens = Math.max(0, input.tokensPerSeek);
  const reasoning: string[] = [];
  const byRequests = quota.requestsPerMinute !== undefined ? (quota.requestsPerMinute * latency) / 60 : undefined;
  const byTokens = quota.tokensPerMinute !== undefined && tokens > 0 ? (quota.tokensPerMinute * latency) / (60 * tokens) : undefined;
  let concurrency = requested;
  let boundBy: ConcurrencyPlan['boundBy'] = 'concurrency';
  if (byRequests === undefined && byTokens === undefined) {
    reasoning.push(`no quota stated: the run's concurrency, ${requested}`);
  } else {
    reasoning.push(`a seek: ${int(tokens)} tokens (input + output at its limit), ${latency} s (${input.latencySource})`);
    if (byRequests !== undefined) {
      reasoning.push(`requests: ${int(quota.requestsPerMinute ?? 0)}/min × ${latency} s / 60 = ${round1(byRequests)} seeks in flight`);
      if (Math.floor(byRequests) < concurrency) [concurrency, boundBy] = [Math.floor(byRequests), 'requestsPerMinute'];
    }
    if (byTokens !== undefined) {
      reasoning.push(`tokens: ${int(quota.tokensPerMinute ?? 0)}/min × ${latency} s / (60 × ${int(tokens)}) = ${round1(byTokens)} seeks in flight`);
      if (Math.floor(byTokens) < concurrency) [concurrency, boundBy] = [Math.floor(byTokens), 'tokensPerMinute'];
    }
    if (concurrency < 1) {
      concurrency = 1;
      boundBy = 'minimum';
      reasoning.push('below 1: one seek at a time, and the quota will still throttle it (the workflow retries throttled calls)');
    } else {
      reasoning.push(
        boundBy === 'concurrency'
          ? `the quota allows more: the run's concurrency, ${requested}`
          : `MaxConcurrency ${concurrency} (the run's concurrency, ${requested}, is the cap)`,
      );
    }
  }
  const perMinute = (concurrency / latency) * 60;
  const plan: ConcurrencyPlan = {
    concurrency,
    requested,
    boundBy,
    quota,
    tokensPerSeek: tokens,
    seekLatencySeconds: latency,
    ...(byRequests !== undefined && { byRequests: round1(byRequests) }),
    ...(byTokens !== undefined && { byTokens: round1(byTokens) }),
    expectedRequestsPerMinute: round1(perMinute),
    expectedTokensPerMinute: Math.round(perMinute * tokens),
    reasoning,
  };
  // Rounds run one after another; a round's chunks on `concurrency` slots, each seek taking a slot's interval.
  if (input.seeks !== undefined) plan.seekingSeconds = Math.round(input.seeks.rounds * Math.ceil(input.seeks.chunks / concurrency) * seekIntervalSeconds(plan));
  return plan;
}

/**
 * Seconds one slot takes per seek at the plan's concurrency: the seek's latency, or longer when even
 * one seek at a time is over the quota (the wait that throttling imposes: 60 / R, or 60 × T / Q).
 */
function seekIntervalSeconds(plan: Pick<ConcurrencyPlan, 'quota' | 'tokensPerSeek' | 'seekLatencySeconds' | 'concurrency'>): number {
  const { quota, tokensPerSeek: tokens, seekLatencySeconds: latency, concurrency } = plan;
  const byRequests = quota.requestsPerMinute !== undefined ? (60 * concurrency) / quota.requestsPerMinute : 0;
  const byTokens = quota.tokensPerMinute !== undefined ? (60 * concurrency * tokens) / quota.tokensPerMinute : 0;
  return Math.max(latency, byRequests, byTokens);
}

/** What the pre-flight check found: a reason to refuse the run, and warnings (each with its numbers). */
export interface QuotaCheck {
  refusal?: string;
  warnings: string[];
}

/**
 * Pre-flight check of a plan (before any model call):
 * - refused when one seek's tokens exceed the token quota of a whole minute (every attempt would be
 *   throttled), or when one seek at a time must wait longer for the quota than the retry budget's
 *   expected wait (61 s; {@link retryBudgetSeconds}), so that its 7 attempts would likely run out;
 * - a warning when one seek at a time is still over the quota (throttling is certain, the retries
 *   absorb it), and when the modeled seeking time (rounds × ceil(chunks / MaxConcurrency) × seconds
 *   per seek) exceeds {@link LONG_SEEKING_WARNING_SECONDS}.
 */
export function checkQuota(plan: ConcurrencyPlan): QuotaCheck {
  const { quota, tokensPerSeek: tokens, seekLatencySeconds: latency } = plan;
  const warnings: string[] = [];
  const budget = retryBudgetSeconds();
  if (quota.tokensPerMinute !== undefined && tokens > quota.tokensPerMinute) {
    return {
      refusal: `one seek counts ${int(tokens)} tokens against a quota of ${int(quota.tokensPerMinute)} tokens per minute: every attempt would be throttled; use smaller chunks (chunkTokens) or a larger quota`,
      warnings,
    };
  }
  const interval = seekIntervalSeconds({ ...plan, concurrency: 1 });
  const wait = interval - latency;
  if (wait > budget.expected) {
    return {
      refusal:
        `one seek at a time needs ${round1(interval)} s per seek under the quota (${describeQuota(quota)}, ${int(tokens)} tokens a seek) but takes ${latency} s: ` +
        `each seek would wait ${round1(wait)} s for the quota, more than its retries wait on average (${budget.expected} s of at most ${budget.longest} s over ${MODEL_RETRY_POLICY.retries} retries); use smaller chunks or a larger quota`,
      warnings,
    };
  }
  if (wait > 0) {
    warnings.push(
      `one seek at a time is over the quota (${describeQuota(quota)}): each seek waits about ${round1(wait)} s for it through throttling and retries (budget ${budget.expected} s on average); expect throttled calls`,
    );
  }
  if (plan.seekingSeconds !== undefined && plan.seekingSeconds > LONG_SEEKING_WARNING_SECONDS) {
    warnings.push(
      `seeking would take about ${round1(plan.seekingSeconds / 60)} min at MaxConcurrency ${plan.concurrency} (${plan.seekLatencySeconds} s a seek): over ${LONG_SEEKING_WARNING_SECONDS / 60} min`,
    );
  }
  return { warnings };
}

/**
 * The pre-flight check of a plan, enforced: the plan with its warnings, or the refusal. Prepare runs
 * it before any model call, and the HTTP API before it starts a run whose corpus it already knows
 * (shared/api/core.ts), so both refuse the same runs with the same message.
 * @throws QuotaExceededError `Refused before any model call: <refusal>`, with the plan.
 */
export function enforceQuota(plan: ConcurrencyPlan): SeekingPlan {
  const check = checkQuota(plan);
  const checked: SeekingPlan = { ...plan, warnings: check.warnings };
  if (check.refusal !== undefined) throw new QuotaExceededError(`Refused before any model call: ${check.refusal}`, { plan: checked });
  return checked;
}

/** `600 requests/min, 300,000 tokens/min`. */
export function describeQuota(quota: ModelQuota): string {
  const parts = [
    ...(quota.requestsPerMinute !== undefined ? [`${int(quota.requestsPerMinute)} requests/min`] : []),
    ...(quota.tokensPerMinute !== undefined ? [`${int(quota.tokensPerMinute)} tokens/min`] : []),
  ];
  return parts.length > 0 ? parts.join(', ') : 'no quota';
}

/** The run options the plan reads (shared/config.ts). */
export interface QuotaOptions {
  concurrency: number;
  rounds: number;
  quotaRequestsPerMinute?: number;
  quotaTokensPerMinute?: number;
  seekLatencySeconds?: number;
}

/**
 * The plan of a run: its quota (run options first, then the deployment's default, CDK context
 * `quotaRequestsPerMinute` / `quotaTokensPerMinute`), tokens per seek and latency from its cost
 * estimate unless `seekLatencySeconds` states the latency, and its seeks (the estimate's seeker calls).
 */
export function planRunConcurrency(estimate: RunEstimate, options: QuotaOptions, deploymentQuota: ModelQuota = {}): ConcurrencyPlan {
  const quota: ModelQuota = {
    ...((options.quotaRequestsPerMinute ?? deploymentQuota.requestsPerMinute) !== undefined && {
      requestsPerMinute: options.quotaRequestsPerMinute ?? deploymentQuota.requestsPerMinute,
    }),
    ...((options.quotaTokensPerMinute ?? deploymentQuota.tokensPerMinute) !== undefined && {
      tokensPerMinute: options.quotaTokensPerMinute ?? deploymentQuota.tokensPerMinute,
    }),
  };
  const latency =
    options.seekLatencySeconds !== undefined ? { seconds: options.seekLatencySeconds, source: 'run option seekLatencySeconds' } : defaultSeekLatency(estimate);
  return deriveConcurrency({
    quota,
    requested: options.concurrency,
    tokensPerSeek: tokensPerSeek(estimate),
    seekLatencySeconds: latency.seconds,
    latencySource: latency.source,
    seeks: { chunks: Math.ceil(estimate.seeker.calls / options.rounds), rounds: options.rounds },
  });
}
