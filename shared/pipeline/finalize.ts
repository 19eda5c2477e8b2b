/**
 * Finalize: assemble and persist the run's result (docs/ARCHITECTURE.md, step 7): the answer of the
 * first answered KAR step (or the refusal), its citations resolved to documents and character
 * ranges, the KAR trace, usage per role, skipped documents, failed chunks with their errors and the
 * transient model errors the workflow retried.
 */
import { ModelThrottledError } from '../errors';
import type { BlobStore, MessageStore, StoredStep } from '../ports';
import { coverageSchedule } from '../coverage';
import {
  NO_ANSWER,
  type CoverageReport,
  type ReseekReport,
  type BatchReport,
  type RoleUsage,
  type ChunkFailure,
  type Citation,
  type Message,
  type RetryReport,
  type RunResult,
} from '../types';
import { coverageOrderKey, reseekItemsKey, resultKey, runChunkKey } from './layout';
import { batchRoundKey, type BatchRoundRecord } from './seek-batch';
import { loadRunRecord, type RunRecord } from './run-record';
import type { Chunk } from '../types';
import { locationAt, type DocumentLocation } from '../readers/types';
import type { FinalizeOutput, WorkflowState } from './state';

export interface FinalizeDeps {
  blobs: BlobStore;
  store: MessageStore;
}

/** Messages cited as "the best evidence" when the run refuses. */
const BEST_EVIDENCE_ON_REFUSAL = 3;
/** Longest quote in a citation, in characters. */
const MAX_SHOWN_QUOTE_CHARS = 300;
/** Reason given for a failed chunk whose Seek task recorded no error (it was killed, e.g. by a timeout). */
const UNKNOWN_FAILURE = 'no error recorded: the Seek task stopped before it could record one (e.g. a Lambda timeout or crash)';

/**
 * Build the `RunResult`, write it to `runs/<runId>/result.json` and return a small summary.
 * A refusal (no answered step) answers exactly "NO ANSWER" and cites the best evidence found.
 */
