/**
 * Adaptive concurrency towards one model server: additive increase, multiplicative decrease (AIMD,
 * the rule of TCP's congestion control and of the AWS SDK's `adaptive` retry mode's client-side rate
 * limiter). Calls pass through `acquire`/`release`; a throttled reply (HTTP 429) halves how many may
 * be in flight at once, each answered call raises it by one, so a server that throttles above some
 * rate is driven at about that rate instead of being hammered by every seeking agent at once.
 *
 * Written here because the one library that has it, the AWS SDK's rate limiter, is an internal part
 * of its retry middleware (no public export), and p-limit's concurrency is fixed at creation.
 * One gate per server (`gateFor`), shared by every call of the process.
 */

/** Most calls a gate lets through at once once it has been lowered (it starts unbounded). */
export const MAX_GATE_LIMIT = 1024;

/** An AIMD gate (see the file comment). */
export class AdaptiveGate {
  private inFlight = 0;
  /** Calls allowed at once: unbounded until the first throttle. */
  private allowed = Number.POSITIVE_INFINITY;
  private readonly waiting: Array<() => void> = [];

  /** Calls allowed at once now (Infinity until the first throttle). */
  get limit(): number {
    return this.allowed;
  }

  /**
   * Wait for a slot. Resolves at once while fewer than `limit` calls are in flight.
   * @returns false when `signal` aborted the wait (no slot taken), true with a slot.
   */
  async acquire(signal?: AbortSignal): Promise<boolean> {
    while (this.inFlight >= this.allowed) {
      if (signal?.aborted) return false;
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    if (signal?.aborted) return false;
    this.inFlight++;
    return true;
  }

  /** Give a slot back (after every call `acquire` let through). */
  release(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.wake();
  }

  /** A throttled reply: half the calls then in flight (at least one) may be in flight from now on. */
  throttled(): void {
    this.allowed = Math.max(1, Math.floor(Math.min(this.allowed, this.inFlight + 1) / 2));
  }

  /** An answered call: one more call may be in flight (once the gate was lowered; at most MAX_GATE_LIMIT). */
  succeeded(): void {
    if (this.allowed === Number.POSITIVE_INFINITY) return;
    this.allowed = Math.min(MAX_GATE_LIMIT, this.allowed + 1);
    this.wake();
  }

  private wake(): void {
    for (let free = this.allowed - this.inFlight; free > 0 && this.waiting.length > 0; free--) this.waiting.shift()?.();
  }
}

const gates = new Map<string, AdaptiveGate>();

/** The process's gate of one server (by its base URL). */
export function gateFor(server: string): AdaptiveGate {
  let gate = gates.get(server);
  if (!gate) gates.set(server, (gate = new AdaptiveGate()));
  return gate;
}

/** Forget every gate (tests). */
export function resetGates(): void {
  gates.clear();
}
