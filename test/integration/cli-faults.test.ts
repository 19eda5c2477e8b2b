/**
 * Faults mid-run as the CLI reports them (issue 9): a full disk (ENOSPC) while the corpus is copied
 * or while Prepare writes its chunks is one line naming the error and the path, exit status 1, no
 * stack trace and no Lambda error JSON; a model configuration error that fails every seeking agent
 * reaches the caller as itself, its message whole.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../local/cli/cli';
import { resolveCorpus } from '../../local/engine/corpus';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { runLocal } from '../../local/engine/run';
import { ModelConfigurationError, SeekingFailedError, StorageError } from '../../shared/errors';
import type { AgentModel } from '../../shared/ports';
import { hundredNotes, scriptedModel, writeCorpus } from '../support/corpus';

jest.setTimeout(120_000);

let dir: string;
let stderr: string[];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-faults-'));
  stderr = [];
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
});

afterEach(() => {
  jest.restoreAllMocks();
  process.exitCode = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A bucket write that fails as a full disk does (Node's SystemError fields), for keys matching `failing`. */
function diskFullFor(failing: RegExp): void {
  const put = FsBlobStore.prototype.put;
  jest.spyOn(FsBlobStore.prototype, 'put').mockImplementation(async function (this: FsBlobStore, key: string, body: string | Uint8Array, type?: string) {
    if (failing.test(key)) {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        errno: -28,
        syscall: 'write',
        path: path.join(this.root, key),
      });
    }
    return put.call(this, key, body, type);
  });
}

