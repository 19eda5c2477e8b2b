/**
 * A `MessageStore` (shared/ports.ts) in this process's memory: the port's second implementation
 * beside the DynamoDB one (lambdas/adapters/dynamo-message-store.ts), run through the same
 * conformance suite (test/support/message-store-conformance.ts), so that the port's contract is
 * the method's, not DynamoDB's. The pool order is `compareMessages` (shared/pool.ts), the page
 * cursor the message's `relevanceSortKey` (as the GSI's), the counters the rules of
 * shared/run-counters.ts. Used by tests (no host runs on it: the local stack keeps DynamoDB's
 * semantics through dynalite); nothing is persisted, so a killed process would lose its runs.
 *
 * Written by hand: the port is the project's own; a store is a few maps.
 */
import { InvalidInputError } from './errors';
import { compareMessages, relevanceSortKey } from './pool';
import {
  MAX_FAILURE_MESSAGE_CHARS,
  MAX_STORED_WARNINGS,
  type MessagePage,
  type MessageStore,
  type RunCounters,
  type SeekFailure,
  type SeekRecord,
  type StoredStep,
} from './ports';
import { storedUsage, sumRunCounters, zeroUsage, type CountedRecord } from './run-counters';
import type { AgentRole, Message, RoleUsage } from './types';

/** One seek record as kept. */
interface KeptSeek extends CountedRecord {
  round: number;
  chunkIndex: number;
  message?: Message;
  covered?: number;
}

/** One run's records. */
interface KeptRun {
  /** Seek records by `<round>#<chunk>`. */
  seeks: Map<string, KeptSeek>;
  /** Last failure by `<round>#<chunk>`. */
  failures: Map<string, SeekFailure>;
  /** KAR steps by sequence number. */
  steps: Map<number, CountedRecord & { step: StoredStep }>;
  transientByRole: Record<AgentRole, number>;
  transientByError: Record<string, number>;
  throttleWaitMs: number;
}

const at = (round: number, chunkIndex: number): string => `${round}#${chunkIndex}`;
/** A fresh copy (kept records never alias what a caller holds). */
const copy = <T>(value: T): T => structuredClone(value);

/** `MessageStore` in memory (see the file comment). */
export class InMemoryMessageStore implements MessageStore {
  private readonly runs = new Map<string, KeptRun>();

  private run(runId: string): KeptRun {
    let run = this.runs.get(runId);
    if (run === undefined) {
      run = { seeks: new Map(), failures: new Map(), steps: new Map(), transientByRole: { seeker: 0, reasoner: 0 }, transientByError: {}, throttleWaitMs: 0 };
      this.runs.set(runId, run);
    }
    return run;
  }

  /** @throws InvalidInputError when the message is of another round or chunk. */
  async recordSeek(runId: string, record: SeekRecord): Promise<'recorded' | 'already-recorded'> {
    const { round, chunkIndex, message } = record;
    if (message && (message.round !== round || message.chunkIndex !== chunkIndex)) {
      throw new InvalidInputError(`Message ${message.id} does not belong to round ${round}, chunk ${chunkIndex}`);
    }
    const seeks = this.run(runId).seeks;
    if (seeks.has(at(round, chunkIndex))) return 'already-recorded';
    seeks.set(at(round, chunkIndex), {
      round,
      chunkIndex,
      ...(message && { message: copy(message) }),
      ...(message && record.covered !== undefined && { covered: record.covered }),
      usage: storedUsage(record.usage),
      warnings: record.warnings.slice(0, MAX_STORED_WARNINGS),
      warningCount: record.warnings.length,
    });
    return 'recorded';
  }

  async seekState(runId: string, round: number, chunkIndex: number): Promise<{ sought: boolean; lastFailure?: SeekFailure }> {
    const failure = await this.lastSeekFailure(runId, round, chunkIndex);
    return { sought: this.runs.get(runId)?.seeks.has(at(round, chunkIndex)) ?? false, ...(failure !== undefined && { lastFailure: failure }) };
  }

  async soughtChunks(runId: string, round: number): Promise<number[]> {
    return this.chunks(runId, round, () => true);
  }

  async messageChunks(runId: string, round: number): Promise<number[]> {
    return this.chunks(runId, round, (seek) => seek.message !== undefined);
  }

  private chunks(runId: string, round: number, keep: (seek: KeptSeek) => boolean): number[] {
    const seeks = [...(this.runs.get(runId)?.seeks.values() ?? [])];
    return seeks
      .filter((seek) => seek.round === round && keep(seek))
      .map((seek) => seek.chunkIndex)
      .sort((a, b) => a - b);
  }

  /** The pool of rounds 1..maxRound (and coverage <= maxCovered), in pool order. */
  private pool(runId: string, maxRound: number, maxCovered?: number): KeptSeek[] {
    const seeks = [...(this.runs.get(runId)?.seeks.values() ?? [])];
    return seeks
      .filter(
        (seek) =>
          seek.message !== undefined && seek.round <= maxRound && (maxCovered === undefined || seek.covered === undefined || seek.covered <= maxCovered),
      )
      .sort((a, b) => compareMessages(a.message as Message, b.message as Message));
  }

