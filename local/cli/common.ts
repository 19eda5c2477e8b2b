/**
 * What every `extagents` command shares (local/cli/commands.ts lists them; local/cli/cli.ts is the
 * entry): the usage error, the `--model` and `--structured` options, the model-file and
 * state-directory checks. Commands import this module, never the entry, so the CLI has no import
 * circle.
 */
import { Option } from 'commander';
import { accessSync, constants as fsConstants, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ExtAgentsError, InvalidInputError } from '../../shared/errors';
import { listed, SPEC_SYNTAX, toModelSpec } from '../../models/spec';
import type { ModelSpec, ModelSpecInput } from '../../shared/model-spec';
import { checkModelSettings, loadModels } from '../../models';
import type { LoadedModel, LoadedModels } from '../../models/port';
import { STRUCTURED_MODES } from '../../models/openai/options';
import { installCommand, isOptionalPackage } from '../../shared/optional-packages';

/** A command-line usage error (exit status 2): bad option values, question, run id or state dir. */
export class UsageError extends ExtAgentsError {}

/**
 * An error as the CLI writes it with `--json`: one line on stderr,
 * `{"error":{"name":"UsageError","message":"…","exitStatus":2}}` (stdout keeps only results).
 */
export function errorJson(name: string, message: string, exitStatus: number): string {
  return `${JSON.stringify({ error: { name, message, exitStatus } })}\n`;
}

/** Exit status of a command interrupted by SIGINT (Ctrl-C; 128 + 2) and by SIGTERM (128 + 15). */
export const INTERRUPTED_EXIT_STATUS = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Handle Ctrl-C (SIGINT) and SIGTERM during a long command: one line on stderr,
 * `extagents: interrupted; <how to resume>` (with `--json`, one JSON error line, name
 * `Interrupted`), then exit at once with 130 (SIGINT) or 143 (SIGTERM). The process stops as a kill
 * would stop it: whatever was recorded is kept, and the command's resume picks it up.
 * @param json whether the command runs with `--json`.
 * @param resumeHint how to resume, asked at the signal (e.g. `rerun with --run-id <id> to resume`),
 *   or undefined when there is nothing to resume yet.
 * @returns a function that removes the handlers (call it when the command ends).
 */
