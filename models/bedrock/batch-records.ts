/**
 * Bedrock batch inference records (the Converse format): a seeking agent's first call as one JSONL
 * input record, and an output record back as the port's `ChatResponse` (or the service's error), by
 * the same mapping as an on-demand Converse call (models/bedrock/bedrock.ts `converseInput`,
 * `converseResponse`). No SDK client here: lambdas/adapters/bedrock-batch.ts writes and reads the
 * files and drives the jobs.
 * Sources: https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html (record
 * format), https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference.html (Converse
 * records take no toolConfig).
 */
import type { BatchRecord, BatchRecordResult, ChatRequest } from '../../shared/ports';
import { malformedBatchOutput } from '../../shared/batch-output';
import { converseInput, converseResponse, type ConverseReply } from './bedrock';

/**
 * Records one Bedrock batch job takes, by default: the service quotas "Minimum number of records per
 * batch inference job" (100) and "Records per batch inference job" (50,000) of the quotas page
 * (adjustable per account and model; a deployment may state its own, CDK context).
 * Source: https://docs.aws.amazon.com/general/latest/gr/bedrock.html#limits_bedrock
 */
export const BEDROCK_BATCH_RECORDS = { minRecords: 100, maxRecords: 50_000 } as const;

/** One input line: `{"recordId": …, "modelInput": <Converse request body>}` (no tool: see the module doc). */
export function batchInputLine(record: BatchRecord, modelId: string): string {
  return JSON.stringify({ recordId: record.recordId, modelInput: converseInput(modelId, record.request, { tool: false }) });
}

/**
 * One output line as the port's record result. The service writes `{recordId, modelInput,
 * modelOutput}` for an answered record and `{recordId, modelInput, error: {errorCode, errorMessage}}`
 * for a failed one.
 * @param requests the job's requests by record id: a reply is read against its own request.
 * @returns undefined for a line that names no record of the job (counted by the caller, never silent).
 */
export function batchOutputRecord(line: string, requests: ReadonlyMap<string, ChatRequest>, modelId: string): BatchRecordResult | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    // A damaged line still names its record: that record failed, with the cause (shared/batch-output.ts).
    const failed = malformedBatchOutput(line, (error as Error).message);
    return failed !== undefined && requests.has(failed.recordId) ? failed : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as { recordId?: unknown; modelOutput?: unknown; error?: { errorCode?: unknown; errorMessage?: unknown } };
  if (typeof record.recordId !== 'string') return undefined;
  const request = requests.get(record.recordId);
  if (request === undefined) return undefined;
  const recordId = record.recordId;
  if (record.error !== undefined || typeof record.modelOutput !== 'object' || record.modelOutput === null) {
    const code = record.error?.errorCode === undefined ? 'NoModelOutput' : String(record.error.errorCode);
    const message = typeof record.error?.errorMessage === 'string' ? record.error.errorMessage : 'the output record holds no modelOutput';
    return { recordId, error: { code, message } };
  }
  try {
    return { recordId, response: converseResponse(record.modelOutput as ConverseReply, request, { modelId, tool: false }) };
  } catch (error) {
    // model_context_window_exceeded: the record failed as an on-demand call would.
    return { recordId, error: { code: (error as Error).name, message: (error as Error).message } };
  }
}