  async topK(runId: string, k: number, maxRound: number, maxCovered?: number): Promise<Message[]> {
    if (k <= 0) return [];
    return this.pool(runId, maxRound, maxCovered)
      .slice(0, k)
      .map((seek) => copy(seek.message as Message));
  }

  async poolSize(runId: string, maxRound: number, maxCovered?: number): Promise<number> {
    return maxRound < 1 ? 0 : this.pool(runId, maxRound, maxCovered).length;
  }

  async getMessages(runId: string, ids: string[]): Promise<Message[]> {
    const byId = new Map(this.pool(runId, Number.POSITIVE_INFINITY).map((seek) => [(seek.message as Message).id, seek.message as Message]));
    return [...new Set(ids)].flatMap((id) => (byId.has(id) ? [copy(byId.get(id) as Message)] : []));
  }

  async getCounters(runId: string): Promise<RunCounters> {
    const run = this.runs.get(runId);
    if (run === undefined) return sumRunCounters([], []);
    return sumRunCounters(
      [...run.seeks.values()],
      [...run.steps.entries()].map(([seq, step]) => ({ ...step, seq })),
      {
        transientErrors: { byRole: run.transientByRole, byError: run.transientByError },
        throttleWaitMs: run.throttleWaitMs,
      },
    );
  }

  async countTransientError(runId: string, role: AgentRole, errorName: string): Promise<void> {
    const run = this.run(runId);
    run.transientByRole[role] += 1;
    run.transientByError[errorName] = (run.transientByError[errorName] ?? 0) + 1;
  }

  async recordSeekFailure(runId: string, round: number, chunkIndex: number, failure: { error: string; message: string; at?: number }): Promise<void> {
    const points = Array.from(failure.message);
    const message = points.length <= MAX_FAILURE_MESSAGE_CHARS ? failure.message : `${points.slice(0, MAX_FAILURE_MESSAGE_CHARS - 1).join('')}…`;
    this.run(runId).failures.set(at(round, chunkIndex), {
      chunk: chunkIndex,
      error: failure.error,
      message,
      ...(failure.at !== undefined && { at: failure.at }),
    });
  }

  async lastSeekFailure(runId: string, round: number, chunkIndex: number): Promise<SeekFailure | undefined> {
    const failure = this.runs.get(runId)?.failures.get(at(round, chunkIndex));
    return failure === undefined ? undefined : copy(failure);
  }

  async addThrottleWait(runId: string, ms: number): Promise<void> {
    this.run(runId).throttleWaitMs += Math.max(0, Math.round(ms));
  }

  async seekFailures(runId: string, round: number): Promise<SeekFailure[]> {
    const failures = [...(this.runs.get(runId)?.failures.entries() ?? [])];
    return failures
      .filter(([key]) => Number(key.split('#')[0]) === round)
      .map(([, failure]) => ({ chunk: failure.chunk, error: failure.error, message: failure.message }))
      .sort((a, b) => a.chunk - b.chunk);
  }

  async putStep(runId: string, step: StoredStep, made?: { usage: RoleUsage; warnings: string[] }): Promise<void> {
    const warnings = made?.warnings ?? [];
    this.run(runId).steps.set(step.seq, {
      step: copy(step),
      usage: made === undefined ? zeroUsage() : storedUsage(made.usage),
      warnings: warnings.slice(0, MAX_STORED_WARNINGS),
      warningCount: warnings.length,
    });
  }

  async getSteps(runId: string): Promise<StoredStep[]> {
    const steps = [...(this.runs.get(runId)?.steps.values() ?? [])];
    return steps.map((kept) => copy(kept.step)).sort((a, b) => a.seq - b.seq);
  }

  /** @throws InvalidInputError when `after` is not a cursor this method returned. */
  async listMessages(runId: string, page: { round?: number; limit: number; after?: string }): Promise<MessagePage> {
    if (page.after !== undefined && !/^\d{3}#\d{7}#\d{2}$/.test(page.after)) {
      throw new InvalidInputError(`Invalid message cursor ${JSON.stringify(page.after)}`);
    }
    const keyOf = (m: Message): string => relevanceSortKey(m.score, m.chunkIndex, m.round);
    const after = page.after;
    const matching = this.pool(runId, Number.POSITIVE_INFINITY)
      .map((seek) => seek.message as Message)
      .filter((m) => (page.round === undefined || m.round === page.round) && (after === undefined || keyOf(m) < after));
    const taken = matching.slice(0, page.limit);
    return {
      messages: taken.map(copy),
      ...(matching.length > page.limit && { next: keyOf(taken[taken.length - 1]) }),
    };
  }
}
