/**
 * A fault-injecting `AgentModel` for tests: wraps another model and makes some of its calls fail the
 * way Bedrock calls fail once mapped by models/bedrock/bedrock.ts.
 *
 * - Throttling: a share `throttleRate` (0-1) of calls throws ModelThrottledError. Which calls is
 *   decided by a seeded hash of (role, round, chunk or reasoning step, attempt number of that call),
 *   not by call order, so concurrent runs of the same workflow inject the same faults.
 * - Permanent failures: every seek of a chunk listed in `failingChunks` throws `permanentError`
 *   (default: ModelError, which the workflow never retries).
 * - Context overflow: `overflowChunks` throw ContextOverflowError on every seek of those chunks;
 *   `overflowReasoning` on every reasoning call.
 * Counters (`injected`, `passed`) say exactly what was injected and what reached the inner model.
 */
import { ContextOverflowError, ModelError, ModelThrottledError } from '../../shared/errors';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../../shared/ports';
import type { AgentRole } from '../../shared/types';

/** What to inject. */
export interface FaultPlan {
  /** Share of calls (0-1) that throw ModelThrottledError. Default 0. */
  throttleRate?: number;
  /** Seed of the throttling decisions. Default 1. */
  seed?: number;
  /** Roles whose calls may be throttled. Default both. */
  throttledRoles?: AgentRole[];
  /** Chunk indexes whose every seek fails permanently. */
  failingChunks?: number[];
  /** The error of a failing chunk. Default: a ModelError naming the chunk. */
  permanentError?: (chunk: number) => Error;
  /** Chunk indexes whose every seek throws ContextOverflowError. */
  overflowChunks?: number[];
  /** Every reasoning call throws ContextOverflowError. */
  overflowReasoning?: boolean;
}

/** 32-bit FNV-1a hash of a string, then mixed with the seed (deterministic, uniform enough for tests). */
function hashToUnit(seed: number, key: string): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return (h >>> 0) / 4294967296;
}

/** A ContextOverflowError as the Bedrock adapter throws it: the SDK's ValidationException as its cause. */
function overflowError(message: string): ContextOverflowError {
  const validation = Object.assign(new Error('Input is too long for requested model.'), { name: 'ValidationException' });
  return new ContextOverflowError(message, { cause: validation });
}

/** An AgentModel that injects faults in front of another one (see the file comment). */
export class FaultInjectingModel implements AgentModel {
  readonly description: string;
  /** Faults thrown so far. */
  readonly injected = { throttled: { seeker: 0, reasoner: 0 }, permanent: 0, overflow: 0 };
  /** Calls that reached the inner model, per role. */
  readonly passed = { seeker: 0, reasoner: 0 };
  /** Chunk indexes whose seek reached the inner model (once per success). */
  readonly soughtChunks: number[] = [];
  private readonly attempts = new Map<string, number>();

  constructor(
    private readonly inner: AgentModel,
    private readonly plan: FaultPlan,
  ) {
    this.description = `fault-injecting wrapper of ${inner.description}`;
  }

  async seek(request: SeekRequest): Promise<SeekResult> {
    const chunk = request.chunk.index;
    if (this.plan.failingChunks?.includes(chunk)) {
      this.injected.permanent += 1;
      throw this.plan.permanentError?.(chunk) ?? new ModelError(`injected permanent failure of chunk ${chunk}`);
    }
    if (this.plan.overflowChunks?.includes(chunk)) {
      this.injected.overflow += 1;
      throw overflowError(`injected context overflow of chunk ${chunk}`);
    }
    this.maybeThrottle('seeker', `seek:${request.round}:${chunk}`);
    this.passed.seeker += 1;
    const result = await this.inner.seek(request);
    this.soughtChunks.push(chunk);
    return result;
  }

  async reason(request: ReasonRequest): Promise<ReasonResult> {
    if (this.plan.overflowReasoning) {
      this.injected.overflow += 1;
      throw overflowError(`injected context overflow of a reasoning step (${request.messages.length} messages)`);
    }
    this.maybeThrottle('reasoner', `reason:${request.force}:${request.messages.map((m) => m.id).join(',')}`);
    this.passed.reasoner += 1;
    return this.inner.reason(request);
  }

  /** Throw ModelThrottledError for the planned share of calls; `key` names the call, its attempt is counted here. */
  private maybeThrottle(role: AgentRole, key: string): void {
    const rate = this.plan.throttleRate ?? 0;
    if (rate <= 0 || !(this.plan.throttledRoles ?? ['seeker', 'reasoner']).includes(role)) return;
    const attempt = this.attempts.get(key) ?? 0;
    this.attempts.set(key, attempt + 1);
    if (hashToUnit(this.plan.seed ?? 1, `${key}#${attempt}`) < rate) {
      this.injected.throttled[role] += 1;
      throw new ModelThrottledError(`injected throttling (${key}, attempt ${attempt + 1})`);
    }
  }
}