export function handleInterrupts(json: boolean, resumeHint: () => string | undefined): () => void {
  const handler = (signal: NodeJS.Signals): void => {
    const exitStatus = signal === 'SIGTERM' ? INTERRUPTED_EXIT_STATUS.SIGTERM : INTERRUPTED_EXIT_STATUS.SIGINT;
    const hint = resumeHint();
    const message = `interrupted${hint === undefined ? '' : `; ${hint}`}`;
    // A new line first: a progress bar may hold the current one.
    process.stderr.write(json ? errorJson('Interrupted', message, exitStatus) : `\nextagents: ${message}\n`);
    process.exit(exitStatus);
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

/** `--help` text of every command's `-c, --corpus <paths...>` (the rule: local/engine/corpus.ts `resolveCorpus`). */
export const CORPUS_OPTION_HELP =
  'each a bundled corpus ("sotu": 233 State of the Union addresses), a file, a directory (every file below), the id of a corpus in --state-dir (what "ingest --id <id>" made), or a glob pattern, tried in that order';

/** `--help` text of every command's `-m, --model <spec>` (parsed by models/spec.ts). */
export const MODEL_OPTION_HELP = `model: ${listed(
  Object.values(SPEC_SYNTAX).map(
    (s) =>
      `"${s.syntax}" (${s.help}${s.optionalPackages ? `; needs ${s.optionalPackages.join(', ')}, an optional peer of the extagents package: ${installCommand(s.optionalPackages.filter(isOptionalPackage))}` : ''})`,
  ),
)}`;

/** `--help` text of every command's `--structured <mode>` (the OpenAI-compatible adapter's structured-output mode). */
export const STRUCTURED_OPTION_HELP =
  'structured replies of an openai: model (default: OPENAI_STRUCTURED, else "auto"): "auto" (the best the server accepts: response_format json_schema, else json_object, else prose), "schema", "json" or "off"; llama: models always use a grammar and Bedrock a forced tool where the model supports one, so it does not apply to them';

/** The `--structured <mode>` option, added to every command that takes `--model`. */
export function structuredOption(): Option {
  return new Option('--structured <mode>', STRUCTURED_OPTION_HELP).choices(STRUCTURED_MODES);
}

/** Apply `--structured` (when given) for the OpenAI-compatible adapter, which reads OPENAI_STRUCTURED at load. */
export function applyStructured(mode: string | undefined): void {
  if (mode !== undefined) process.env.OPENAI_STRUCTURED = mode;
}

/**
 * Parse the `--model` flag: the one parse of the spec along a command (the parsed value is passed on).
 * @throws UsageError `--model: <why>`.
 */
export function parseModelFlag(text: string): ModelSpec {
  try {
    return toModelSpec(text);
  } catch (error) {
    throw new UsageError(`--model: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Check a model's configuration before any work or state, one clear line and exit status 2 for a
 * problem: the provider's `checkSettings` (models/index.ts: a `llama:` spec's model files, missing,
 * not GGUF, larger than memory; an `openai:` spec's server, OPENAI_BASE_URL (default OpenAI's API,
 * which then needs OPENAI_API_KEY) and OPENAI_STRUCTURED, resolved as the adapter resolves them, no
 * request sent; nothing for the others); with `load`, also its `load` (a `llama:` model is read once
 * per process: the local stack then reuses it), so a damaged file fails here too.
 * @param load the sequences the command's stack will ask for (the same load options hit the cache).
 * @param options `estimate`: the command only estimates (`ask --estimate`), which sends no request,
 *   so a service's settings (an `openai:` key) are not checked; a `llama:` model still loads (its
 *   context sets the defaults the estimate prices).
 * @returns with `load`, the loaded models (their builders, context size in tokens and measured run
 *   defaults: models/index.ts `loadModels`); without, `{}`.
 * @throws UsageError naming the file or setting and the problem.
 */
export async function checkLocalModelFiles(spec: ModelSpecInput, load: { sequences: number }, options?: { estimate?: boolean }): Promise<LoadedModels>;
export async function checkLocalModelFiles(spec: ModelSpecInput, load?: { sequences: number }, options?: { estimate?: boolean }): Promise<LoadedModel>;
export async function checkLocalModelFiles(spec: ModelSpecInput, load?: { sequences: number }, options: { estimate?: boolean } = {}): Promise<LoadedModel> {
  let parsed;
  try {
    parsed = toModelSpec(spec);
  } catch (error) {
    throw new UsageError(`--model: ${(error as Error).message}`, { cause: error });
  }
  try {
    if (!options.estimate) await checkModelSettings(parsed);
    return load ? await loadModels(parsed, { sequences: load.sequences }) : {};
  } catch (error) {
    throw new UsageError(`--model: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Make a directory and its missing parents, one level at a time. Not `mkdirSync(dir, { recursive:
 * true })`: on Node 20 that never returns for a path under a pseudo file system that refuses new
 * entries (`/proc/x`: mkdir gives ENOENT although the parent exists, and Node retries forever).
 * @throws the first failing mkdir's error (ENOENT, EACCES, EROFS, ENOTDIR, …); EEXIST is not one.
 */
export function makeDirectories(dir: string): void {
  const absolute = path.resolve(dir);
  const missing: string[] = [];
  for (let current = absolute; !existsSync(current); current = path.dirname(current)) {
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const folder of missing) {
    try {
      mkdirSync(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/**
 * Resolve a command's `-c, --corpus` arguments by the one rule of every command
 * (local/engine/corpus.ts `resolveCorpus`): a bundled corpus, a file or directory, a corpus id of
 * `--state-dir` (`ingest --id mill` makes `mill`), a glob pattern.
 * @param skipped receives what the arguments named but cannot be read as files (FIFOs, sockets,
 *   symbolic link loops), with reasons; without it such an argument named directly is a usage error.
 * @throws UsageError `--corpus: <what was tried>` when an argument matches nothing.
 */
export async function resolveCorpusFlag(
  args: string[],
  stateDir: string,
  skipped?: import('../../shared/types').SkippedDocument[],
): Promise<import('../engine/corpus').CorpusFile[]> {
  const { resolveCorpus } = require('../engine/corpus') as typeof import('../engine/corpus');
  return resolveCorpus(args, process.cwd(), { stateDir, skipped }).catch((error: unknown) => {
    throw error instanceof InvalidInputError ? new UsageError(`--corpus: ${error.message}`, { cause: error }) : error;
  });
}

/** Make `--state-dir` if needed. @throws UsageError unless `dir` is (or can be made) a writable directory. */
export function writableStateDir(dir: string): void {
  try {
    makeDirectories(dir);
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR' });
    accessSync(dir, fsConstants.W_OK);
  } catch (error) {
    throw new UsageError(`--state-dir ${dir} is not a writable directory (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
  }
}
