/**
 * Defaults and limits of the local commands, in a module without dependencies: the commands' `--help`
 * texts need them, and `--help` must not load the local stack, the model runtime or the HTTP server.
 */

/**
 * Most parallel sequences the CLI gives a `llama:` model's context (each holds a full context's KV
 * cache). 2: on this project's 2-core machine, `bench/llama-speed.ts` measured an `ask` over 34k
 * tokens (11 chunks) at 160 s with 1 sequence, 133 s with 2 and 147 s with 4.
 */
export const MAX_LLAMA_SEQUENCES = 2;

/** Default port of `extagents serve`. */
export const DEFAULT_PORT = 8787;

/** Default number of runs `extagents serve` executes at once. */
export const DEFAULT_MAX_CONCURRENT_RUNS = 2;