export async function finalizeRun(state: WorkflowState, deps: FinalizeDeps): Promise<FinalizeOutput & { result: RunResult }> {
  const { blobs, store } = deps;
  const record = await loadRunRecord(blobs, state.runId);
  const [allSteps, counters, sought, failures] = await Promise.all([
    store.getSteps(state.runId),
    store.getCounters(state.runId),
    store.soughtChunks(state.runId, state.round),
    store.seekFailures(state.runId, state.round),
  ]);
  // Steps of this execution only: a resumed run re-numbers its steps from 1, and an earlier,
  // interrupted execution of the same run id may have recorded more of them.
  const steps = allSteps.filter((s) => s.seq <= state.seq);
  const answeredStep: StoredStep | undefined = steps.find((s) => s.outcome === 'answered');
  const answerable = answeredStep !== undefined;

  const citedIds = answerable
    ? answeredStep.citedMessageIds
    : (await store.topK(state.runId, BEST_EVIDENCE_ON_REFUSAL, state.round, state.covered)).map((m) => m.id);
  const messages = await store.getMessages(state.runId, citedIds);
  const byId = new Map(messages.map((m) => [m.id, m]));
  const citations: Citation[] = [];
  const locationsOf = new Map(record.documents.filter((d) => d.locations !== undefined).map((d) => [d.id, d.locations]));
  for (const id of citedIds) {
    const message = byId.get(id);
    if (message)
      citations.push(...(await citationsOf(message, state.runId, blobs, record.chunksFrom)).map((c) => withLocation(c, locationsOf.get(c.documentId))));
  }

  const soughtSet = new Set(sought);
  // The chunks each round was to seek: every chunk, or those a grow run covered (shared/coverage.ts);
  // in rounds >= 2 of a promising run, those its rule chose (shared/reseek.ts).
  const grow = record.options.coverage === 'grow';
  const covered = grow
    ? (JSON.parse(await blobs.getText(coverageOrderKey(state.runId))) as number[]).slice(0, state.covered).sort((a, b) => a - b)
    : Array.from({ length: record.chunks }, (_, i) => i);
  const promising = record.options.reseek === 'promising';
  const chosen = promising ? await reseekChosen(blobs, state.runId, state.round) : [];
  const expected = chosen.length > 0 ? chosen[chosen.length - 1] : covered;
  const failureOf = new Map(failures.map((f) => [f.chunk, f]));
  const chunkFailures: ChunkFailure[] = expected
    .filter((i) => !soughtSet.has(i))
    .map((chunk) => {
      const failure = failureOf.get(chunk);
      return failure
        ? { chunk, round: state.round, error: failure.error, message: failure.message }
        : { chunk, round: state.round, error: 'Unknown', message: UNKNOWN_FAILURE };
    });
  const { byRole, byError } = counters.transientErrors;
  const retries: RetryReport = { total: byRole.seeker + byRole.reasoner, byRole, byError };

  const warnings = [...(record.concurrency?.warnings ?? []), ...optionWarnings(record.options), ...counters.warnings];
  if (counters.warningCount > counters.warnings.length) {
    warnings.push(`… and ${counters.warningCount - counters.warnings.length} more warning(s)`);
  }
  // What the answer is, when the reader says (the extractive reader): that of the answering step, or
  // of the last step of a refusal.
  const basis = answerable ? answeredStep.answerBasis : steps.findLast((s) => s.answerBasis !== undefined)?.answerBasis;
  // A best-effort answer its cited quotes do not hold (shared/support.ts): refused, the guess kept apart.
  const unsupported = answerable ? undefined : steps.find((s) => s.forced === true && s.outcome === 'unsupported');
  if (unsupported !== undefined) {
    warnings.push(`the best-effort answer ${JSON.stringify(unsupported.answer)} is not in the quotes it cites; the run refuses (RunResult.unsupportedAnswer)`);
  }
  const batchRounds = record.options.seekMode === 'batch' ? await batchReport(blobs, state.runId, state.round) : undefined;
  // A batch job that did not complete: said in the warnings, not only in `batch` (its chunks were sought on demand).
  for (const round of batchRounds?.rounds ?? []) {
    for (const job of round.jobs) {
      if (job.status === undefined || job.status === 'Completed') continue;
      warnings.push(
        `round ${round.round}: a batch job of ${job.records} record(s) ended ${job.status}${job.message ? ` (${job.message})` : ''}; the records it did not answer were sought on demand`,
      );
    }
  }
  // The content filter withheld the reasoning agent's reply: the run ended there (Answered?).
  const filtered = steps.find((s) => s.outcome === 'filtered');
  if (filtered !== undefined) {
    warnings.push(
      `the provider's content filter withheld the reasoning agent's reply at KAR step ${filtered.seq} (round ${filtered.round}, k=${filtered.k}); ` +
        'the run refuses there, with no wider step, next round or best-effort answer (each would send the same question to the same filter)',
    );
  }
  const result: RunResult = {
    runId: state.runId,
    question: record.question,
    answer: answerable ? answeredStep.answer : NO_ANSWER,
    answerable,
    ...(basis !== undefined && { answerBasis: basis }),
    ...(unsupported !== undefined && { unsupportedAnswer: unsupported.answer }),
    ...(record.models !== undefined && { models: record.models }),
    citations,
    trace: steps.map(({ round, k, messagesUsed, evidenceTokens, outcome, forced, followUp }) => ({
      round,
      k,
      messagesUsed,
      evidenceTokens,
      outcome,
      ...(forced ? { forced } : {}),
      ...(followUp !== undefined && { followUp }),
    })),
    usage: record.options.pipelineRounds ? { ...counters.usage, speculative: unusedSpeculation(counters.seekerByRound, state.round) } : counters.usage,
    ...(record.estimate && { estimate: record.estimate }),
    ...(record.concurrency && {
      concurrency: {
        ...record.concurrency,
        throttledCalls: byError[ModelThrottledError.name] ?? 0,
        throttleWaitSeconds: Math.round(counters.throttleWaitMs / 100) / 10,
      },
    }),
    rounds: state.round,
    chunks: record.chunks,
    poolSize: await store.poolSize(state.runId, state.round, state.covered),
    ...(grow && { coverage: coverageReport(state, record.options.coverageFirstChunks) }),
    ...(promising && { reseek: { mode: 'promising', chunksPerRound: [covered.length, ...chosen.map((c) => c.length)] } satisfies ReseekReport }),
    ...(batchRounds !== undefined && { batch: batchRounds }),
    skipped: record.skipped,
    chunkFailures,
    retries,
    warnings,
  };
  const key = resultKey(state.runId);
  await blobs.put(key, JSON.stringify(result, null, 2), 'application/json');
  return { runId: state.runId, answerable, resultKey: key, result };
}

/** Run options that could not take effect together, said once in the result (they are not errors: each alone is valid). */
function optionWarnings(options: RunRecord['options']): string[] {
  const warnings: string[] = [];
  if (options.karRounds === 'last' && options.rounds < 2) warnings.push("karRounds 'last' has no effect with rounds 1 (the only round is the last)");
  if (options.synchronization !== 'follow-up') return warnings;
  if (options.rounds < 2) return [...warnings, "synchronization 'follow-up' has no effect with rounds 1 (no round follows the first)"];
  if (options.pipelineRounds)
    return [
      ...warnings,
      "synchronization 'follow-up' has no effect with pipelineRounds (a speculative round starts before KAR ends); rounds were synchronized plainly",
    ];
  if (options.karRounds === 'last')
    return [...warnings, "synchronization 'follow-up' has no effect with karRounds 'last' (no round before the last is read, so none asks what is missing)"];
  return warnings;
}

