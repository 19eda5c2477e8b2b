/**
 * Parallel seeking benchmark (issue 11): the local workflow (local/engine/run.ts `runLocal`: the
 * Distributed Map of seeking agents over dynalite and the directory bucket) with a scripted model
 * that takes a fixed time per seeking call, at several concurrencies, in one run of this script.
 * The seek phase (first seeking call started → last one ended) is compared with the ideal for that
 * concurrency, ceil(chunks / concurrency) × the call's latency: a ratio of 1.00 means the
 * orchestration (task dispatch, store reads and writes, progress) adds nothing to the model's time.
 *
 * The corpus is made here: `--chunks` documents of about 100 tokens each, with `chunkTokens` 128 so
 * each document is one chunk. Every seeking agent returns "no information" except one in 8 (a
 * one-sentence message); the reasoning agent answers from the first message at once. One round.
 *
 * Usage: npx tsx bench/parallel-seek.ts [--chunks 64] [--latency-ms 300] [--concurrency 1,4,16,64]
 * Prints one JSON line per concurrency: chunks, seek phase ms, ideal ms, ratio, whole run ms.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runLocal } from '../local/engine/run';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../shared/ports';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/parallel-seek.ts [--chunks 64] [--latency-ms 300] [--concurrency 1,4,16,64]

Parallel seeking: the local workflow (runLocal) with a scripted model whose every seeking call takes a
fixed time (a timer, no CPU), over a corpus made here of one-chunk documents (about 100 tokens each,
chunkTokens 128), one round, at each concurrency in turn. The seek phase (first seeking call started
to last one ended) is compared with the ideal, ceil(chunks / concurrency) x the call's latency: a ratio
of 1.00 means the orchestration adds nothing to the model's time. Prints one JSON line per
concurrency: chunks, seeking calls, seek phase ms, ideal ms, ratio, whole run ms.

Options:
  --chunks N             documents, one chunk each (default 64)
  --latency-ms MS        each seeking call's time, milliseconds (default 300)
  --concurrency LIST     comma-separated concurrencies, one run each (default 1,4,16,64)
  -h, --help             print this and exit
`;

/** A model whose seeking calls each take `latencyMs` (a timer, no CPU), recording the seek phase's span. */
class LatencyModel implements AgentModel {
  readonly description: string;
  firstStart = Infinity;
  lastEnd = 0;
  constructor(private readonly latencyMs: number) {
    this.description = `scripted model, ${latencyMs} ms per seeking call (benchmark)`;
  }
  async seek(request: SeekRequest): Promise<SeekResult> {
    this.firstStart = Math.min(this.firstStart, performance.now());
    await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    this.lastEnd = Math.max(this.lastEnd, performance.now());
    const usage = { calls: 1, inputTokens: 0, outputTokens: 0 };
    if (request.chunk.index % 8 !== 0) return { evidence: null, score: 0, spans: [], usage, warnings: [] };
    return { evidence: `Chunk ${request.chunk.index} mentions the subject.`, score: 50, spans: [], usage, warnings: [] };
  }
  async reason(request: ReasonRequest): Promise<ReasonResult> {
    const usage = { calls: 1, inputTokens: 0, outputTokens: 0 };
    const first = request.messages[0];
    if (!first) return { answerable: false, answer: 'NO ANSWER', citedMessageIds: [], usage, warnings: [] };
    return { answerable: true, answer: 'scripted answer', citedMessageIds: [first.id], usage, warnings: [] };
  }
}

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { values } = benchArgs(USAGE, {
    chunks: { type: 'string', default: '64' },
    'latency-ms': { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '1,4,16,64' },
  });
  const chunks = Number(values.chunks);
  const latencyMs = Number(values['latency-ms']);
  const levels = values.concurrency.split(',').map(Number);
  if (!Number.isInteger(chunks) || chunks < 1) usageError(USAGE, `--chunks must be a positive integer, got ${values.chunks}`);
  if (!(latencyMs >= 0)) usageError(USAGE, `--latency-ms must be a number >= 0, got ${values['latency-ms']}`);
  if (levels.some((c) => !Number.isInteger(c) || c < 1))
    usageError(USAGE, `--concurrency must be positive integers separated by commas, got ${values.concurrency}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'extagents-parallel-'));
  try {
    const files = Array.from({ length: chunks }, (_, i) => {
      const file = path.join(dir, `doc-${String(i).padStart(4, '0')}.txt`);
      writeFileSync(file, `Document ${i}. ${'The river rose in the spring and the town kept its records. '.repeat(7)}\n`);
      return { id: path.basename(file), path: file };
    });
    for (const concurrency of levels) {
      const model = new LatencyModel(latencyMs);
      const stateDir = mkdtempSync(path.join(dir, 'state-'));
      const started = performance.now();
      const result = await runLocal({ files, question: 'What does the corpus say?', stateDir, model, options: { rounds: 1, chunkTokens: 128, concurrency } });
      const runMs = performance.now() - started;
      const seekMs = model.lastEnd - model.firstStart;
      const idealMs = Math.ceil(result.chunks / concurrency) * latencyMs;
      process.stdout.write(
        `${JSON.stringify({ concurrency, chunks: result.chunks, seekerCalls: result.usage.seeker.calls, seekMs: Math.round(seekMs), idealMs, ratio: Number((seekMs / idealMs).toFixed(2)), runMs: Math.round(runMs) })}\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
