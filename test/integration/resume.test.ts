/**
 * Resume: a local run stopped in the middle of its seeking phase (aborted, or its process killed)
 * and started again with the same run id and state directory does not call the model again for the
 * chunks it already sought, loses none and duplicates none.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { ExecutionFailedError } from '../../local/engine/engine';
import { runLocal, type LocalProgress } from '../../local/engine/run';
import { startLocalStack } from '../../local/engine/stack';
import { ConfigurationError, InvalidInputError } from '../../shared/errors';
import type { AgentModel } from '../../shared/ports';
import { FaultInjectingModel } from '../support/fault-injecting-model';
import { hundredNotes, scriptedModel, writeCorpus } from '../support/corpus';

jest.setTimeout(120_000);

const REPO = path.resolve(__dirname, '..', '..');
const question = 'What is the answer?';
const options = { chunkTokens: 64, rounds: 1, concurrency: 4 };

describe('resuming a local run with the same run id', () => {
  let dir: string;
  let stateDir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-resume-'));
    stateDir = path.join(dir, 'state');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('does not call the model again for the chunks an aborted run already sought', async () => {
    // Arrange: the first execution is aborted from inside its 30th seek
    const files = await resolveCorpus([writeCorpus(dir, hundredNotes())]);
    const controller = new AbortController();
    const first = new FaultInjectingModel(scriptedModel({ everyChunk: true }), {});
    const aborting: AgentModel = {
      description: 'aborts the run after 30 seeks',
      seek: async (request) => {
        const result = await first.seek(request);
        if (first.soughtChunks.length === 30) controller.abort();
        return result;
      },
      reason: (request) => first.reason(request),
    };
    const stopped = await runLocal({ files, question, options, stateDir, runId: 'r1', model: aborting, signal: controller.signal }).catch((e: unknown) => e);
    expect((stopped as ExecutionFailedError).error).toBe('ExecutionAborted');
    const soughtBefore = new Set(first.soughtChunks);
    expect(soughtBefore.size).toBeGreaterThanOrEqual(30);
    expect(soughtBefore.size).toBeLessThan(100);
    const second = new FaultInjectingModel(scriptedModel({ everyChunk: true }), {});
    const infos: string[] = [];

    // Act
    const result = await runLocal({
      files,
      question,
      options,
      stateDir,
      runId: 'r1',
      model: second,
      onProgress: (p: LocalProgress) => p.type === 'info' && infos.push(p.message),
    });

    // Assert: only the other chunks were sought; one message per chunk, none lost or doubled
    expect(second.soughtChunks.filter((c) => soughtBefore.has(c))).toEqual([]);
    expect(new Set([...soughtBefore, ...second.soughtChunks]).size).toBe(100);
    expect(second.passed.seeker).toBe(100 - soughtBefore.size);
    expect(result.answer).toBe('saffron');
    expect(result.chunks).toBe(100);
    expect(result.poolSize).toBe(100);
    expect(result.chunkFailures).toEqual([]);
    expect(result.usage.seeker.calls).toBe(100); // the first execution's calls are kept, none counted twice
    expect(infos[0]).toMatch(new RegExp(`^resuming run r1: ${soughtBefore.size} of 100 chunk\\(s\\) already sought in round 1`));
  });

  it('does not call the model again for the chunks a killed process already sought', async () => {
    // Arrange: a child process runs the workflow and is killed with SIGKILL once 25 seeks returned
    const corpus = writeCorpus(dir, hundredNotes());
    const child = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(REPO, 'test/support/killable-run.ts'), corpus, stateDir, 'killed', '25'], {
      cwd: REPO,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (data: Buffer) => {
        if (data.toString().includes('STALLED')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) before stalling: ${stderr}`)));
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const peek = await startLocalStack({ stateDir, persistent: true });
    const recorded = new Set(await peek.store.soughtChunks('killed', 1));
    await peek.stop();
    expect(recorded.size).toBeGreaterThanOrEqual(21); // 25 returned; up to 4 (the concurrency) may not have been recorded
    expect(recorded.size).toBeLessThanOrEqual(25);
    const resumed = new FaultInjectingModel(scriptedModel({ everyChunk: true }), {});

    // Act
    const result = await runLocal({ files: await resolveCorpus([corpus]), question, options, stateDir, runId: 'killed', model: resumed });

    // Assert
    expect(resumed.soughtChunks.filter((c) => recorded.has(c))).toEqual([]);
    expect(resumed.passed.seeker).toBe(100 - recorded.size);
    expect(result.poolSize).toBe(100);
    expect(result.chunkFailures).toEqual([]);
    expect(result.answer).toBe('saffron');
  });

  it('refuses clearly to resume in a state directory that another process is using', async () => {
    // Arrange: a long-lived persistent stack on the state directory, as `extagents serve` keeps one
    const files = await resolveCorpus([writeCorpus(dir, { 'a.txt': 'The answer is saffron.' })]);
    const serving = await startLocalStack({ stateDir, persistent: true });
    const model = new FaultInjectingModel(scriptedModel(), {});

    // Act
    const failure = await runLocal({ files, question, options, stateDir, runId: 'busy', model }).catch((e: unknown) => e);
    await serving.stop();

    // Assert
    expect(failure).toBeInstanceOf(ConfigurationError);
    expect((failure as Error).message).toMatch(/^The state directory .* is in use by another extagents process/);
    expect(model.passed.seeker).toBe(0);
    // Once it is free, the same run goes through.
    expect((await runLocal({ files, question, options, stateDir, runId: 'busy', model })).answer).toBe('saffron');
  });

  it('refuses to reuse a run id for another question or another corpus, before any model call', async () => {
    // Arrange
    const files = await resolveCorpus([writeCorpus(dir, { 'a.txt': 'The answer is saffron.' })]);
    await runLocal({ files, question, options, stateDir, runId: 'same', model: scriptedModel() });
    const model = new FaultInjectingModel(scriptedModel(), {});
    const changed = await resolveCorpus([writeCorpus(path.join(dir, 'other'), { 'a.txt': 'The answer is cumin.' })]);

    // Act (one after the other: the state directory's LevelDB takes one process at a time)
    const otherQuestion = await runLocal({ files, question: 'Another question?', options, stateDir, runId: 'same', model }).catch((e: unknown) => e);
    const otherCorpus = await runLocal({ files: changed, question, options, stateDir, runId: 'same', model }).catch((e: unknown) => e);

    // Assert
    expect(otherQuestion).toBeInstanceOf(InvalidInputError);
    expect((otherQuestion as Error).message).toMatch(/already holds a run .* with another question/);
    expect(otherCorpus).toBeInstanceOf(InvalidInputError);
    expect((otherCorpus as Error).message).toMatch(/with another corpus/);
    expect(model.passed.seeker + model.passed.reasoner).toBe(0);
  });

  it('resumes a run recorded before a run option existed (its default stands), and refuses one with another value', async () => {
    // Arrange: a finished run whose record lacks pipelineRounds, as records written before it did
    const files = await resolveCorpus([writeCorpus(path.join(dir, 'older'), { 'a.txt': 'The answer is saffron.' })]);
    const first = await runLocal({ files, question, options, stateDir, runId: 'older', model: scriptedModel() });
    const recordFile = path.join(stateDir, 'bucket', 'runs', 'older', 'run.json');
    const record = JSON.parse(readFileSync(recordFile, 'utf8')) as { options: Record<string, unknown> };
    delete record.options.pipelineRounds;
    writeFileSync(recordFile, JSON.stringify(record));

    // Act
    const again = await runLocal({ files, question, options, stateDir, runId: 'older', model: scriptedModel() });
    const other = await runLocal({ files, question, options: { ...options, pipelineRounds: true }, stateDir, runId: 'older', model: scriptedModel() }).catch(
      (e: unknown) => e,
    );

    // Assert
    expect(again.answer).toBe(first.answer);
    expect(other).toBeInstanceOf(InvalidInputError);
    // Only the option that differs is named, with both values.
    expect((other as Error).message).toMatch(/with other options \(pipelineRounds false there, true now\);/);
  });
});