/** What a grow run covered (`RunResult.coverage`). */
function coverageReport(state: WorkflowState, first: number): CoverageReport {
  const cap = state.config.coverageCap;
  return { mode: 'grow', covered: state.covered, cap, tranches: coverageSchedule(first, Math.max(cap, 1)).indexOf(state.covered) + 1 };
}

/** How each round of a batch-seeking run was sought, from its batch records (a round with none: not reached by the batch states). */
async function batchReport(blobs: BlobStore, runId: string, lastRound: number): Promise<BatchReport> {
  const rounds: BatchReport['rounds'] = [];
  for (let round = 1; round <= lastRound; round++) {
    const key = batchRoundKey(runId, round);
    if (!(await blobs.exists(key))) continue;
    const r = JSON.parse(await blobs.getText(key)) as BatchRoundRecord;
    rounds.push({
      round,
      mode: r.mode,
      ...(r.reason !== undefined && { reason: r.reason }),
      jobs: r.jobs.map((job) => ({
        ...(job.ended !== undefined && { status: job.ended }),
        ...(job.message !== undefined && { message: job.message }),
        records: job.records,
      })),
      records: r.records,
      ...r.collected,
    });
  }
  return { rounds };
}

/** The chunks the rule of a promising run chose for each of rounds 2..`lastRound` (shared/reseek.ts), ascending. */
async function reseekChosen(blobs: BlobStore, runId: string, lastRound: number): Promise<number[][]> {
  const rounds = Array.from({ length: Math.max(lastRound - 1, 0) }, (_, i) => i + 2);
  return Promise.all(
    rounds.map(async (round) => (JSON.parse(await blobs.getText(reseekItemsKey(runId, round))) as Array<{ chunk: number }>).map((item) => item.chunk)),
  );
}

/**
 * The usage of speculative rounds the run did not use: those after its last round (`state.round`),
 * sought while KAR of the round before them answered or found the pool empty. A speculative round
 * the run went on to use (its KAR ran) is ordinary seeking and not counted here.
 */
export function unusedSpeculation(byRound: Readonly<Record<number, RoleUsage>>, lastRound: number): RoleUsage {
  const total: RoleUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };
  for (const [round, usage] of Object.entries(byRound)) {
    if (Number(round) <= lastRound) continue;
    total.calls += usage.calls;
    total.inputTokens += usage.inputTokens;
    total.outputTokens += usage.outputTokens;
    if (usage.modelMs !== undefined) total.modelMs = (total.modelMs ?? 0) + usage.modelMs;
    if (usage.throttleWaitMs !== undefined) total.throttleWaitMs = (total.throttleWaitMs ?? 0) + usage.throttleWaitMs;
  }
  return total;
}

/**
 * A citation with where its quote is in the source (shared/readers/: the page of a PDF, the heading
 * path of HTML, Markdown, DOCX), when its document has locations.
 */
function withLocation(citation: Citation, locations: readonly DocumentLocation[] | undefined): Citation {
  const at = locationAt(locations, citation.start);
  if (at === undefined) return citation;
  return {
    ...citation,
    ...(at.label !== '' && { location: at.label }),
    ...(at.page !== undefined && { page: at.page }),
    ...(at.sourceLine !== undefined && { sourceLine: at.sourceLine }),
    ...(at.sourceOffset !== undefined && { sourceOffset: at.sourceOffset }),
  };
}

/** One citation per verbatim quote; a message without quotes cites its chunk's first segment. */
async function citationsOf(message: Message, runId: string, blobs: BlobStore, chunksFrom: string | undefined): Promise<Citation[]> {
  const base = { messageId: message.id, chunkIndex: message.chunkIndex, round: message.round, score: message.score };
  if (message.quotes.length > 0) {
    return message.quotes.map((q) => ({ ...base, documentId: q.documentId, start: q.start, end: q.end, quote: shorten(q.text) }));
  }
  const chunk = JSON.parse(await blobs.getText(runChunkKey(runId, message.chunkIndex, chunksFrom))) as Chunk;
  const seg = chunk.segments[0];
  const text = chunk.text.slice(seg.chunkStart, seg.chunkStart + (seg.end - seg.start));
  return [{ ...base, documentId: seg.documentId, start: seg.start, end: seg.end, quote: shorten(text) }];
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= MAX_SHOWN_QUOTE_CHARS) return flat;
  // Cut on a code point boundary (Array.from iterates code points).
  return (
    Array.from(flat)
      .slice(0, MAX_SHOWN_QUOTE_CHARS - 1)
      .join('') + '…'
  );
}
