/**
 * A run the CLI made without `--run-id` (its seeking counts and KAR steps kept in memory only), as
 * `serve` shows it afterwards (issue 51, item 17): its progress comes from its result — every round
 * sought, its KAR steps — not "0 / 5 chunks" beside a finished answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import { startServer } from '../../local/services/serve';
import { RunStatusSchema } from '../../shared/api/schemas';
import { hundredNotes, writeCorpus } from '../support/corpus';

jest.setTimeout(60_000);

const TOKEN = 'serve-cli-run-token-0123456789abcdef';

it("shows a CLI run's progress from its result when the store kept none of it", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'extagents-cli-run-'));
  const stateDir = path.join(dir, 'state');
  try {
    const result = await runLocal({
      files: await resolveCorpus([writeCorpus(path.join(dir, 'corpus'), hundredNotes(5))]),
      question: 'What is the answer?',
      options: { chunkTokens: 64, rounds: 1 },
      stateDir,
    });
    const server = await startServer({ stateDir, port: 0, token: TOKEN, retryIntervalMs: 1 });
    try {
      const response = await fetch(`${server.url}/v1/runs/${result.runId}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const status = RunStatusSchema.parse(await response.json());
      expect(status.status).toBe('SUCCEEDED');
      expect(status.progress.rounds).toEqual([{ round: 1, sought: result.chunks, total: result.chunks }]);
      expect(status.progress.karSteps.map((s) => s.outcome)).toEqual(result.trace.map((s) => s.outcome));
      expect(status.progress.karSteps.length).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
