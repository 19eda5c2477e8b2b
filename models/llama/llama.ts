/**
 * `llama:` models: a GGUF model run in-process on the CPU with node-llama-cpp (pinned 3.21.1), as a
 * `ChatModel` (shared/ports.ts). Local commands only (ask, serve, job, survey, eval): node-llama-cpp
 * is never imported by a Lambda bundle (it is loaded here with a dynamic `import()`, and nothing
 * under lambdas/ or infra/ imports this file).
 *
 * - One load per process and file: the process's `LlamaRuntime` caches the loaded model by real path
 *   (a file replaced or rewritten since is said once in a call's warnings, the loaded model still
 *   answering), so the
 *   seeking agents and the reasoning agent share one copy (and one context) when they name the same
 *   file. `getLlama({ gpu: false, build: 'never' })`: the prebuilt CPU binary, nothing compiled or
 *   downloaded at run time.
 * - Every call renders the model's own chat template (node-llama-cpp's `LlamaChat` with the "auto"
 *   chat wrapper, which reads the template from the GGUF metadata); a model without one gets
 *   node-llama-cpp's generic format and one warning.
 * - A request with a reply schema (shared/llm/schemas.ts) is decoded with a JSON-schema grammar
 *   (`createGrammarForJsonSchema` of `toGrammarSchema(schema)`), so the reply is valid JSON by
 *   construction and every string stops at its `maxLength`.
 * - Parallel calls use the context's sequences (`sequences`, default 1): node-llama-cpp evaluates the
 *   sequences of one context in the same batch. Calls beyond that wait for a free sequence.
 * - A prompt that does not fit (prompt tokens + the call's `maxTokens` > the context size) fails
 *   before any generation with ContextOverflowError naming both numbers; nothing is truncated.
 * - Usage: `inputTokens` = the prompt's tokens in the model's own tokenizer (the rendered chat
 *   template), `outputTokens` = tokens generated (the sequence's token meter), `cacheReadInputTokens`
 *   = the prompt's tokens the sequence did not evaluate again: node-llama-cpp keeps each sequence's
 *   evaluated tokens and evaluates only where a new prompt differs from them, so consecutive calls
 *   that share a start (the system prompt; a KAR step after the one before it) pay only the rest.
 *
 * Why node-llama-cpp: it is the maintained Node binding of llama.cpp with prebuilt CPU binaries on
 * npm and grammar-constrained JSON output; nothing else on npm runs GGUF models in-process.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, open, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigurationError, ContextOverflowError, ModelConfigurationError, ModelError } from '../../shared/errors';
import { isMissingModule, missingPackageError } from '../../shared/optional-packages';
import type { ChatModel, ChatRequest, ChatResponse, StopReason } from '../../shared/ports';
import type { ModelRunDefaults, SpecOf } from '../port';
import { MIN_LLAMA_CONTEXT_TOKENS } from './traits';
import { llamaProfileFor, type LlamaProfile } from './profiles';
import { LlmAgents } from '../../shared/llm/agents';
import type { ReplySchema } from '../../shared/llm/schemas';
import { toGrammarSchema } from './grammar';
import { LlmSurveyModel } from '../../shared/survey/llm';
import type { SurveyModel } from '../../shared/survey/ports';
import { onDispose } from '../disposers';
import { abortedCallError, callSignal } from '../call-signal';

type NodeLlamaCpp = typeof import('node-llama-cpp');
type Llama = Awaited<ReturnType<NodeLlamaCpp['getLlama']>>;
type LlamaModel = Awaited<ReturnType<Llama['loadModel']>>;
type LlamaContext = Awaited<ReturnType<LlamaModel['createContext']>>;
type LlamaGrammar = Awaited<ReturnType<Llama['createGrammarForJsonSchema']>>;
type LlamaChat = InstanceType<NodeLlamaCpp['LlamaChat']>;
type ChatHistoryItem = Parameters<LlamaChat['generateResponse']>[0][number];

/** Options of a `llama:` model. */
export interface LlamaOptions {
  /**
   * Context size per sequence, tokens of the model's tokenizer (the spec's `?ctx=`), at most the
   * model's training context; default the smaller of that and `DEFAULT_LLAMA_CONTEXT_TOKENS`. The KV
   * cache grows linearly with it (docs/MODELS.md, "Models": about 12 KiB a token for the reference model).
   */
  contextTokens?: number;
  /** Parallel sequences of the context (calls evaluated in one batch); default 1. */
  sequences?: number;
  /** CPU threads; default EXTAGENTS_LLAMA_THREADS, else node-llama-cpp's count of math cores. */
  threads?: number;
  /**
   * Disk for the evaluated states of prompt prefixes (`PromptStates`), bytes; default
   * EXTAGENTS_LLAMA_STATE_MB, else `DEFAULT_PROMPT_STATE_BYTES`; 0 keeps none.
   */
  promptStateBytes?: number;
}

