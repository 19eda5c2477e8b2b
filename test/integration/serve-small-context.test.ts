/**
 * `extagents serve` with a small-context model (issue 24, defect 1): a run posted without
 * `chunkTokens` gets the context-fitted defaults `ask` gets (contextFittedRunOptionDefaults) and
 * succeeds; an explicit `chunkTokens` the context cannot hold is a 422 at `POST /v1/runs`, naming the
 * API option, before any run starts. The model is the extractive reader standing in for a `llama:`
 * model of a 2,048-token context (`modelContextTokens`), so no model file is needed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ExtractiveReader } from '../../shared/extractive/reader';
import { ProblemSchema, RunStatusSchema } from '../../shared/api/schemas';
import { runRecordKey } from '../../shared/pipeline/layout';
import { startServer, type LocalApiServer } from '../../local/services/serve';
import { contextFittedRunOptionDefaults, largestChunkTokens } from '../../models/context';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../shared/llm/agents';

jest.setTimeout(120_000);

const TOKEN = 'small-context-token-0123456789abcdef';
const CONTEXT = 2048;

let dir: string;
let server: LocalApiServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-small-'));
  server = await startServer({
    stateDir: path.join(dir, 'state'),
    port: 0,
    token: TOKEN,
    retryIntervalMs: 1,
    model: new ExtractiveReader(),
    modelContextTokens: CONTEXT,
  });
  await server.stack.blobs.put('corpora/town/town.txt', 'Millbrook was founded in 1842. Its library opened in 1903; the first librarian was Edward Pike.\n');
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function post(json: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
  });
  return { status: response.status, body: JSON.parse(await response.text()) as unknown };
}

async function finished(runId: string): Promise<ReturnType<typeof RunStatusSchema.parse>> {
  for (;;) {
    const response = await fetch(`${server.url}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const status = RunStatusSchema.parse(await response.json());
    if (status.status !== 'RUNNING') return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('serve with a small-context model', () => {
  it('gives a run posted without chunkTokens the context-fitted defaults, and it succeeds', async () => {
    const created = await post({ question: 'When did the library of Millbrook open?', corpus: { id: 'town' } });
    expect(created.status).toBe(202);
    const runId = (created.body as { runId: string }).runId;
    const run = await finished(runId);
    expect(run.error).toBeUndefined();
    expect(run.status).toBe('SUCCEEDED');
    const record = JSON.parse(await server.stack.blobs.getText(runRecordKey(runId))) as { options: Record<string, unknown> };
    // 40% of 2,048 tokens (819) would not fit the seeking prompt: the default is the largest chunk that does.
    expect(record.options).toMatchObject(contextFittedRunOptionDefaults(CONTEXT));
    expect(record.options.chunkTokens).toBe(largestChunkTokens(CONTEXT, DEFAULT_MAX_OUTPUT_TOKENS.seek));
  });

  it('gives the defaults to what a run posted with other options leaves unset, as the page posts them (issue 51, item 16)', async () => {
    // The page always sends an options object; the request schema fills every default into it
    // (chunkTokens 8,000), which must not stand in for the model's own.
    for (const options of [{}, { rounds: 1, bestEffort: true }]) {
      const created = await post({ question: 'When did the library of Millbrook open?', corpus: { id: 'town' }, options });
      expect(created.status).toBe(202);
      const runId = (created.body as { runId: string }).runId;
      expect((await finished(runId)).status).toBe('SUCCEEDED');
      const record = JSON.parse(await server.stack.blobs.getText(runRecordKey(runId))) as { options: Record<string, unknown> };
      expect(record.options).toMatchObject({ ...contextFittedRunOptionDefaults(CONTEXT), ...options });
    }
  });

  it('refuses an explicit chunkTokens the context cannot hold with 422 before the run starts', async () => {
    const before = server.launcher.started;
    const refused = await post({ question: 'When did the library of Millbrook open?', corpus: { id: 'town' }, options: { chunkTokens: 8000 } });
    expect(refused.status).toBe(422);
    const problem = ProblemSchema.parse(refused.body);
    expect(problem.type).toBe('tag:extagents,2026:options-unfit-for-model');
    expect(problem.errors).toEqual([
      {
        pointer: '/options/chunkTokens',
        detail: expect.stringMatching(/^chunks of 8000 tokens do not fit the model's context of 2048 tokens .*use options\.chunkTokens \d+ or less/),
      },
    ]);
    expect(problem.detail).not.toContain('--chunk-tokens');
    expect(server.launcher.started).toBe(before);
  });
});
