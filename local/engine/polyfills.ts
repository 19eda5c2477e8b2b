/**
 * Polyfills the local engine needs on Node 20. Import this module before anything that loads
 * `aws-local-stepfunctions` (local/engine/engine.ts does so on its first line).
 *
 * `aws-local-stepfunctions` 3.0.0 declares `engines.node >= 22` and calls `Promise.withResolvers`
 * (ES2024, Node >= 22) in every Task state to race the task against its timeout. Node 20 lacks it,
 * so every Task would fail with "Promise.withResolvers is not a function".
 *
 * Source: TC39 proposal-promise-with-resolvers (ES2024), the specified behaviour is exactly
 * "create a promise and hand out its resolve and reject functions"; written by hand because it is
 * five lines and a polyfill package (core-js) would pull in far more than this one function.
 */

/** The shape `Promise.withResolvers<T>()` returns (ES2024). */
export interface PromiseWithResolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

type WithResolvers = <T>() => PromiseWithResolvers<T>;

/** Same semantics as ES2024 `Promise.withResolvers`. */
export function promiseWithResolvers<T>(): PromiseWithResolvers<T> {
  let resolve!: (value: T | PromiseLike<T>) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Installs `Promise.withResolvers` when the runtime lacks it (Node 20); a no-op on Node >= 22.
 * Idempotent. Runs when this module is first imported.
 * @returns true when the polyfill was installed by this call.
 */
export function installPolyfills(): boolean {
  const promiseConstructor = Promise as unknown as { withResolvers?: WithResolvers };
  if (typeof promiseConstructor.withResolvers === 'function') return false;
  Object.defineProperty(Promise, 'withResolvers', {
    value: promiseWithResolvers,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  return true;
}

installPolyfills();
