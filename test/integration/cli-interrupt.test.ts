/**
 * Ctrl-C (SIGINT) and SIGTERM during `extagents ask` (issue 24, defect 10): one line naming the run
 * to resume, `extagents: interrupted; rerun with --run-id <id> to resume`, exit 130 (SIGTERM: 143);
 * with `--json`, one JSON error line. The CLI runs in a child process against an OpenAI-compatible
 * server that never answers, so the run is in the middle of its seeking when the signal comes.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeCorpus } from '../support/corpus';

jest.setTimeout(120_000);

let dir: string;
let server: Server;
let baseUrl: string;
let onRequest: () => void = () => undefined;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-interrupt-'));
  // Every chat completion hangs (the response is never written).
  server = createServer(() => onRequest());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** Run `ask` until its first model call, send `signal`, and collect what it wrote and its exit. */
async function interruptedAsk(
  args: string[],
  signal: NodeJS.Signals,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string }> {
  const corpus = writeCorpus(dir, { 'town.txt': 'Millbrook was founded in 1842. Its library opened in 1903.' });
  const child = spawn(
    process.execPath,
    [
      path.join(__dirname, '..', '..', 'bin', 'extagents'),
      'ask',
      '-c',
      corpus,
      '-q',
      'When did the library open?',
      '--model',
      'openai:m',
      '--state-dir',
      path.join(dir, 'state'),
      '--no-progress',
      ...args,
    ],
    {
      env: { ...process.env, OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'x' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, sig) => resolve({ code, signal: sig })),
  );
  await new Promise<void>((resolve) => (onRequest = resolve));
  onRequest = () => undefined;
  child.kill(signal);
  return { ...(await exited), stderr, stdout };
}

describe('ask interrupted', () => {
  it('Ctrl-C: one line naming the run id to resume with, exit 130', async () => {
    const out = await interruptedAsk(['--run-id', 'cut-1'], 'SIGINT');
    expect(out.code).toBe(130);
    expect(out.stderr).toMatch(/^extagents: interrupted; rerun with --run-id cut-1 to resume$/m);
    expect(out.stdout).toBe('');
  });

  it('--json: one JSON error line naming the generated run id, which kept nothing to resume; SIGTERM exits 143', async () => {
    const out = await interruptedAsk(['--json'], 'SIGTERM');
    expect(out.code).toBe(143);
    const lines = out.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toEqual({
      // a generated run id keeps no progress (its DynamoDB data is not on disk): no advice to resume it
      error: {
        name: 'Interrupted',
        message: expect.stringMatching(
          /^interrupted; run run-\S+ kept no progress to resume \(started without --run-id\): ask again, with --run-id <id> to make a run resumable$/,
        ),
        exitStatus: 143,
      },
    });
  });
});
