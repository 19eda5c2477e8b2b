/**
 * Clean-ups of resources that a command opens only when it needs them (in-process llama.cpp models:
 * their native threads would keep the process alive), run once by the CLI before it exits.
 *
 * A registry rather than a look into `require.cache`: the prebuilt CLI (dist/cli, scripts/build-cli.cjs)
 * bundles its modules, which `require.cache` does not list, and the registry works the same from the
 * TypeScript sources.
 */
const disposers = new Set<() => Promise<void>>();

/** Register a clean-up (the same function twice is kept once). */
export function onDispose(dispose: () => Promise<void>): void {
  disposers.add(dispose);
}

/** Run and forget every registered clean-up, in registration order; an error of one does not stop the others (the first is rethrown after all ran). */
export async function disposeAll(): Promise<void> {
  const pending = [...disposers];
  disposers.clear();
  let first: unknown;
  for (const dispose of pending) {
    try {
      await dispose();
    } catch (error) {
      first ??= error;
    }
  }
  if (first !== undefined) throw first;
}
