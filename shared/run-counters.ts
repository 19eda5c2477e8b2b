/**
 * The rules every `MessageStore` (shared/ports.ts) follows when it sums a run's counters, written once
 * above the stores (the DynamoDB one, lambdas/adapters/dynamo-message-store.ts; the in-memory one,
 * shared/memory-message-store.ts): what a record's usage keeps, how usages add up, and the order and
 * cap of the warnings (`MessageStore.getCounters`).
 */
import { MAX_STORED_WARNINGS, type RunCounters } from './ports';
import type { AgentRole, RoleUsage } from './types';

/** The fields of a `RoleUsage`, counted ones first. */
export const USAGE_FIELDS = ['calls', 'inputTokens', 'outputTokens', 'modelMs', 'throttleWaitMs', 'cacheReadInputTokens', 'cacheWriteInputTokens'] as const;
/** One field of a `RoleUsage`. */
export type UsageField = (typeof USAGE_FIELDS)[number];
/** Optional fields of a `RoleUsage`, left out of a record when zero or absent. */
export const OPTIONAL_USAGE: readonly UsageField[] = ['modelMs', 'throttleWaitMs', 'cacheReadInputTokens', 'cacheWriteInputTokens'];

/** A usage as a record keeps it: zero optional fields left out, model time in whole milliseconds. */
export function storedUsage(usage: RoleUsage): RoleUsage {
  const out: RoleUsage = { calls: usage.calls, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  for (const field of OPTIONAL_USAGE) {
    const value = usage[field];
    if (value === undefined || value === 0) continue;
    out[field] = field === 'modelMs' || field === 'throttleWaitMs' ? Math.round(value) : value;
  }
  return out;
}

/** A zero usage (optional fields absent). */
export function zeroUsage(): RoleUsage {
  return { calls: 0, inputTokens: 0, outputTokens: 0 };
}

/** Add `more` into `total` (an optional field appears in the total once either side has it). */
export function addUsageInto(total: RoleUsage, more: RoleUsage): void {
  total.calls += more.calls;
  total.inputTokens += more.inputTokens;
  total.outputTokens += more.outputTokens;
  for (const field of OPTIONAL_USAGE) if (more[field] !== undefined) total[field] = (total[field] ?? 0) + (more[field] ?? 0);
}

/** The usage and warnings one record (a seek record or a KAR step) contributes. */
export interface CountedRecord {
  usage: RoleUsage;
  /** Its first warnings (at most MAX_STORED_WARNINGS kept). */
  warnings: readonly string[];
  /** How many warnings it had (may exceed `warnings.length`). */
  warningCount: number;
}

/** What a store keeps besides the records: the run's counters of transient errors and throttle waits, and older counters. */
export interface RunCounterTotals {
  /** Usage counted outside the records (runs recorded before steps carried their usage), per role. */
  usage?: Partial<Record<AgentRole, RoleUsage>>;
  /** Warnings recorded outside the records, in arrival order, and their exact count. */
  warnings?: readonly string[];
  warningCount?: number;
  transientErrors?: { byRole?: Partial<Record<AgentRole, number>>; byError?: Record<string, number> };
  throttleWaitMs?: number;
}

/**
 * A run's counters from its records (`MessageStore.getCounters`): the seeking agents' usage (in
 * total and by round) from the seek records, the reasoning agent's from the KAR steps, and the
 * warnings in a fixed order — the seek records' by round then chunk, then the steps' by sequence,
 * then the others in arrival order — at most MAX_STORED_WARNINGS texts, with the exact count.
 * @param seeks the run's seek records (any order).
 * @param steps the run's KAR steps (any order).
 * @param totals what the store counted outside the records.
 */
export function sumRunCounters(
  seeks: ReadonlyArray<CountedRecord & { round: number; chunkIndex: number }>,
  steps: ReadonlyArray<CountedRecord & { seq: number }>,
  totals: RunCounterTotals = {},
): RunCounters {
  const seeker = { ...zeroUsage(), ...totals.usage?.seeker };
  const reasoner = { ...zeroUsage(), ...totals.usage?.reasoner };
  const seekerByRound: Record<number, RoleUsage> = {};
  const warnings: string[] = [];
  let warningCount = totals.warningCount ?? 0;
  for (const record of [...seeks].sort((a, b) => a.round - b.round || a.chunkIndex - b.chunkIndex)) {
    addUsageInto(seeker, record.usage);
    addUsageInto((seekerByRound[record.round] ??= zeroUsage()), record.usage);
    warningCount += record.warningCount;
    warnings.push(...record.warnings);
  }
  for (const step of [...steps].sort((a, b) => a.seq - b.seq)) {
    addUsageInto(reasoner, step.usage);
    warningCount += step.warningCount;
    warnings.push(...step.warnings);
  }
  warnings.push(...(totals.warnings ?? []));
  return {
    usage: { seeker, reasoner },
    seekerByRound,
    warnings: warnings.slice(0, MAX_STORED_WARNINGS),
    warningCount,
    transientErrors: {
      byRole: { seeker: totals.transientErrors?.byRole?.seeker ?? 0, reasoner: totals.transientErrors?.byRole?.reasoner ?? 0 },
      byError: { ...totals.transientErrors?.byError },
    },
    throttleWaitMs: totals.throttleWaitMs ?? 0,
  };
}
