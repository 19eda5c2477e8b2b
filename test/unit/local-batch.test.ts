/**
 * The local batch runner (local/engine/local-batch.ts) reading a job output it did not write whole
 * (issue 51, item 6): a damaged line is the failure of the record it names, with the cause, so
 * `status` and `results` never throw on it and the chunk is sought on demand (shared/pipeline/seek-batch.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { LocalBatchRunner } from '../../local/engine/local-batch';
import type { BatchRecord, ChatModel, ChatRequest } from '../../shared/ports';

let root: string;
let blobs: FsBlobStore;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'local-batch-'));
  blobs = new FsBlobStore(root);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const PREFIX = 'runs/run-1/batch/r1/p0/';
const request = (text: string): ChatRequest => ({ role: 'seeker', system: 'Seek.', messages: [{ role: 'user', text }], maxTokens: 50, temperature: 0 });
const records: BatchRecord[] = [0, 1, 2].map((i) => ({ recordId: `C000000000${i}`, request: request(`chunk ${i}`) }));

describe('a local batch job whose output holds a damaged line', () => {
  it('reads it as the failure of the record it names and runs no record twice', async () => {
    // Arrange: a job whose output has record 0 whole and record 1 torn (a kill mid-write).
    const calls: string[] = [];
    const chat: ChatModel = {
      modelId: 'scripted',
      complete: async (r) => {
        calls.push(r.messages[0].text);
        return { text: 'ok', stopReason: 'end_turn', inputTokens: 1, outputTokens: 1 };
      },
    };
    const runner = new LocalBatchRunner(blobs, async () => chat, { minRecords: 1 });
    const jobId = await runner.submit({ name: 'job', modelId: 'scripted', prefix: PREFIX, records });
    const job = { jobId, prefix: PREFIX, modelId: 'scripted' };
    const whole = JSON.stringify({ recordId: 'C0000000000', response: { text: 'ok', stopReason: 'end_turn', inputTokens: 1, outputTokens: 1 } });
    await blobs.put(`${PREFIX}output/records.jsonl.out`, `${whole}\n{"recordId":"C0000000001","response":{"te\n`);

    // Act: the job runs what is left (record 2 only), then its output is read.
    let status = await runner.status(job);
    while (status.state !== 'ended') status = await runner.status(job);
    const results = await runner.results(job);

    // Assert
    expect(calls).toEqual(['chunk 2']);
    expect(results.get('C0000000000')).toHaveProperty('response');
    expect(results.get('C0000000001')).toEqual({
      recordId: 'C0000000001',
      error: { code: 'MalformedBatchOutput', message: expect.stringMatching(/^its output line could not be read \(.*\): "\{\\"recordId\\":\\"C0000000001/) },
    });
    expect(results.get('C0000000002')).toHaveProperty('response');
  });
});