/** Default disk for saved prompt-prefix states: 1 GiB (about 80 chunks of 1,000 tokens of the reference model). */
export const DEFAULT_PROMPT_STATE_BYTES = 2 ** 30;

/**
 * The bytes of EXTAGENTS_LLAMA_STATE_MB (MiB), if set: the disk the saved prompt-prefix states of a
 * process may use (0: none are kept).
 * @throws ConfigurationError when it is set to anything but an integer 0-1048576.
 */
export function llamaStateBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const mib = integerFromEnv(env, 'EXTAGENTS_LLAMA_STATE_MB', 0, 1_048_576, ' (MiB)');
  return mib === undefined ? undefined : mib * 2 ** 20;
}

/**
 * An integer environment variable, if set: decimal digits only (no 0x2, 2e0), within [min, max].
 * @throws ConfigurationError naming the variable, the range and the value otherwise.
 */
function integerFromEnv(env: NodeJS.ProcessEnv, name: string, min: number, max: number, unit = ''): number | undefined {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigurationError(`${name} must be an integer ${min}-${max}${unit} (got "${value}")`);
  return n;
}

/**
 * The evaluated states of prompt prefixes, kept on disk so a prompt that starts with a prefix read
 * before evaluates only the rest (issue 38: each chunk is read once). A request names its prefix with
 * `ChatRequest.cacheable` (the prose seeking agent's passage, the same in every round and for every
 * question over the chunk); a state is the sequence's whole state after that call
 * (`LlamaContextSequence.saveStateToFile`), and a later call with the same system prompt and prefix
 * loads it (`loadStateFromFile`), after which node-llama-cpp evaluates only from the first token that
 * differs. Files live in a directory of this process (removed by `disposeLlamaModels`), written to a
 * temporary name and renamed (a killed write leaves no half state), at most `maxBytes` in all, the
 * least recently used removed first. A state that fails to load is dropped and the prompt evaluated
 * whole (time lost, nothing else). A directory that cannot be made (an unwritable or read-only
 * temporary directory) or a state that cannot be written (a full disk) turns the cache off for the
 * process, said once in the call's warnings, and the run goes on evaluating prompts whole. The
 * directory holds its owner's pid (`owner.pid`): the first one a process makes removes the
 * directories of processes that are gone (killed before they could remove their own). Hand-written:
 * node-llama-cpp saves and loads one state; choosing which to keep is ours.
 */
export class PromptStates {
  private readonly files = new Map<string, { file: string; bytes: number }>();
  private total = 0;
  private dir: string | undefined;
  /** Why the cache was turned off (said once), or undefined while it is on. */
  private off: string | undefined;
  /** The prefix key each sequence's state starts with (undefined: unknown or none). */
  private readonly holding = new WeakMap<LlamaChat, string>();

  /**
   * @param maxBytes the most the states may take, bytes (0: none kept).
   * @param parent where the process's state folder is made. Default: the temporary directory.
   */
  constructor(
    private readonly maxBytes: number,
    private readonly parent: () => string = os.tmpdir,
  ) {}

  /** The key of a request's cacheable prefix, or undefined when it has none the adapter can use. */
  keyOf(request: ChatRequest): string | undefined {
    const split = request.cacheable;
    if (this.maxBytes <= 0 || split === undefined || request.messages.length !== 1 || request.messages[0].text !== `${split.prefix}\n${split.suffix}`)
      return undefined;
    return createHash('sha256').update(`${request.system}\u0000${split.prefix}`).digest('hex');
  }

  /** Before a call: load the prefix's state into the sequence unless it already holds it. */
  async restore(chat: LlamaChat, key: string): Promise<void> {
    const saved = this.files.get(key);
    if (saved === undefined || this.holding.get(chat) === key) return;
    this.files.delete(key);
    try {
      await chat.sequence.loadStateFromFile(saved.file, { acceptRisk: true });
      this.files.set(key, saved); // most recently used last
    } catch {
      this.total -= saved.bytes;
      await rm(saved.file, { force: true });
      await chat.sequence.clearHistory();
    }
  }

