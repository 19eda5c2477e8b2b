/**
 * The local batch runner: `BatchInference` (shared/ports.ts) over the local bucket and the local
 * seeking model, so a run with `seekMode: 'batch'` takes the same workflow states on one machine as
 * on AWS (SubmitSeekBatch, WaitForSeekBatch, CheckSeekBatch: docs/ARCHITECTURE.md, "Batch seeking").
 *
 * A job is its input file (`<prefix>input/records.jsonl`: `{recordId, request}` lines, the port's
 * provider-neutral requests) and its output file (`<prefix>output/records.jsonl.out`: `{recordId,
 * response}` or `{recordId, error}` lines). There is no background worker: each status read runs the
 * next slice of records not yet in the output (at least one, then until `sliceMs` has passed) and
 * rewrites the output, so a killed process loses at most the record in flight and a resumed run
 * never pays for a written record twice. Written by hand: no library runs a JSONL batch through an
 * arbitrary in-process model.
 */
import type { BatchInference, BatchJobRef, BatchJobStatus, BatchRecord, BatchRecordResult, BlobStore, ChatModel, ChatRequest } from '../../shared/ports';
import { NotFoundError, RETRYABLE_ERRORS } from '../../shared/errors';
import { malformedBatchOutput, namedRecordId } from '../../shared/batch-output';

/** Options of {@link LocalBatchRunner}. */
export interface LocalBatchOptions {
  /**
   * Fewest records of a job: below it the run seeks on demand and says so, as on Bedrock. @default 100
   * (Bedrock's default quota, models/bedrock/batch-records.ts)
   */
  minRecords?: number;
  /** Most records of one job (a round with more is split into parts). @default 50,000 */
  maxRecords?: number;
  /** Model time one status read may spend on records, ms (at least one record is run). @default 2000 */
  sliceMs?: number;
  /** Attempts of a record failed by a transient model error before it is written as failed. @default 3 */
  attempts?: number;
}

interface LocalJob {
  name: string;
  modelId: string;
  records: number;
}

/** Runs batch jobs through a local chat model, a slice at each status read. */
export class LocalBatchRunner implements BatchInference {
  /** The local runner needs no wait between reads: each read does work. */
  readonly pollSeconds = 0;
  private readonly attemptsLeft = new Map<string, number>();

  /**
   * @param blobs the local bucket.
   * @param chat the seeking model the records run through (built, and its model loaded, on first use).
   */
  constructor(
    private readonly blobs: BlobStore,
    private readonly chat: () => Promise<ChatModel>,
    private readonly options: LocalBatchOptions = {},
  ) {}

  limits(): { minRecords: number; maxRecords: number } {
    return { minRecords: this.options.minRecords ?? 100, maxRecords: this.options.maxRecords ?? 50_000 };
  }

  async submit(job: { name: string; modelId: string; prefix: string; records: BatchRecord[] }): Promise<string> {
    const jobKey = `${job.prefix}job.json`;
    // Idempotent per name: a job already submitted (a resumed run) is the job.
    if (await this.blobs.exists(jobKey)) return `local:${(JSON.parse(await this.blobs.getText(jobKey)) as LocalJob).name}`;
    await this.blobs.put(`${job.prefix}input/records.jsonl`, `${job.records.map((r) => JSON.stringify(r)).join('\n')}\n`, 'application/jsonl');
    const record: LocalJob = { name: job.name, modelId: job.modelId, records: job.records.length };
    await this.blobs.put(jobKey, JSON.stringify(record), 'application/json');
    return `local:${job.name}`;
  }

  async status(job: BatchJobRef): Promise<BatchJobStatus> {
    const records = await this.inputOf(job);
    const output = await this.outputLines(job);
    // A line cut short (a write torn by a kill) still names its record: done, as a failure results() reports.
    const done = new Set(output.map(namedRecordId).filter((id): id is string => id !== undefined));
    const pending = records.filter((r) => !done.has(r.recordId));
    const started = performance.now();
    const sliceMs = this.options.sliceMs ?? 2000;
    let ran = 0;
    for (const record of pending) {
      if (ran > 0 && performance.now() - started >= sliceMs) break;
      ran += 1;
      const line = await this.run(record);
      if (line === undefined) continue; // a transient failure: tried again at the next read
      output.push(line);
      await this.blobs.put(outputKey(job), `${output.join('\n')}\n`, 'application/jsonl');
    }
    const ended = output.length >= records.length;
    return { state: ended ? 'ended' : 'in-progress', serviceStatus: ended ? 'Completed' : 'InProgress' };
  }

  async results(job: BatchJobRef, _requests?: ReadonlyMap<string, ChatRequest>): Promise<Map<string, BatchRecordResult>> {
    const results = new Map<string, BatchRecordResult>();
    for (const line of await this.outputLines(job)) {
      let result: BatchRecordResult | undefined;
      try {
        result = JSON.parse(line) as BatchRecordResult;
      } catch (error) {
        // That record failed, with its cause; its chunk is sought on demand (shared/batch-output.ts).
        result = malformedBatchOutput(line, (error as Error).message);
      }
      if (result !== undefined) results.set(result.recordId, result);
    }
    return results;
  }

  /** One record through the model: its output line, or undefined after a transient error with attempts left. */
  private async run(record: BatchRecord): Promise<string | undefined> {
    try {
      return JSON.stringify({ recordId: record.recordId, response: await (await this.chat()).complete(record.request) });
    } catch (error) {
      const name = error instanceof Error ? error.name : 'Error';
      const message = error instanceof Error ? error.message : String(error);
      if ((RETRYABLE_ERRORS as readonly string[]).includes(name)) {
        const left = (this.attemptsLeft.get(record.recordId) ?? this.options.attempts ?? 3) - 1;
        this.attemptsLeft.set(record.recordId, left);
        if (left > 0) return undefined;
      }
      return JSON.stringify({ recordId: record.recordId, error: { code: name, message } });
    }
  }

  private async inputOf(job: BatchJobRef): Promise<BatchRecord[]> {
    try {
      const text = await this.blobs.getText(`${job.prefix}input/records.jsonl`);
      return text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as BatchRecord);
    } catch (error) {
      if (error instanceof NotFoundError)
        throw new NotFoundError(`local batch job ${job.jobId}: its records (${job.prefix}input/records.jsonl) are missing`, { cause: error });
      throw error;
    }
  }

  private async outputLines(job: BatchJobRef): Promise<string[]> {
    if (!(await this.blobs.exists(outputKey(job)))) return [];
    return (await this.blobs.getText(outputKey(job))).split('\n').filter((line) => line.trim() !== '');
  }
}

const outputKey = (job: BatchJobRef): string => `${job.prefix}output/records.jsonl.out`;
