/**
 * Defaults and limits of the local commands, in a module without dependencies: the commands' `--help`
 * texts need them, and `--help` must not load the local stack, the model runtime or the HTTP server.
 */

/**
 * Most parallel sequences the CLI gives an in-process model's context (`LoadOptions.sequences`;
 * a `llama:` model: each holds a full context's KV cache). 2: on this project's 2-core machine, `bench/llama-speed.ts` measured an `ask` over 34k
 * tokens (11 chunks) at 160 s with 1 sequence, 133 s with 2 and 147 s with 4.
 */
export const MAX_MODEL_SEQUENCES = 2;

/** Default port of `extagents serve`. */
export const DEFAULT_PORT = 8787;

/** Default number of runs `extagents serve` executes at once. */
export const DEFAULT_MAX_CONCURRENT_RUNS = 2;

/**
 * Runs (questions) at once, for every local command whose parallelism counts runs rather than
 * seeking agents: `job --concurrency` (questions of a job), `eval --concurrency` (examples; each
 * runs its strategies one after another), `serve --max-concurrent-runs`. Seeking agents at once is
 * another meaning, with its own range: the run option `concurrency` (shared/config.ts), taken by
 * `ask --concurrency` and `survey --concurrency`.
 */
export const RUNS_AT_ONCE = { min: 1, max: 64 } as const;