  /**
   * After a call: the sequence now starts with `key`'s prefix (or nothing known); save it once.
   * @returns a warning when the cache has just been turned off (its directory cannot be made, or the
   *   disk is full), once per process; undefined otherwise. Never throws.
   */
  async keep(chat: Pick<LlamaChat, 'sequence'>, key: string | undefined): Promise<string | undefined> {
    if (key === undefined) {
      this.holding.delete(chat as LlamaChat);
      return undefined;
    }
    this.holding.set(chat as LlamaChat, key);
    if (this.files.has(key) || this.off !== undefined) return undefined;
    if (this.dir === undefined) {
      const parent = this.parent();
      try {
        await removeGoneOwners(parent);
        this.dir = await mkdtemp(path.join(parent, STATE_DIR_PREFIX));
        await writeFile(path.join(this.dir, 'owner.pid'), String(process.pid));
      } catch (error) {
        return this.turnOff(`its folder cannot be made in ${parent} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
      }
    }
    const file = path.join(this.dir, key);
    try {
      const { fileSize } = await chat.sequence.saveStateToFile(`${file}.tmp`);
      await rename(`${file}.tmp`, file);
      this.files.set(key, { file, bytes: fileSize });
      this.total += fileSize;
    } catch (error) {
      await rm(`${file}.tmp`, { force: true });
      const code = (error as NodeJS.ErrnoException).code;
      // A full or read-only disk fails every later state too: said once, and no more tried.
      if (code === 'ENOSPC' || code === 'EROFS' || code === 'EDQUOT' || /no space left/i.test(String((error as Error).message)))
        return this.turnOff(`${this.dir} cannot hold another state (${code ?? (error as Error).message})`);
      return undefined;
    }
    for (const [oldKey, old] of this.files) {
      if (this.total <= this.maxBytes) break;
      this.files.delete(oldKey);
      this.total -= old.bytes;
      await rm(old.file, { force: true });
    }
  }

  /** Turn the cache off and free what it holds; the warning that says so. */
  private async turnOff(why: string): Promise<string> {
    this.off = why;
    await this.clear();
    return `the llama prompt-state cache is off: ${why}; each passage is evaluated whole again in later calls (slower, the same replies)`;
  }

  /** Remove every saved state and the directory. */
  async clear(): Promise<void> {
    this.files.clear();
    this.total = 0;
    if (this.dir !== undefined) await rm(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}

/** The name every prompt-state directory starts with, in the temporary directory. */
const STATE_DIR_PREFIX = 'extagents-llama-state-';

/**
 * Remove the prompt-state directories in `parent` whose owner process is gone (killed before it
 * removed its own); one without an owner file is removed once a day old. Never throws.
 */
async function removeGoneOwners(parent: string): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(STATE_DIR_PREFIX))) {
    const dir = path.join(parent, name);
    const pid = Number((await readFile(path.join(dir, 'owner.pid'), 'utf8').catch(() => '')).trim());
    let gone: boolean;
    if (Number.isSafeInteger(pid) && pid > 0) {
      try {
        process.kill(pid, 0);
        gone = false;
      } catch (error) {
        gone = (error as NodeJS.ErrnoException).code === 'ESRCH';
      }
    } else {
      const age = await stat(dir).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      gone = age > 24 * 3600 * 1000;
    }
    if (gone) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * The CPU threads of EXTAGENTS_LLAMA_THREADS, if set. llama.cpp's threads spin while they wait for
 * each other, so two processes running `llama:` models on the same cores slow each other down far
 * more than twice; give each fewer threads (e.g. 1 each on 2 cores) when they must share.
 * @throws ConfigurationError when it is set to anything but an integer 1-256.
 */
export function llamaThreadsFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return integerFromEnv(env, 'EXTAGENTS_LLAMA_THREADS', 1, 256);
}

/** Default (and largest default) context size per sequence, tokens. */
export const DEFAULT_LLAMA_CONTEXT_TOKENS = 8192;

/** The first four bytes of every GGUF file ("GGUF"); https://github.com/ggml-org/ggml/blob/master/docs/gguf.md */
const GGUF_MAGIC = 'GGUF';

/**
 * The GGUF header (gguf.md, "File Structure"): magic, version (uint32), tensor count (uint64),
 * metadata key-value count (uint64), little-endian: 24 bytes.
 */
const GGUF_HEADER_BYTES = 24;

/**
 * The fewest bytes one tensor info (name length uint64, dimension count uint32, type uint32, offset
 * uint64) and one metadata key-value (key length uint64, value type uint32, a value of at least one
 * byte) take after the header: a header whose counts need more bytes than the file has is damaged.
 */
const GGUF_MIN_TENSOR_INFO_BYTES = 24;
const GGUF_MIN_METADATA_KV_BYTES = 13;

/**
 * What is wrong with a GGUF header, or undefined when its counts fit the file. Hand-written (three
 * fields; no library needed): node-llama-cpp's own reader took a header of absurd counts
 * ("GGUF", version 3, then text) as a loop of billions of entries and hung with growing memory.
 */
function ggufHeaderProblem(header: Buffer, fileBytes: number): string | undefined {
  if (header.length < GGUF_HEADER_BYTES) return `too short for a GGUF header (${fileBytes} bytes, at least ${GGUF_HEADER_BYTES})`;
  const version = header.readUInt32LE(4);
  const tensors = header.readBigUInt64LE(8);
  const entries = header.readBigUInt64LE(16);
  if (version === 0) return 'a damaged GGUF header (version 0)';
  const needed = BigInt(GGUF_HEADER_BYTES) + tensors * BigInt(GGUF_MIN_TENSOR_INFO_BYTES) + entries * BigInt(GGUF_MIN_METADATA_KV_BYTES);
  if (needed > BigInt(fileBytes)) {
    return `a damaged GGUF header (${tensors} tensors and ${entries} metadata entries cannot fit in ${fileBytes} bytes)`;
  }
  return undefined;
}

/**
 * Check a `llama:` model file before anything loads it or any run state is written.
 * @param file the path as given.
 * @returns the file's real path and size (bytes).
 * @throws ModelConfigurationError for a missing file, a directory, a file that is not GGUF, a GGUF
 *   header whose counts cannot fit the file, a file larger than this machine's memory, or a fetched
 *   model that no longer matches what its fetch checked (`checkFetchStamp`), each naming the path.
 */
export async function checkGgufFile(file: string): Promise<{ realPath: string; bytes: number }> {
  let info;
  try {
    info = await stat(file);
  } catch (error) {
    throw new ModelConfigurationError(`llama: model file ${file} not found (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
  }
  if (!info.isFile()) throw new ModelConfigurationError(`llama: model file ${file} is not a file`);
  const handle = await open(file, 'r');
  let header: Buffer;
  try {
    const buffer = Buffer.alloc(GGUF_HEADER_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, GGUF_HEADER_BYTES, 0);
    header = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  if (header.subarray(0, 4).toString('latin1') !== GGUF_MAGIC) {
    throw new ModelConfigurationError(`llama: model file ${file} is not a GGUF file (it does not start with "GGUF"); give a .gguf model`);
  }
  const problem = ggufHeaderProblem(header, info.size);
  if (problem !== undefined) throw new ModelConfigurationError(`llama: model file ${file} is ${problem}; give a complete .gguf model`);
  const total = os.totalmem();
  if (info.size > total) {
    throw new ModelConfigurationError(
      `llama: model file ${file} (${(info.size / 2 ** 30).toFixed(1)} GiB) is larger than this machine's memory (${(total / 2 ** 30).toFixed(1)} GiB)`,
    );
  }
  const realPath = await realpath(file);
  await checkFetchStamp(file, realPath);
  return { realPath, bytes: info.size };
}

/**
 * What scripts/fetch-model.py records beside a model it fetched and checked (`<file>.verified.json`):
 * the size and sha256 of the manifest, and the identity of the file as it checked it.
 */
interface FetchStamp {
  size: number;
  sha256: string;
  ino: number;
  mtimeMs: number;
}

/**
 * For a model the project's fetch script made (a `<file>.verified.json` beside it: the test and the
 * reference models), check that the file is still the one it checked, once per file identity: the
 * same inode and modification time pass at once; otherwise the size and then the sha256 must match
 * the stamp (which is then renewed for the new identity). A file with no stamp (a model of one's
 * own) is not checked here. The header check alone passes a file damaged past its header, which
 * node-llama-cpp would load and use.
 * @throws ModelConfigurationError naming the file, what differs and how to fetch it again.
 */
async function checkFetchStamp(file: string, realPath: string): Promise<void> {
  const stampFile = `${realPath}.verified.json`;
  let stamp: FetchStamp;
  try {
    stamp = JSON.parse(await readFile(stampFile, 'utf8')) as FetchStamp;
  } catch {
    return;
  }
  const info = await stat(realPath);
  if (info.ino === stamp.ino && Math.abs(info.mtimeMs - stamp.mtimeMs) < 1 && info.size === stamp.size) return;
  const again = `the file is damaged: fetch it again (./scripts/fetch-test-model.sh or ./scripts/fetch-reference-model.sh, which replace it)`;
  if (info.size !== stamp.size)
    throw new ModelConfigurationError(`llama: model file ${file} has ${info.size} bytes, not the ${stamp.size} its fetch checked; ${again}`);
  const digest = createHash('sha256');
  const handle = await open(realPath, 'r');
  try {
    for await (const block of handle.createReadStream({ highWaterMark: 1 << 20 })) digest.update(block as Buffer);
  } finally {
    await handle.close().catch(() => undefined);
  }
  const sha256 = digest.digest('hex');
  if (sha256 !== stamp.sha256)
    throw new ModelConfigurationError(`llama: model file ${file} has sha256 ${sha256}, not the ${stamp.sha256} its fetch checked; ${again}`);
  // The same bytes under a new identity (copied, touched): checked once, not at every load.
  await writeFile(stampFile, JSON.stringify({ ...stamp, ino: info.ino, mtimeMs: info.mtimeMs })).catch(() => undefined);
}

/** What tells one version of a file from another: device, inode, size (bytes) and modification time (ms). */
interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** The identity of a file now, or undefined when it is gone. */
async function fileIdentity(file: string): Promise<FileIdentity | undefined> {
  const info = await stat(file).catch(() => undefined);
  return info && { dev: info.dev, ino: info.ino, size: info.size, mtimeMs: info.mtimeMs };
}

/**
 * Why the model file at `realPath` is no longer the one loaded (`loaded`), or undefined when it is:
 * replaced (renamed over: another inode), rewritten (size or time), or removed.
 */
async function modelFileChange(realPath: string, loaded: FileIdentity | undefined): Promise<string | undefined> {
  if (loaded === undefined) return undefined;
  const now = await fileIdentity(realPath);
  if (now === undefined) return 'removed';
  if (now.dev !== loaded.dev || now.ino !== loaded.ino) return `replaced by another file (${loaded.size} bytes loaded, ${now.size} bytes now)`;
  if (now.size !== loaded.size || now.mtimeMs !== loaded.mtimeMs)
    return `rewritten in place (${loaded.size} bytes loaded, ${now.size} bytes at ${new Date(now.mtimeMs).toISOString()} now)`;
  return undefined;
}

/** A loaded model file: one model, one context with its sequences, shared by every `LlamaChatModel` of the file. */
interface LoadedLlama {
  readonly file: string;
  /** The real path loaded and the file's identity then (device, inode, size, modification time). */
  readonly realPath: string;
  readonly identity: FileIdentity | undefined;
  readonly model: LlamaModel;
  readonly context: LlamaContext;
  readonly lib: NodeLlamaCpp;
  readonly llama: Llama;
  readonly hasChatTemplate: boolean;
  readonly free: LlamaChat[];
  readonly waiting: Array<(chat: LlamaChat) => void>;
  readonly grammars: Map<string, Promise<LlamaGrammar>>;
  readonly states: PromptStates;
}

/**
 * One process's node-llama-cpp: its CPU binding, the model files it loaded (by real path and
 * options: the seeking agents and the reasoning agent naming one file share one copy and one
 * context) and llama.cpp's last log lines. Instance state: the provider uses the process's runtime
 * (`processLlamaRuntime`), freed by `disposeLlamaModels`; a test or a bench may make its own.
 */
export class LlamaRuntime {
  private binding: Promise<{ lib: NodeLlamaCpp; llama: Llama }> | undefined;
  /** The last llama.cpp log lines (errors), for the message of a failed load. */
  private readonly recentLogLines: string[] = [];
  private readonly loaded = new Map<string, Promise<LoadedLlama>>();

  /** node-llama-cpp and its CPU binding, loaded once per runtime (again after a failed load). */
  private async bindings(): Promise<{ lib: NodeLlamaCpp; llama: Llama }> {
    this.binding ??= (async () => {
      let lib: NodeLlamaCpp;
      try {
        lib = await import('node-llama-cpp');
      } catch (error) {
        // An optional peer dependency of the package (shared/optional-packages.ts): the library installs without it.
        if (isMissingModule(error, 'node-llama-cpp')) throw missingPackageError('llama: models', ['node-llama-cpp'], error);
        throw new ConfigurationError(`llama: models need the npm package node-llama-cpp, which failed to load: ${(error as Error).message}`, { cause: error });
      }
      // llama.cpp's own log lines are kept (the last few), not printed: a load failure names them
      // in its one error line instead.
      const llama = await lib.getLlama({
        gpu: false,
        build: 'never',
        logLevel: lib.LlamaLogLevel.error,
        progressLogs: false,
        logger: (_level, message) => {
          this.recentLogLines.push(message.trim());
          if (this.recentLogLines.length > 5) this.recentLogLines.shift();
        },
      });
      return { lib, llama };
    })();
    try {
      return await this.binding;
    } catch (error) {
      this.binding = undefined;
      throw error;
    }
  }

  /**
   * Load (once per runtime, real path and options) a GGUF model and create its context.
   * @throws ModelConfigurationError for a bad file (see `checkGgufFile`), a model too large for the
   *   free memory, or a file node-llama-cpp cannot load; ConfigurationError for bad options.
   */
  async load(file: string, options: LlamaOptions): Promise<LoadedLlama> {
    const { realPath } = await checkGgufFile(file);
    const sequences = options.sequences ?? 1;
    if (!Number.isInteger(sequences) || sequences < 1 || sequences > 64)
      throw new ConfigurationError(`llama: sequences must be an integer 1-64 (got ${sequences})`);
    const threads = options.threads ?? llamaThreadsFromEnv();
    const stateBytes = options.promptStateBytes ?? llamaStateBytesFromEnv() ?? DEFAULT_PROMPT_STATE_BYTES;
    if (!Number.isSafeInteger(stateBytes) || stateBytes < 0)
      throw new ConfigurationError(`llama: promptStateBytes must be a whole number of bytes (got ${stateBytes})`);
    const key = `${realPath}#${sequences}#${options.contextTokens ?? ''}#${threads ?? ''}#${stateBytes}`;
    let entry = this.loaded.get(key);
    if (!entry) {
      entry = (async (): Promise<LoadedLlama> => {
        const { lib, llama } = await this.bindings();
        const identity = await fileIdentity(realPath);
        let model: LlamaModel;
        try {
          model = await llama.loadModel({ modelPath: realPath, gpuLayers: 0 });
        } catch (error) {
          const message = (error as Error).message;
          const log = this.recentLogLines.filter((line) => line !== '').slice(-1)[0];
          throw new ModelConfigurationError(
            /memory|RAM/i.test(message)
              ? `llama: model ${file} does not fit in this machine's free memory (${(os.freemem() / 2 ** 30).toFixed(1)} GiB free): ${message}`
              : `llama: cannot load model ${file} (a damaged or unsupported GGUF file?): ${message}${log ? ` (llama.cpp: ${log})` : ''}`,
            { cause: error },
          );
        }
        const trained = model.trainContextSize;
        const contextTokens = options.contextTokens ?? Math.min(trained, DEFAULT_LLAMA_CONTEXT_TOKENS);
        // One minimum with the spec parser (models/llama/traits.ts), which refuses a smaller ?ctx= first.
        if (!Number.isInteger(contextTokens) || contextTokens < MIN_LLAMA_CONTEXT_TOKENS || contextTokens > trained) {
          await model.dispose();
          throw new ConfigurationError(
            `llama: context size must be an integer from ${MIN_LLAMA_CONTEXT_TOKENS} to the model's training context, ${trained} tokens, for ${path.basename(file)} (got ${contextTokens}; set it with ?ctx=<tokens>)`,
          );
        }
        let context: LlamaContext;
        try {
          context = await model.createContext({
            contextSize: contextTokens,
            sequences,
            threads: threads ?? llama.cpuMathCores,
          });
        } catch (error) {
          await model.dispose();
          throw new ModelConfigurationError(
            `llama: cannot create a ${contextTokens}-token context with ${sequences} sequences for ${file}: ${(error as Error).message}`,
            { cause: error },
          );
        }
        const free: LlamaChat[] = [];
        for (let i = 0; i < sequences; i++) free.push(new lib.LlamaChat({ contextSequence: context.getSequence() }));
        const template = (model.fileInfo.metadata as { tokenizer?: { chat_template?: unknown } }).tokenizer?.chat_template;
        return {
          file,
          realPath,
          identity,
          model,
          context,
          lib,
          llama,
          hasChatTemplate: typeof template === 'string' && template.trim() !== '',
          free,
          waiting: [],
          grammars: new Map(),
          states: new PromptStates(stateBytes),
        };
      })();
      this.loaded.set(key, entry);
      entry.catch(() => this.loaded.delete(key));
    }
    return entry;
  }

  /** Free every model and context this runtime loaded, and its binding. Idempotent; the runtime can load again after it. */
  async dispose(): Promise<void> {
    const entries = [...this.loaded.values()];
    this.loaded.clear();
    for (const entry of entries) {
      try {
        const model = await entry;
        await model.states.clear();
        await model.context.dispose();
        await model.model.dispose();
      } catch {
        // A model that failed to load has nothing to free.
      }
    }
    const binding = this.binding;
    this.binding = undefined;
    if (binding) {
      try {
        await (await binding).llama.dispose();
      } catch {
        // Nothing to free.
      }
    }
  }
}

let processRuntime: LlamaRuntime | undefined;

/**
 * The process's runtime (created on first use; the CLI frees it before exit through
 * models/disposers.ts): the one binding of node-llama-cpp a command uses.
 */
export function processLlamaRuntime(): LlamaRuntime {
  if (processRuntime === undefined) {
    processRuntime = new LlamaRuntime();
    onDispose(disposeLlamaModels);
  }
  return processRuntime;
}

/** Take a free sequence's chat (waiting in arrival order when all are busy). */
function acquire(model: LoadedLlama): Promise<LlamaChat> {
  const chat = model.free.pop();
  if (chat) return Promise.resolve(chat);
  return new Promise((resolve) => model.waiting.push(resolve));
}

function release(model: LoadedLlama, chat: LlamaChat): void {
  const next = model.waiting.shift();
  if (next) next(chat);
  else model.free.push(chat);
}

/** The grammar of a reply schema, built once per model and schema. */
function grammarFor(model: LoadedLlama, schema: ReplySchema): Promise<LlamaGrammar> {
  const grammarSchema = toGrammarSchema(schema.schema);
  const key = JSON.stringify(grammarSchema);
  let grammar = model.grammars.get(key);
  if (!grammar) {
    // The grammar type is generic over the schema's TypeScript type; ours is built at run time.
    grammar = model.llama.createGrammarForJsonSchema(grammarSchema as Parameters<Llama['createGrammarForJsonSchema']>[0]);
    model.grammars.set(key, grammar);
    grammar.catch(() => model.grammars.delete(key));
  }
  return grammar;
}

/** node-llama-cpp's stop reasons onto the port's vocabulary. */
function stopReasonOf(reason: string): { stopReason: StopReason; providerStopReason?: string } {
  if (reason === 'maxTokens') return { stopReason: 'max_tokens' };
  // The chat wrapper's own stop trigger is the end of the model's turn, as an end-of-generation token is.
  if (reason === 'eogToken' || reason === 'stopGenerationTrigger') return { stopReason: 'end_turn' };
  if (reason === 'customStopTrigger') return { stopReason: 'stop_sequence' };
  return { stopReason: 'other', providerStopReason: reason };
}

/** A `ChatModel` over one loaded GGUF model (see the file comment). Create with `loadLlamaChatModel`. */
export class LlamaChatModel implements ChatModel {
  private templateWarned = false;
  private fileChangeWarned = false;

  private constructor(
    readonly modelId: string,
    private readonly loadedModel: LoadedLlama,
  ) {}

  /**
   * Load (once per process) the model of a `llama:` spec and return its chat model.
   * @param file path of the .gguf file.
   * @throws ModelConfigurationError for a missing, non-GGUF or too large file; ConfigurationError
   *   for bad options.
   */
  static async load(file: string, options: LlamaOptions = {}, runtime: LlamaRuntime = processLlamaRuntime()): Promise<LlamaChatModel> {
    const model = await runtime.load(file, options);
    return new LlamaChatModel(`llama:${path.basename(file)}`, model);
  }

  /** Context size per sequence, tokens of the model's tokenizer. */
  get contextTokens(): number {
    return this.loadedModel.context.contextSize;
  }

  /** Parallel sequences of the context. */
  get sequences(): number {
    return this.loadedModel.context.totalSequences;
  }

  /** The model's profile (models/llama/profiles.ts), from its GGUF metadata. */
  get profile(): LlamaProfile {
    return llamaProfileFor((this.loadedModel.model.fileInfo.metadata as { general?: { basename?: unknown; name?: unknown } }).general);
  }

  /** Count the tokens of a text in the model's tokenizer. */
  countTokens(text: string): number {
    return this.loadedModel.model.tokenize(text).length;
  }

  /**
   * One chat completion on a free sequence.
   * @returns the reply, `stopReason` ("end_turn", "max_tokens"), prompt and generated token counts,
   *   `structured: "schema"` when the request had a schema (grammar-constrained).
   * @throws ContextOverflowError when prompt tokens + `maxTokens` exceed the context size (both
   *   numbers named); ModelError when generation fails.
   */
  async complete(request: ChatRequest): Promise<ChatResponse> {
    const model = this.loadedModel;
    const history: ChatHistoryItem[] = [];
    if (request.system.trim() !== '') history.push({ type: 'system', text: request.system });
    for (const turn of request.messages) {
      history.push(turn.role === 'user' ? { type: 'user', text: turn.text } : { type: 'model', response: [turn.text] });
    }
    history.push({ type: 'model', response: [] });
    const grammar = request.schema ? await grammarFor(model, request.schema) : undefined;
    const chat = await acquire(model);
    try {
      const { contextText } = chat.chatWrapper.generateContextState({ chatHistory: history });
      const promptTokens = contextText.tokenize(model.model.tokenizer).length;
      const contextTokens = model.context.contextSize;
      if (promptTokens + request.maxTokens > contextTokens) {
        // No chunk size in the advice here: this call does not know the chunk's; Seek advises one that fits it.
        throw new ContextOverflowError(
          `llama model ${path.basename(model.file)}: the prompt has ${promptTokens} tokens and the reply may take ${request.maxTokens}: ` +
            `more than the model's context of ${contextTokens} tokens; use smaller chunks (--chunk-tokens) or budgets (--reasoner-budget, --sync-budget)`,
          { tokens: { prompt: promptTokens, context: contextTokens, reply: request.maxTokens } },
        );
      }
      const stateKey = model.states.keyOf(request);
      if (stateKey !== undefined) await model.states.restore(chat, stateKey);
      const before = chat.sequence.tokenMeter.usedOutputTokens;
      const beforeInput = chat.sequence.tokenMeter.usedInputTokens;
      let result;
      try {
        const signal = callSignal();
        result = await chat.generateResponse(history, {
          maxTokens: request.maxTokens,
          temperature: request.temperature ?? 0,
          ...(grammar ? { grammar } : {}),
          // The run's abort (models/call-signal.ts) stops the generation between tokens.
          ...(signal !== undefined && { signal }),
        });
      } catch (error) {
        const aborted = abortedCallError(`llama model ${path.basename(model.file)}`, error);
        if (aborted !== undefined) throw aborted;
        throw new ModelError(`llama model ${path.basename(model.file)}: generation failed: ${(error as Error).message}`, { cause: error });
      }
      const stateWarning = await model.states.keep(chat, stateKey);
      const warnings: string[] = stateWarning === undefined ? [] : [stateWarning];
      // The file changed under a long-lived process (serve, job): it still answers with the model it
      // loaded, and says so once, naming what changed.
      if (!this.fileChangeWarned) {
        const change = await modelFileChange(model.realPath, model.identity);
        if (change !== undefined) {
          this.fileChangeWarned = true;
          warnings.push(
            `llama model file ${model.file} was ${change} since this process loaded it: the replies are still the loaded model's; restart the process (serve, job) to use the file as it is now`,
          );
        }
      }
      if (!model.hasChatTemplate && !this.templateWarned) {
        this.templateWarned = true;
        warnings.push(`llama model ${path.basename(model.file)} has no chat template in its metadata (a base model?); a generic chat format is used`);
      }
      // node-llama-cpp keeps the sequence's evaluated tokens and evaluates only where the new prompt
      // differs (LlamaContextSequence.adaptStateToTokens): the rest was read from the KV cache.
      const reused = Math.max(0, promptTokens - (chat.sequence.tokenMeter.usedInputTokens - beforeInput));
      return {
        text: result.response,
        ...stopReasonOf(result.metadata.stopReason),
        inputTokens: promptTokens,
        ...(reused > 0 && { cacheReadInputTokens: reused }),
        outputTokens: chat.sequence.tokenMeter.usedOutputTokens - before,
        ...(request.schema ? { structured: 'schema' as const } : {}),
        ...(warnings.length > 0 ? { warnings } : {}),
      };
    } finally {
      release(model, chat);
    }
  }
}

/**
 * Free the process's runtime (`processLlamaRuntime`): every loaded model, context and the binding
 * (the CLI calls it before exit, so the native threads do not keep the process alive). Idempotent;
 * a later load starts a new runtime.
 */
export async function disposeLlamaModels(): Promise<void> {
  const runtime = processRuntime;
  processRuntime = undefined;
  await runtime?.dispose();
}

/** The agent roles of a `llama:` spec, loaded. */
export interface LlamaModels {
  /** Seeking and reasoning agents (LlmAgents over the loaded models). */
  agents: LlmAgents;
  /** Survey outline and writer roles on the reasoner model. */
  survey: SurveyModel;
  seeker: LlamaChatModel;
  reasoner: LlamaChatModel;
  /** The smaller context size of the two models, tokens (for `runOptionDefaultsForContext`). */
  contextTokens: number;
  /**
   * The models' measured run defaults (models/llama/profiles.ts): the seeker's chunk size, the
   * reasoner's first k.
   */
  runDefaults: ModelRunDefaults;
}

/**
 * Load the models of a `llama:` spec (one load per file: the same file for both roles is one model).
 * @param runtime whose binding and loaded files to use; default the process's (`processLlamaRuntime`).
 * @param parsed the parsed spec (models/spec.ts `toModelSpec`; the provider's `load` gets it parsed).
 * @throws the errors of `LlamaChatModel.load`.
 */
export async function loadLlamaModels(
  parsed: SpecOf<'llama'>,
  options: LlamaOptions = {},
  runtime: LlamaRuntime = processLlamaRuntime(),
): Promise<LlamaModels> {
  // The spec's context size (`?ctx=`) unless the caller gives one.
  const withContext: LlamaOptions =
    parsed.contextTokens !== undefined && options.contextTokens === undefined ? { ...options, contextTokens: parsed.contextTokens } : options;
  const seeker = await LlamaChatModel.load(parsed.seekerModelId, withContext, runtime);
  const reasoner = parsed.reasonerModelId === parsed.seekerModelId ? seeker : await LlamaChatModel.load(parsed.reasonerModelId, withContext, runtime);
  // How each agent replies and the run defaults: the model's profile (models/llama/profiles.ts),
  // chosen by measurement: the seeker's for seeking and chunks, the reasoner's for reasoning and KAR.
  const seekerProfile = seeker.profile;
  const reasonerProfile = reasoner.profile;
  const models: LlamaModels = {
    agents: new LlmAgents({ seeker, reasoner, seekerReply: seekerProfile.seekerReply, reasonerReply: reasonerProfile.reasonerReply }),
    survey: new LlmSurveyModel({ reasoner }),
    seeker,
    reasoner,
    contextTokens: Math.min(seeker.contextTokens, reasoner.contextTokens),
    runDefaults: {
      ...(seekerProfile.runDefaults.chunkTokens !== undefined && { chunkTokens: seekerProfile.runDefaults.chunkTokens }),
      ...(reasonerProfile.runDefaults.karFirstK !== undefined && { karFirstK: reasonerProfile.runDefaults.karFirstK }),
      ...(reasonerProfile.runDefaults.reasonerBudgetTokens !== undefined && { reasonerBudgetTokens: reasonerProfile.runDefaults.reasonerBudgetTokens }),
    },
  };
  return models;
}
