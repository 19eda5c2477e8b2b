/**
 * Human-readable rendering of a run result for the CLI (the `--json` output is the RunResult itself).
 */
import { formatUsd, type PriceMode, type PricedEstimate, ROLE_RATE, type RolePrice } from '../../shared/cost';
import type { RunResult, SeekingPlan, Usage } from '../../shared/types';
import type { TimeForecast } from '../../shared/capacity';

const n = (x: number): string => x.toLocaleString('en-US');
/** "1 call", "2 calls". */
const count = (x: number, noun: string): string => `${n(x)} ${noun}${x === 1 ? '' : 's'}`;

/**
 * What ran as batch and what on demand, a line per round of a run with `seekMode: 'batch'`
 * (`RunResult.batch`): `Batch seeking, round 1: 7 records in 1 job (Completed); 6 read back, 1 failed
 * record sought on demand`, or `Batch seeking, round 2: on demand (<why>)`.
 */
export function formatBatch(batch: NonNullable<RunResult['batch']>): string[] {
  return batch.rounds.map((r) => {
    if (r.mode === 'on-demand') return `Batch seeking, round ${r.round}: sought on demand (${r.reason ?? 'no batch job'})`;
    const statuses = [...new Set(r.jobs.map((j) => j.status ?? 'not ended'))].join(', ');
    const ondemand = (r.failedRecords ?? 0) + (r.missingRecords ?? 0);
    const read = r.recorded === undefined ? '' : `; ${n(r.recorded)} read back`;
    const rest =
      ondemand === 0
        ? ''
        : `, ${[r.failedRecords ? `${count(r.failedRecords, 'failed record')}` : '', r.missingRecords ? `${count(r.missingRecords, 'record')} the job did not return` : ''].filter((x) => x !== '').join(' and ')} sought on demand`;
    return `Batch seeking, round ${r.round}: ${count(r.records, 'record')} in ${count(r.jobs.length, 'job')} (${statuses})${read}${rest}`;
  });
}

/**
 * Usage per role on one line each, e.g. "seeker: 270 calls, 2,150,000 input / 9,000 output tokens",
 * with ", 41.2 s in model calls" when the model time is known (summed over parallel calls).
 */
export function formatUsage(usage: Usage): string[] {
  return (Object.keys(usage) as Array<keyof Usage>).flatMap((role) => {
    const u = usage[role];
    if (u === undefined) return [];
    const waits = u.throttleWaitMs ? `, ${(u.throttleWaitMs / 1000).toFixed(1)} s waiting out throttling` : '';
    const time = `${u.modelMs ? `, ${(u.modelMs / 1000).toFixed(1)} s in model calls` : ''}${waits}`;
    const label = role === 'speculative' ? 'speculative (seeker calls of a pipelined round not used; included in seeker)' : role;
    return [`${label}: ${count(u.calls, 'call')}, ${n(u.inputTokens)} input / ${n(u.outputTokens)} output tokens${time}`];
  });
}

/** The KAR trace grouped by round, e.g. "round 1: k=1 refused, k=2 answered". */
export function formatTrace(result: RunResult): string[] {
  if (result.trace.length === 0) return ['(no reasoning step: no seeking agent found information)'];
  const rounds = [...new Set(result.trace.map((s) => s.round))];
  return rounds.map((round) => {
    const steps = result.trace
      .filter((s) => s.round === round)
      .map(
        (s) =>
          `k=${s.k}${s.messagesUsed < s.k ? ` (${s.messagesUsed} fit the budget)` : ''} ${s.forced ? 'best-effort ' : ''}${s.outcome}${s.followUp !== undefined ? ` (follow-up: ${JSON.stringify(s.followUp)})` : ''}`,
      );
    return `round ${round}: ${steps.join(', ')}`;
  });
}

/**
 * The transient model errors the workflow retried, e.g. "Retried model errors: 12 (seeker 11,
 * reasoner 1; ModelThrottledError 10, ModelTimeoutError 2)"; undefined when there were none.
 */
export function formatRetries(result: RunResult): string | undefined {
  const retries = result.retries as RunResult['retries'] | undefined; // absent in results of older versions
  if (retries === undefined || retries.total === 0) return undefined;
  const roles = (Object.keys(retries.byRole) as Array<keyof typeof retries.byRole>).map((role) => `${role} ${n(retries.byRole[role])}`);
  const errors = Object.entries(retries.byError)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, count]) => `${name} ${n(count)}`);
  return `Retried model errors: ${n(retries.total)} (${roles.join(', ')}; ${errors.join(', ')})`;
}

