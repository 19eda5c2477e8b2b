/**
 * Payload limits: Step Functions caps every state's input and output (and a Lambda's response) at
 * 256 KiB. A 100,000-chunk run must stay far below it: only ids, keys and counts travel in the
 * state, and the Distributed Map writes its item results to S3 (ResultWriter) instead of returning
 * them. Checked two ways:
 * - the synthesized definition, run by the local engine over a 100,000-item manifest, with stand-in
 *   handlers that return the real output shapes (validated by the real schemas), every payload in
 *   and out measured;
 * - the real handlers of lambdas/handlers.ts, whose outputs do not grow with the chunk count.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { HANDLER_NAMES, type HandlerName } from '../../infra/extagents-function';
import { buildStack, createSynthesisApp } from '../../infra/extagents-stack';
import { resolveStateMachineDefinition, type AslDefinition } from '../../local/engine/definition';
import type { MapRunManifest } from '../../local/engine/distributed-map';
import { MAX_PAYLOAD_BYTES, runLocalExecution, type LocalLambdaHandler } from '../../local/engine/engine';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { startLocalStack } from '../../local/engine/stack';
import { manifestKey, runRecordKey } from '../../shared/pipeline/layout';
import type { RunRecord } from '../../shared/pipeline/run-record';
import {
  ReasonEventSchema,
  SeekEventSchema,
  WorkflowStateSchema,
  parseEvent,
  type FinalizeOutput,
  type SeekOutcome,
  type WorkflowState,
} from '../../shared/pipeline/state';
import { scriptedModel, writeCorpus, hundredNotes } from '../support/corpus';

jest.setTimeout(180_000);

const CHUNKS = 100_000;
const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value ?? null));

describe('payloads of a 100,000-chunk run', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-payload-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every state, Map result and Lambda payload of the synthesized workflow under 256 KiB', async () => {
    // Arrange: the real definition; stand-ins with the real shapes; every payload measured
    const stack = buildStack(createSynthesisApp(), { modelSpec: 'extractive' });
    const template = Template.fromStack(stack).toJSON();
    const resolved = resolveStateMachineDefinition(template, stack.getLogicalId(stack.stateMachine.node.defaultChild as sfn.CfnStateMachine));
    const definition: AslDefinition = resolved.definition;
    const arnOf = (name: HandlerName): string => resolved.lambdaArns[stack.getLogicalId(stack.functions[name].node.defaultChild as CfnFunction)];
    const blobStore = new FsBlobStore(path.join(dir, 'bucket'));
    const largest: Record<string, number> = {};
    const seen = new Set<number>();
    const measured =
      (name: string, handler: (event: unknown) => Promise<unknown>): LocalLambdaHandler =>
      async (event) => {
        const output = await handler(event);
        largest[`${name} input`] = Math.max(largest[`${name} input`] ?? 0, bytes(event));
        largest[`${name} output`] = Math.max(largest[`${name} output`] ?? 0, bytes(output));
        return output;
      };
    const state = (runId: string): WorkflowState => ({
      runId,
      manifestKey: manifestKey(runId),
      chunks: CHUNKS,
      covered: CHUNKS,
      round: 1,
      k: 1,
      seq: 0,
      outcome: null,
      exhausted: false,
      poolSize: 0,
      config: {
        rounds: 2,
        concurrency: 1000,
        toleratedFailurePercentage: 5,
        bestEffort: false,
        pipelineRounds: false,
        coverageCap: CHUNKS,
        karFirstK: 1,
        seekMode: 'on-demand' as const,
      },
    });
    const handlers: Record<string, LocalLambdaHandler> = {
      [arnOf('prepare')]: measured('Prepare', async (event) => {
        const { runId } = event as { runId: string };
        await blobStore.put(manifestKey(runId), JSON.stringify(Array.from({ length: CHUNKS }, (_, chunk) => ({ chunk }))));
        return WorkflowStateSchema.parse(state(runId));
      }),
      [arnOf('seek')]: measured('Seek', async (event) => {
        const { chunk } = parseEvent(SeekEventSchema, event, 'Seek');
        seen.add(chunk);
        const outcome: SeekOutcome = { chunk, outcome: chunk % 1000 === 0 ? 'message' : 'none' };
        return outcome;
      }),
      [arnOf('reason')]: measured('Reason', async (event) => {
        const { state: current } = parseEvent(ReasonEventSchema, event, 'Reason');
        return WorkflowStateSchema.parse({ ...current, seq: current.seq + 1, outcome: 'answered', poolSize: CHUNKS / 1000 });
      }),
      [arnOf('synchronize')]: measured('Synchronize', async (event) => event),
      [arnOf('finalize')]: measured('Finalize', async (event) => {
        const { runId } = parseEvent(WorkflowStateSchema, event, 'Finalize');
        const output: FinalizeOutput = { runId, answerable: true, resultKey: `runs/${runId}/result.json` };
        return output;
      }),
    };
    expect(new Set(HANDLER_NAMES.map(arnOf)).size).toBe(5);

    // Act
    const output = await runLocalExecution({
      definition,
      handlers,
      blobStore,
      input: { runId: 'big', question: 'q?', corpus: { prefix: 'corpora/big/' } },
      retryIntervalMs: 0,
    });

    // Assert: all items ran, results went to S3, every payload small
    expect(output).toEqual({ runId: 'big', answerable: true, resultKey: 'runs/big/result.json' });
    expect(seen.size).toBe(CHUNKS);
    const manifests = (await blobStore.list('runs/big/map/')).filter((o) => o.key.endsWith('/manifest.json'));
    expect(manifests).toHaveLength(1);
    const manifest = JSON.parse(await blobStore.getText(manifests[0].key)) as MapRunManifest;
    expect(manifest.ResultFiles.SUCCEEDED.length).toBe(CHUNKS / 1000); // 1,000 results per file
    expect(Math.max(...Object.values(largest))).toBeLessThan(MAX_PAYLOAD_BYTES / 100); // under 2.6 KB: far below the limit
    expect(largest['Reason input']).toBeLessThan(1024); // the state after SeekChunks: the Map result is not in it
    expect(bytes(output)).toBeLessThan(1024);
  });

  it('has handlers whose outputs do not grow with the number of chunks', async () => {
    // Arrange: the real handlers on a real 100-chunk run, then the same run record claiming 100,000 chunks
    const stack = await startLocalStack({ stateDir: path.join(dir, 'state'), model: scriptedModel() });
    try {
      const corpus = writeCorpus(dir, hundredNotes());
      const files = Object.keys(hundredNotes());
      for (const name of files) await stack.blobs.put(`corpora/p/${name}`, readFileSync(path.join(corpus, name)));
      const prepared = await stack.handlers.prepare({
        runId: 'p',
        question: 'What is the answer?',
        corpus: { prefix: 'corpora/p/' },
        options: { chunkTokens: 64, rounds: 1 },
      });
      expect(prepared.chunks).toBe(100);
      const outputs = async (state: WorkflowState): Promise<number[]> => {
        const seek = await stack.handlers.seek({ runId: state.runId, round: 1, chunk: 99 });
        const reasoned = await stack.handlers.reason({ state, force: false });
        const synchronized = await stack.handlers.synchronize({ ...reasoned, config: { ...reasoned.config, rounds: 2 } });
        const finalized = await stack.handlers.finalize(reasoned);
        return [bytes(state), bytes(seek), bytes(reasoned), bytes(synchronized), bytes(finalized)];
      };
      const small = await outputs(prepared);
      // Claim 100,000 chunks: Finalize then lists 99,999 chunks as failed, in the result object in S3.
      // (The record names the chunk cache entry the run reads in place, so 'q' reads p's chunks.)
      const record = JSON.parse(await stack.blobs.getText(runRecordKey('p'))) as RunRecord;
      await stack.blobs.put(runRecordKey('q'), JSON.stringify({ ...record, runId: 'q', chunks: CHUNKS }));
      const big = { ...prepared, runId: 'q', manifestKey: manifestKey('q'), chunks: CHUNKS };

      // Act
      const large = await outputs(big);

      // Assert: the same sizes, up to the extra digits of the counts
      large.forEach((size, i) => expect(size - small[i]).toBeLessThanOrEqual(8));
      expect(Math.max(...large)).toBeLessThan(1024);
      const result = JSON.parse(await stack.blobs.getText('runs/q/result.json')) as { chunkFailures: unknown[] };
      expect(result.chunkFailures.length).toBe(CHUNKS - 1); // the large list lives in S3, not in any payload
    } finally {
      await stack.stop();
    }
  });
});
