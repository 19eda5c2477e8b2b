/**
 * `BatchInference` on Amazon Bedrock (shared/ports.ts): a job's records as one JSONL file in the
 * project bucket, one model invocation job (CreateModelInvocationJob, the Converse record format),
 * its status (GetModelInvocationJob), and its output file read back by the same mapping as an
 * on-demand Converse reply (models/bedrock/batch-records.ts).
 *
 * Idempotence: the job's `clientRequestToken` is derived from its name (run, round, part), so a
 * resumed run or a retried task that submits again gets the first job back instead of paying for
 * the records twice ("If this token matches a previous request, Amazon Bedrock ignores the request").
 * Sources: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_CreateModelInvocationJob.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html (output files).
 */
import { createHash } from 'node:crypto';
import { BedrockClient, CreateModelInvocationJobCommand, GetModelInvocationJobCommand } from '@aws-sdk/client-bedrock';
import type { BatchInference, BatchJobRef, BatchJobStatus, BatchRecord, BatchRecordResult, BlobStore, ChatRequest } from '../../shared/ports';
import { mapBedrockError } from '../../models/bedrock/bedrock';
import { BEDROCK_BATCH_RECORDS, batchInputLine, batchOutputRecord } from '../../models/bedrock/batch-records';

/** Bedrock job statuses that end a job (the others are Submitted, Validating, Scheduled, InProgress, Stopping). */
const ENDED = new Set(['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired']);

/** Settings of {@link BedrockBatchInference}. */
export interface BedrockBatchSettings {
  /** The project bucket, where the records and the output are written (`runs/<runId>/batch/…`). */
  bucket: string;
  /** The batch service role Bedrock assumes to read the input and write the output (infra/grants.ts). */
  roleArn: string;
  /** Hours before Bedrock stops an unfinished job (24 to 168; the service's default is 168). @default 24 */
  timeoutHours?: number;
  /** Seconds between two status reads (the workflow's Wait). @default 300 */
  pollSeconds?: number;
  /** Records per job, when the account's quotas differ from the defaults. @default BEDROCK_BATCH_RECORDS */
  records?: { minRecords: number; maxRecords: number };
  /**
   * Where output lines the job's records cannot be matched to are reported (a line that is not JSON,
   * or names no record of the job): one warning per output file with the count. Their records stay
   * absent from the results (the workflow counts them missing and seeks them on demand).
   * @default none (the lines are skipped without a report)
   */
  logger?: { warn(message: string, ...extra: Array<Record<string, unknown>>): void };
}

/** Bedrock batch inference over the project bucket. */
export class BedrockBatchInference implements BatchInference {
  readonly pollSeconds: number;

  constructor(
    private readonly client: BedrockClient,
    private readonly blobs: BlobStore,
    private readonly settings: BedrockBatchSettings,
  ) {
    this.pollSeconds = settings.pollSeconds ?? 300;
  }

  limits(modelId: string): { minRecords: number; maxRecords: number } | { unavailable: string } {
    if (modelId.startsWith('arn:') && modelId.includes(':provisioned-model/')) {
      return { unavailable: 'batch inference is not supported for provisioned models' };
    }
    return this.settings.records ?? BEDROCK_BATCH_RECORDS;
  }

  async submit(job: { name: string; modelId: string; prefix: string; records: BatchRecord[] }): Promise<string> {
    const inputKey = `${job.prefix}input/records.jsonl`;
    await this.blobs.put(inputKey, `${job.records.map((r) => batchInputLine(r, job.modelId)).join('\n')}\n`, 'application/jsonl');
    try {
      const out = await this.client.send(
        new CreateModelInvocationJobCommand({
          jobName: job.name,
          clientRequestToken: createHash('sha256').update(job.name).digest('hex'),
          modelId: job.modelId,
          roleArn: this.settings.roleArn,
          inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${this.settings.bucket}/${inputKey}`, s3InputFormat: 'JSONL' } },
          outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${this.settings.bucket}/${job.prefix}output/` } },
          timeoutDurationInHours: this.settings.timeoutHours ?? 24,
        }),
      );
      if (out.jobArn === undefined) throw new Error(`CreateModelInvocationJob returned no jobArn for ${job.name}`);
      return out.jobArn;
    } catch (error) {
      throw mapBedrockError(error, job.modelId);
    }
  }

  async status(job: BatchJobRef): Promise<BatchJobStatus> {
    let out;
    try {
      out = await this.client.send(new GetModelInvocationJobCommand({ jobIdentifier: job.jobId }));
    } catch (error) {
      throw mapBedrockError(error, job.jobId);
    }
    const serviceStatus = out.status ?? 'Unknown';
    return { state: ENDED.has(serviceStatus) ? 'ended' : 'in-progress', serviceStatus, ...(out.message ? { message: out.message } : {}) };
  }

  async results(job: BatchJobRef, requests: ReadonlyMap<string, ChatRequest>): Promise<Map<string, BatchRecordResult>> {
    const { prefix, modelId } = job;
    const results = new Map<string, BatchRecordResult>();
    // Bedrock writes `<output prefix><job id>/records.jsonl.out` (and a manifest.json.out, not read).
    for (const { key } of await this.blobs.list(`${prefix}output/`)) {
      if (!key.endsWith('.jsonl.out')) continue;
      let skipped = 0;
      for (const line of (await this.blobs.getText(key)).split('\n')) {
        if (line.trim() === '') continue;
        const result = batchOutputRecord(line, requests, modelId);
        if (result === undefined) skipped += 1;
        else results.set(result.recordId, result);
      }
      if (skipped > 0) {
        this.settings.logger?.warn('Batch output lines skipped: not JSON, or naming no record of the job (those records are sought on demand)', {
          jobId: job.jobId,
          key,
          skipped,
        });
      }
    }
    return results;
  }
}