/**
 * Text for a terminal: every control character but line feed and tab (C0, DEL, C1: escape sequences
 * that would recolour or rewrite the terminal, carriage returns, bells) shown as `\xNN`. A question,
 * an answer or a quote is the user's or a document's text, printed as it is otherwise.
 */
export function terminalSafe(text: string): string {
  return text.replace(/(?![\n\t])\p{Cc}/gu, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * The whole human-readable report.
 * @param elapsedMs wall time of the run, milliseconds, printed as `Time:`; omitted (no line) for a stored run whose time is unknown.
 */
export function formatResult(result: RunResult, elapsedMs?: number): string {
  const lines: string[] = [];
  lines.push(`Question: ${result.question}`);
  lines.push(`Answer: ${result.answer}`);
  const forced = result.trace.some((s) => s.forced && s.outcome === 'answered');
  lines.push(`Answerable: ${result.answerable ? (forced ? 'best effort (no KAR step could answer; forced answer from the best evidence)' : 'yes') : 'no'}`);
  // What the answer is when no language model wrote it (the extractive reader: a sentence chosen by word overlap).
  if (result.answerBasis !== undefined) lines.push(`${result.answerable ? 'Answered by' : 'Refused by'}: ${result.answerBasis}`);
  // A best-effort guess its citations do not hold: shown, never as the answer (shared/support.ts).
  if (result.unsupportedAnswer !== undefined) {
    lines.push(`Unsupported guess (best effort; not in the quotes it cites, so refused): ${result.unsupportedAnswer}`);
  }
  lines.push('');
  lines.push(result.answerable ? 'Citations:' : 'Best evidence found:');
  if (result.citations.length === 0) lines.push('  (none)');
  result.citations.forEach((c, i) => {
    lines.push(
      `  [${i + 1}] ${c.documentId}${c.location ? ` (${c.location})` : ''} chars ${c.start}-${c.end}${c.sourceLine !== undefined ? `, source line ${c.sourceLine}` : ''}${c.sourceOffset !== undefined ? `, source char ${c.sourceOffset}` : ''} (chunk ${c.chunkIndex}, round ${c.round}, score ${c.score})`,
    );
    lines.push(`      "${c.quote}"`);
  });
  lines.push('');
  lines.push('Knowledge-accumulating reasoning:');
  for (const line of formatTrace(result)) lines.push(`  ${line}`);
  lines.push('');
  lines.push(`Corpus: ${count(result.chunks, 'chunk')}; pool: ${count(result.poolSize, 'message')}; rounds run: ${result.rounds}`);
  if (result.coverage) {
    const { covered, cap, tranches } = result.coverage;
    lines.push(`Coverage (grow): ${count(covered, 'chunk')} of ${result.chunks} sought per round, in ${count(tranches, 'tranche')} (at most ${cap})`);
  }
  if (result.batch) for (const line of formatBatch(result.batch)) lines.push(line);
  if (result.reseek) {
    const rounds = result.reseek.chunksPerRound.map((chunks, i) => `round ${i + 1}: ${chunks === 0 && i > 0 ? 'skipped' : n(chunks)}`);
    lines.push(`Reseek (promising): chunks sought per round of ${result.chunks}: ${rounds.join(', ')}`);
  }
  if (result.models !== undefined) {
    const { seeker, reasoner } = result.models;
    lines.push(`Model: ${seeker === reasoner ? seeker : `seeking agents ${seeker}, reasoning agent ${reasoner}`}`);
  }
  lines.push('Usage:');
  for (const line of formatUsage(result.usage)) lines.push(`  ${line}`);
  if (result.estimate) {
    const e = result.estimate;
    lines.push(
      `  estimated before the run, at most: seeker ${count(e.seeker.calls, 'call')}, ${n(e.seeker.inputTokens)} / ${n(e.seeker.outputTokens)} tokens; reasoner ${count(e.reasoner.calls, 'call')}, ${n(e.reasoner.inputTokens)} / ${n(e.reasoner.outputTokens)} tokens`,
    );
  }
  if (result.skipped.length > 0) {
    lines.push(`Skipped documents (${result.skipped.length}):`);
    for (const s of result.skipped) lines.push(`  ${s.documentId}: ${s.reason}`);
  }
  if (result.chunkFailures.length > 0) {
    lines.push(`Failed chunks (tolerated, ${result.chunkFailures.length}): ${result.chunkFailures.map((f) => f.chunk).join(', ')}`);
    for (const f of result.chunkFailures) lines.push(`  chunk ${f.chunk} (round ${f.round}): ${f.error}: ${f.message}`);
  }
  const retries = formatRetries(result);
  if (retries !== undefined) lines.push(retries);
  // A stated quota: MaxConcurrency, its reasoning and the throttled calls (warnings follow below).
  if (result.concurrency && (result.concurrency.quota.requestsPerMinute !== undefined || result.concurrency.quota.tokensPerMinute !== undefined)) {
    const [head, ...steps] = formatConcurrency({ ...result.concurrency, warnings: [] });
    lines.push(
      head,
      ...steps,
      `  throttled model calls: ${n(result.concurrency.throttledCalls)} (each retried); seeking agents waited ${result.concurrency.throttleWaitSeconds} s in all for the retries (summed over chunks: chunks wait side by side, so this is not the run's wall time)`,
    );
  }
  if (result.warnings.length > 0) {
    lines.push(`Warnings (${result.warnings.length}):`);
    for (const w of result.warnings) lines.push(`  ${w}`);
  }
  if (elapsedMs !== undefined) lines.push(`Time: ${(elapsedMs / 1000).toFixed(1)} s`);
  return terminalSafe(lines.join('\n'));
}

/** A role's price as the estimate prints it: `$1.42 (bedrock:…, $0.22 / $0.22 per 1M tokens, 2026-11-30, unverified)` or `no price: <why>`. */
function rolePriceText(p: RolePrice, withModel = true): string {
  if (!p.priced) return `no price: ${p.reason}`;
  return `$${formatUsd(p.usd)} (${withModel ? `${p.model}, ` : ''}$${p.inputUsdPerMTok} / $${p.outputUsdPerMTok} per 1M tokens, ${p.asOf}${p.verified ? '' : ', unverified'})`;
}

/** The seeking modes, and the rates, as the estimate names them. */
const MODE_WORDS: Record<PriceMode, string> = { 'on-demand': 'seeking on demand', batch: 'seeking as batch jobs' };
const RATE_WORDS: Record<PriceMode, string> = { 'on-demand': 'on demand', batch: 'batch' };

/**
 * A priced estimate (`ask --estimate`) in both seeking modes, e.g.
 * `seeker: at most 542 calls, 6,363,975 input / 82,384 output tokens; on demand $1.42 (bedrock:…, $0.22 / $0.22 per 1M tokens, 2026-11-30, unverified); batch $0.71 (…)`,
 * a total line per mode (the run's `seekMode` marked), and batch seeking's expected wait.
 */
export function formatEstimate(
  priced: PricedEstimate,
  corpus: { chunks: number; tokens: number; rounds: number },
  concurrency?: SeekingPlan & { refusal?: string },
  time?: TimeForecast,
  costRefusal?: string,
): string {
  const lines = [`Estimate before any model call (an upper bound): ${count(corpus.chunks, 'chunk')}, ${n(corpus.tokens)} tokens, ${corpus.rounds} round(s)`];
  const modes = Object.keys(priced.modes) as PriceMode[];
  // A run that costs nothing in any mode (the offline reader) has one total; else one per mode.
  const free = modes.every((m) => priced.modes[m].totalUsd === 0);
  for (const role of ['seeker', 'reasoner'] as const) {
    const e = priced[role];
    const tokens = `${role}: at most ${count(e.calls, 'call')}, ${n(e.inputTokens)} input / ${n(e.outputTokens)} output tokens`;
    // The rates this role is billed at across the modes (ROLE_RATE): one price, or one per rate.
    const rates = [...new Set(modes.map((m) => ROLE_RATE[m][role]))];
    const priceIn = (rate: PriceMode): RolePrice => priced.modes[modes.find((m) => ROLE_RATE[m][role] === rate) ?? rate].prices[role];
    const same = rates.every((rate) => rolePriceText(priceIn(rate)) === rolePriceText(priceIn(rates[0])));
    if (rates.length === 1 || free || same) {
      lines.push(`  ${tokens}, ${rolePriceText(priceIn(rates[0]))}${free || rates.length > 1 ? '' : `, ${RATE_WORDS[rates[0]]} in either seeking mode`}`);
    } else {
      const each = rates.map((rate, i) => `${RATE_WORDS[rate]} ${rolePriceText(priceIn(rate), i === 0)}`);
      lines.push(`  ${tokens}; ${each.join('; ')}`);
    }
  }
  if (free) lines.push('  total: at most $0 (either seeking mode)');
  else
    for (const m of modes) {
      const total = priced.modes[m].totalUsd;
      const run = m === priced.mode ? " (the run's seekMode)" : '';
      lines.push(`  total, ${MODE_WORDS[m]}${run}: ${total !== undefined ? `at most $${formatUsd(total)}` : 'no price (a role has none)'}`);
      if (m === 'batch')
        lines.push(
          `    expected wait: each round's seeking waits for its batch job, ${priced.batchWait.text}: ${priced.batchWait.basis}, ${priced.batchWait.source} (the modeled time below is for seeking on demand)`,
        );
    }
  // --max-cost: what Prepare would do with this estimate.
  if (costRefusal !== undefined) lines.push(`  the run would be refused (CostLimitExceededError): ${costRefusal}`);
  // The table's caveat where a price from it was used.
  if (modes.some((m) => [priced.modes[m].prices.seeker, priced.modes[m].prices.reasoner].some((p) => p.priced && p.usd > 0)))
    lines.push(`Prices of ${priced.priceTable.writtenOn}: ${priced.priceTable.warning}`);
  if (concurrency) {
    // One estimate of the seeking time: the capacity model's (below) when there is one.
    lines.push(...formatConcurrency(concurrency, { seekingTime: !time }));
    if (concurrency.refusal !== undefined) lines.push(`  the run would be refused (QuotaExceededError): ${concurrency.refusal}`);
  }
  if (time) lines.push(...formatTimeForecast(time));
  return lines.join('\n');
}

/** `12 s`, `4.2 min`, `2.1 h`. */
function duration(seconds: number): string {
  return seconds < 90 ? `${Math.round(seconds)} s` : seconds < 5400 ? `${(seconds / 60).toFixed(1)} min` : `${(seconds / 3600).toFixed(1)} h`;
}

/**
 * The expected time beside the cost (shared/capacity.ts `forecastRun`), e.g.
 * `Expected time on the AWS path (modeled): about 5.1 min to the answer (seeking 51 s + 50 s, reasoning at most 3.5 min)`.
 */
export function formatTimeForecast(time: TimeForecast): string[] {
  const seeking = time.seekingSecondsPerRound.map(duration).join(' + ');
  const lines = [
    time.failedRound !== undefined
      ? `Expected time on the AWS path (modeled): the run would fail in round ${time.failedRound}: ${n(time.failedChunks)} chunk(s) out of retries after ${n(time.throttles)} throttled attempts`
      : `Expected time on the AWS path (modeled): about ${duration(time.totalSeconds)} to the answer (seeking ${seeking}, reasoning at most ${duration(time.reasoningSeconds)})` +
        (time.throttles > 0 ? `, ${n(time.throttles)} throttled attempts` : ''),
    `  assumed: ${time.assumptions}`,
  ];
  return lines;
}

/**
 * The seeking concurrency and its reasoning (shared/quota.ts), e.g.
 * `Seeking concurrency: 5 (set by tokensPerMinute; seeking about 6.0 min, modeled)` then one line per
 * step; without the seeking time when `seekingTime` is false (the caller prints the capacity model's).
 */
export function formatConcurrency(plan: SeekingPlan, options: { seekingTime?: boolean } = {}): string[] {
  const by = plan.boundBy === 'concurrency' ? '--concurrency' : plan.boundBy === 'minimum' ? 'the minimum of 1' : plan.boundBy;
  const time =
    options.seekingTime !== false && plan.seekingSeconds !== undefined
      ? `; seeking about ${plan.seekingSeconds < 120 ? `${plan.seekingSeconds} s` : `${(plan.seekingSeconds / 60).toFixed(1)} min`}, modeled`
      : '';
  const lines = [`Seeking concurrency: ${plan.concurrency} (set by ${by}${time})`];
  for (const step of plan.reasoning) lines.push(`  ${step}`);
  for (const warning of plan.warnings) lines.push(`  warning: ${warning}`);
  return lines;
}