describe('a full disk mid-run', () => {
  it.each([
    ['while the corpus is copied into the state directory', /^corpora\//],
    ['while Prepare writes the chunks', /\/chunks\//],
  ])('is one line naming the error and the path, exit 1 (%s)', async (_label, failing) => {
    // Arrange
    const corpus = writeCorpus(dir, hundredNotes(5));
    diskFullFor(failing);

    // Act
    process.exitCode = undefined;
    await main(['node', 'extagents', 'ask', '-c', corpus, '-q', 'What is the answer?', '--state-dir', path.join(dir, 'state'), '--no-progress']);

    // Assert
    const text = stderr.join('');
    expect(process.exitCode).toBe(1);
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(text).toMatch(
      /^extagents: StorageError: ENOSPC: no space left on device, write \(\/.*\/state\/bucket\/.*\): the disk is full; free space or use another --state-dir\n$/,
    );
    expect(text).not.toMatch(/\n\s+at |errorType|trace/);
  });
});

describe('a full disk under the local DynamoDB (LevelDB) mid-run', () => {
  it('is one line and exit 1, not a crash with a stack trace (dynalite rethrows the write error from a callback)', () => {
    const child = spawnSync(process.execPath, ['-r', 'tsx/cjs', path.join(__dirname, '..', 'support', 'fatal-error.ts')], { encoding: 'utf8' });

    expect(child.status).toBe(1);
    expect(child.stderr).toBe(
      "extagents: StorageError: IO error: /state/dynamodb/000005.log: No space left on device (the state directory's DynamoDB data): the disk is full; free space or use another --state-dir\n",
    );
  });
});

describe('a state directory whose DynamoDB data cannot be opened', () => {
  it("says why (LevelDB's reason), not that another process holds it", async () => {
    // Arrange: a damaged database (its CURRENT names a manifest that does not exist)
    const stateDir = path.join(dir, 'state');
    mkdirSync(path.join(stateDir, 'dynamodb'), { recursive: true });
    writeFileSync(path.join(stateDir, 'dynamodb', 'CURRENT'), 'MANIFEST-000099\n');
    const files = await resolveCorpus([writeCorpus(dir, hundredNotes(2))]);

    // Act
    const failure = await runLocal({ files, question: 'What is the answer?', stateDir, runId: 'damaged', model: scriptedModel() }).catch((e: unknown) => e);

    // Assert
    expect(failure).toBeInstanceOf(StorageError);
    expect((failure as Error).message).toMatch(
      /^The DynamoDB data of the state directory \(.*dynamodb\) cannot be opened: IO error: .*MANIFEST-000099: No such file or directory; check its permissions/,
    );
  });
});

describe('every seeking agent failing with one configuration error', () => {
  it('reaches the caller as that error, its message whole (not cut inside the Map failure)', async () => {
    // Arrange
    const files = await resolveCorpus([writeCorpus(dir, hundredNotes(12))]);
    const detail = `Amazon Bedrock refused the model id "anthropic.claude-x": ValidationException: The provided model identifier is invalid. ${'Use a model id your account has access to. '.repeat(8)}`;
    const model: AgentModel = {
      ...scriptedModel(),
      seek: async () => {
        throw new ModelConfigurationError(detail);
      },
    };

    // Act
    const failure = await runLocal({ files, question: 'What is the answer?', options: { chunkTokens: 64 }, stateDir: path.join(dir, 'state'), model }).catch(
      (e: unknown) => e,
    );

    // Assert
    expect(failure).toBeInstanceOf(ModelConfigurationError);
    expect((failure as Error).message).toMatch(
      / \(this error failed the seeking agents of \d+ of the 12 chunk\(s\) of round 1, more than the tolerated 5%; the run stopped\)$/,
    );
    expect((failure as Error).message.startsWith(detail)).toBe(true);
  });

  it('lists each distinct error with its chunks when the failures differ', async () => {
    const files = await resolveCorpus([writeCorpus(dir, hundredNotes(12))]);
    const model: AgentModel = {
      ...scriptedModel(),
      seek: async (request) => {
        throw request.chunk.index % 3 === 0 ? new ModelConfigurationError('model id refused') : new Error('socket hang up');
      },
    };

    const failure = await runLocal({ files, question: 'What is the answer?', options: { chunkTokens: 64 }, stateDir: path.join(dir, 'state'), model }).catch(
      (e: unknown) => e,
    );

    expect(failure).toBeInstanceOf(SeekingFailedError);
    expect((failure as Error).message).toMatch(
      /^Too many seeking agents failed in round 1 \(\d+ of the 12 chunk\(s\) of round 1, more than the tolerated 5%; the run stopped\): Error \(chunks [\d, ]+\): socket hang up; ModelConfigurationError \(chunks 0, 3[\d, ]*\): model id refused$/,
    );
  });
});

describe('ask --fail-on-refusal', () => {
  it('exits 3 when the run refuses and 0 when it answers, printing the result both times', async () => {
    const corpus = writeCorpus(dir, { 'eiffel.txt': 'The Eiffel Tower was completed in 1889 for the World Fair in Paris.' });
    const ask = async (question: string): Promise<number | undefined> => {
      process.exitCode = undefined;
      await main(['node', 'extagents', 'ask', '-c', corpus, '-q', question, '--state-dir', path.join(dir, 'state'), '--no-progress', '--fail-on-refusal']);
      return process.exitCode as number | undefined;
    };

    const refused = await ask('Which submarine sank in the Baltic Sea in 1957?');
    const answered = await ask('When was the Eiffel Tower completed?');
    const plain = await (async () => {
      process.exitCode = undefined;
      await main([
        'node',
        'extagents',
        'ask',
        '-c',
        corpus,
        '-q',
        'Which submarine sank in the Baltic Sea in 1957?',
        '--state-dir',
        path.join(dir, 'state'),
        '--no-progress',
      ]);
      return process.exitCode as number | undefined;
    })();

    expect([refused, answered ?? 0, plain ?? 0]).toEqual([3, 0, 0]);
  });
});

describe('a reader that closes stdout early (`extagents runs ls | head -1`)', () => {
  it('ends the command quietly with the status of a broken pipe (141), not a storage error', async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), 'extagents-epipe-'));
    try {
      const child = spawn(
        process.execPath,
        ['-r', 'tsx/cjs', path.join(__dirname, '..', '..', 'local', 'cli', 'cli.ts'), 'runs', 'ls', '--state-dir', stateDir],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      // The reader is gone before the command writes its first line.
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (data: Buffer) => {
        stderr += data.toString();
      });
      const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(stderr).toBe('');
      expect(status).toBe(141);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

describe('a corpus with no text to read (issue 51, item 15)', () => {
  it('exits 2 whether the listing shows it (an empty folder) or only decoding does (nothing but binary files)', async () => {
    // Arrange: an empty folder, and a folder of files none of which holds text.
    const empty = path.join(dir, 'empty');
    mkdirSync(empty);
    const binary = path.join(dir, 'binary');
    mkdirSync(binary);
    writeFileSync(path.join(binary, 'a.bin'), Buffer.from([0, 1, 2, 3, 0, 0, 255, 254, 0, 7]));
    writeFileSync(path.join(binary, 'b.bin'), Buffer.alloc(64, 0));
    const ask = async (corpus: string): Promise<{ status: number | undefined; text: string }> => {
      stderr.length = 0;
      process.exitCode = undefined;
      await main(['node', 'extagents', 'ask', '-c', corpus, '-q', 'What is the answer?', '--state-dir', path.join(dir, 'state'), '--no-progress']);
      return { status: process.exitCode as number | undefined, text: stderr.join('') };
    };

    // Act
    const fromListing = await ask(empty);
    const fromDecoding = await ask(binary);

    // Assert: one exit status, each line saying why.
    expect(fromListing.status).toBe(2);
    expect(fromListing.text).toMatch(/^extagents: --corpus: Corpus directory .*empty contains no files\n/);
    expect(fromDecoding.status).toBe(2);
    expect(fromDecoding.text).toMatch(/^extagents: EmptyCorpusError: .*a\.bin.*b\.bin/s);
    expect(fromDecoding.text.trimEnd().split('\n')).toHaveLength(1);
  });
});
