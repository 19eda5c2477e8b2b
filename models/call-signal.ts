/**
 * The abort signal of the run a model call belongs to, carried to the providers without threading it
 * through the agents' ports: the local engine runs each task of an execution inside
 * `withCallSignal(signal, …)` (local/engine/engine.ts), and every provider adapter passes
 * `callSignal()` to its call (fetch's `signal`, the AWS SDK's `abortSignal`, node-llama-cpp's
 * `signal`), so aborting a run (Ctrl-C, the library's `ask({signal})`, `serve`'s cancel) stops the
 * model calls in flight instead of waiting for them. Node's `AsyncLocalStorage` is the library for
 * this (the context follows the promises started inside `run`); a Lambda has no such signal (its
 * timeout ends it), so there `callSignal()` is undefined.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { RunAbortedError } from '../shared/errors';

/** What a model call may learn of its run: the abort signal, and whom to tell of a throttling wait. */
interface CallContext {
  signal?: AbortSignal;
  /** Told when an adapter starts waiting for a throttling server (ms to wait, and why), before it waits. */
  onThrottleWait?: (waitMs: number, why: string) => void;
}

const storage = new AsyncLocalStorage<CallContext>();

/**
 * Run `fn` with `signal` as the call signal of every model call it makes (also in the promises it
 * starts), keeping the rest of the current context. Without a signal, `fn` runs as it is.
 */
export function withCallSignal<T>(signal: AbortSignal | undefined, fn: () => T): T {
  return signal === undefined ? fn() : storage.run({ ...storage.getStore(), signal }, fn);
}

/**
 * Run `fn` so that a model call it makes that waits for a throttling server says so first, through
 * `onThrottleWait` (the local engine's progress: "waiting 30 s, until …"), keeping the call signal.
 */
export function withThrottleNotices<T>(onThrottleWait: (waitMs: number, why: string) => void, fn: () => T): T {
  return storage.run({ ...storage.getStore(), onThrottleWait }, fn);
}

/** The abort signal of the current run's model calls, or undefined outside one. */
export function callSignal(): AbortSignal | undefined {
  return storage.getStore()?.signal;
}

/**
 * An adapter about to wait `waitMs` for a throttling server (HTTP 429, its Retry-After) says so: to
 * the run's progress when the call runs inside `withThrottleNotices`, else to nobody. Never throws.
 */
export function sayThrottleWait(waitMs: number, why: string): void {
  try {
    storage.getStore()?.onThrottleWait?.(waitMs, why);
  } catch {
    // Progress never fails a call.
  }
}

/**
 * The error of a model call stopped because its run was aborted (when the call signal is aborted),
 * or undefined (the failure is the provider's own).
 * @param where the provider and model, for the message.
 */
export function abortedCallError(where: string, error: unknown): RunAbortedError | undefined {
  const signal = callSignal();
  if (signal?.aborted !== true) return undefined;
  return new RunAbortedError(`${where}: call stopped: the run was aborted${reasonText(signal.reason)}`, { cause: error, reason: signal.reason });
}

/** ` (reason)` for a reason worth showing. */
export function reasonText(reason: unknown): string {
  if (reason === undefined) return '';
  if (reason instanceof Error) return reason.name === 'AbortError' && /operation was aborted/i.test(reason.message) ? '' : ` (${reason.message})`;
  return ` (${String(reason)})`;
}
