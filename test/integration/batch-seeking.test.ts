/**
 * Batch seeking (run option seekMode 'batch'; shared/pipeline/seek-batch.ts) through the local
 * workflow: each round's seeking agents as a batch job of the local batch runner
 * (local/engine/local-batch.ts), read back by the same seeking agent as on-demand replies. The same
 * scripted chat model answers both ways, so the messages must match the on-demand run's exactly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { formatBatch, formatResult } from '../../local/cli/format';
import { resolveCorpus } from '../../local/engine/corpus';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { runLocal } from '../../local/engine/run';
import { startLocalStack } from '../../local/engine/stack';
import { batchRoundKey, type BatchRoundRecord } from '../../shared/pipeline/seek-batch';
import type { RunProgressEvent } from '../../shared/progress';
import type { RunResult } from '../../shared/types';
import { writeCorpus } from '../support/corpus';
import { TWO_HOP_OPTIONS, TWO_HOP_QUESTION, twoHopChatModel, twoHopCorpus } from '../support/two-hop';

describe('batch seeking in a local run', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-batch-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (
    name: string,
    seekMode: 'on-demand' | 'batch',
    scripted: ReturnType<typeof twoHopChatModel>,
    extra: { minRecords?: number; signal?: AbortSignal; onProgress?: (e: RunProgressEvent) => void } = {},
  ): Promise<RunResult> =>
    runLocal({
      files: await resolveCorpus([writeCorpus(path.join(dir, 'corpus'), twoHopCorpus())]),
      question: TWO_HOP_QUESTION,
      options: { ...TWO_HOP_OPTIONS, seekMode },
      stateDir: path.join(dir, name),
      runId: name,
      model: scripted.agents(),
      batch: { minRecords: extra.minRecords ?? 4, seekerChat: scripted.chat, agents: scripted.agents },
      retryIntervalMs: 0,
      ...(extra.signal && { signal: extra.signal }),
      ...(extra.onProgress && { onProgress: extra.onProgress }),
    });

  const roundRecord = async (name: string, round: number): Promise<BatchRoundRecord> =>
    JSON.parse(await new FsBlobStore(path.join(dir, name, 'bucket')).getText(batchRoundKey(name, round))) as BatchRoundRecord;

  const pool = async (name: string) => {
    const stack = await startLocalStack({ stateDir: path.join(dir, name), persistent: true });
    try {
      return await stack.store.topK(name, 99, 99);
    } finally {
      await stack.stop();
    }
  };

  it('seeks each round as one batch job and records the same messages and answer as on demand', async () => {
    const onDemandModel = twoHopChatModel();
    const batchModel = twoHopChatModel();

    const onDemand = await run('od', 'on-demand', onDemandModel);
    const batch = await run('b', 'batch', batchModel);

    // The answer needs round 2 (synchronization): both runs give it, from the same messages
    expect(batch.answer).toBe('Fredville');
    expect(batch.answer).toBe(onDemand.answer);
    expect(batch.citations).toEqual(onDemand.citations);
    expect(batch.trace).toEqual(onDemand.trace);
    expect(await pool('b')).toEqual(await pool('od'));
    // Each chunk's seeking agent was asked once per round either way (the batch runner's call, not a capture)
    expect(batchModel.calls.sort()).toEqual(onDemandModel.calls.sort());
    expect(batch.usage.seeker.calls).toBe(onDemand.usage.seeker.calls);
    // Both rounds ran as one batch job of 7 records (one per chunk), every record read back
    for (const round of [1, 2]) {
      const record = await roundRecord('b', round);
      expect(record).toMatchObject({ mode: 'batch', records: 7, collected: { recorded: 7, failedRecords: 0, missingRecords: 0 } });
      expect(record.jobs).toHaveLength(1);
    }
    expect(batch.batch?.rounds.map((r) => [r.round, r.mode, r.jobs.map((j) => j.status), r.recorded])).toEqual([
      [1, 'batch', ['Completed'], 7],
      [2, 'batch', ['Completed'], 7],
    ]);
    expect(onDemand.batch).toBeUndefined();
    // The text output says what ran as batch (issue 51, item 7).
    expect(formatBatch(batch.batch!)).toEqual([
      'Batch seeking, round 1: 7 records in 1 job (Completed); 7 read back',
      'Batch seeking, round 2: 7 records in 1 job (Completed); 7 read back',
    ]);
    expect(formatResult(batch)).toContain('Batch seeking, round 1: 7 records in 1 job (Completed); 7 read back');
  });

  it('seeks on demand, and says why, when a round has fewer chunks than a batch job takes', async () => {
    const scripted = twoHopChatModel();
    const infos: string[] = [];
    const result = await run('small', 'batch', scripted, { minRecords: 100, onProgress: (e) => e.type === 'info' && infos.push(e.message) });

    expect(result.answer).toBe('Fredville');
    const record = await roundRecord('small', 1);
    expect(record.mode).toBe('on-demand');
    expect(record.reason).toBe('7 chunk(s) to seek, below the 100 records a batch job of two-hop-chat needs at least');
    expect(record.jobs).toEqual([]);
    expect(result.batch?.rounds[0]).toEqual({ round: 1, mode: 'on-demand', reason: record.reason, jobs: [], records: 0 });
    expect(formatResult(result)).toContain(`Batch seeking, round 1: sought on demand (${record.reason})`);
    // The progress says why as it happens (issue 51, item 7), not "the result says why".
    expect(infos).toContain(`round 1: sought on demand: ${record.reason}; 7 chunk(s) left for on-demand seeking`);
  });

  it('records a failed batch record as the chunk failure and seeks that chunk on demand', async () => {
    const scripted = twoHopChatModel({ failOnce: 'Ada Quill' });
    const result = await run('failed', 'batch', scripted);

    expect(result.answer).toBe('Fredville');
    expect(result.chunkFailures).toEqual([]);
    expect((await roundRecord('failed', 1)).collected).toEqual({ recorded: 6, failedRecords: 1, missingRecords: 0 });
    expect(formatResult(result)).toContain('Batch seeking, round 1: 7 records in 1 job (Completed); 6 read back, 1 failed record sought on demand');
    // The birth note's chunk: the failed record, then its on-demand seek
    expect(scripted.calls.filter((c) => c.startsWith('Note 2.'))).toHaveLength(3); // round 1 twice, round 2 once
  });

  it('resumes a run stopped while its batch job waits without submitting or running a record twice', async () => {
    const scripted = twoHopChatModel();
    const stop = new AbortController();
    await expect(
      run('resumed', 'batch', scripted, {
        signal: stop.signal,
        onProgress: (e) => {
          if (e.type === 'info' && e.message.includes('submitted as batch records')) stop.abort();
        },
      }),
    ).rejects.toThrow();
    const submitted = await roundRecord('resumed', 1);
    expect(submitted.jobs).toHaveLength(1);

    const result = await run('resumed', 'batch', scripted);

    expect(result.answer).toBe('Fredville');
    expect((await roundRecord('resumed', 1)).jobs).toEqual(submitted.jobs.map((job) => expect.objectContaining({ jobId: job.jobId })));
    // 7 chunks in each of 2 rounds: 14 seeker calls in all, none twice
    expect(scripted.calls).toHaveLength(14);
  });
});
