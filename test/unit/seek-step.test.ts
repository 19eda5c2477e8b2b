/**
 * One Seek task (shared/pipeline/seek.ts) over fake ports: errors raised before the model is called
 * are recorded for the chunk, and the text a message stores is bounded (DynamoDB's 400 KB item).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { parseRunOptions } from '../../shared/config';
import { ConfigurationError, ContextOverflowError, ModelThrottledError } from '../../shared/errors';
import { chunkKey, runRecordKey } from '../../shared/pipeline/layout';
import { clearRunCaches, type RunRecord } from '../../shared/pipeline/run-record';
import { boundMessageText, MAX_EVIDENCE_CHARS, MAX_STORED_QUOTE_CHARS } from '../../shared/method';
import { MAX_COUNTED_THROTTLE_WAIT_MS, seekChunk } from '../../shared/pipeline/seek';
import type { AgentModel, MessageStore, SeekRecord } from '../../shared/ports';
import type { Chunk, Message, Quote } from '../../shared/types';

const usage = { calls: 1, inputTokens: 1, outputTokens: 1 };

interface Recorded {
  messages: Message[];
  failures: Array<{ chunk: number; error: string; message: string }>;
  warnings: string[];
}

function fakeStore(recorded: Recorded, overrides: Partial<MessageStore> = {}): MessageStore {
  const store = {
    recordSeek: async (_run: string, record: SeekRecord) => {
      if (record.message) recorded.messages.push(record.message);
      recorded.warnings.push(...record.warnings);
      return 'recorded' as const;
    },
    recordSeekFailure: async (_run: string, _round: number, chunk: number, f: { error: string; message: string }) =>
      void recorded.failures.push({ chunk, error: f.error, message: f.message }),
    lastSeekFailure: async () => undefined,
    countTransientError: async () => undefined,
    ...overrides,
  } as unknown as MessageStore;
  // The Seek task's one read: nothing sought yet, and the failure the overrides may give.
  const seekState: MessageStore['seekState'] = async (run, round, chunk) => {
    const lastFailure = await store.lastSeekFailure(run, round, chunk);
    return { sought: false, ...(lastFailure && { lastFailure }) };
  };
  return { ...store, seekState: overrides.seekState ?? seekState } as MessageStore;
}

function quote(start: number, length: number, char = 'q'): Quote {
  return { documentId: 'd.txt', start, end: start + length, text: char.repeat(length) };
}

describe('boundMessageText', () => {
  it('keeps a message within the bounds unchanged, with no warning', () => {
    const quotes = [quote(0, 10), quote(50, 20)];

    expect(boundMessageText('short evidence', quotes)).toEqual({ evidence: 'short evidence', quotes, warnings: [] });
  });

  it('cuts long evidence and long quotes, moves a cut quote end with its text, drops quotes left with no room, and warns for each', () => {
    const evidence = 'e'.repeat(MAX_EVIDENCE_CHARS + 500);
    const quotes = [quote(0, MAX_STORED_QUOTE_CHARS - 100), quote(100_000, 300), quote(200_000, 50)];

    const bounded = boundMessageText(evidence, quotes);

    expect(bounded.evidence).toHaveLength(MAX_EVIDENCE_CHARS);
    expect(bounded.quotes).toEqual([quotes[0], { documentId: 'd.txt', start: 100_000, end: 100_100, text: 'q'.repeat(100) }]);
    expect(bounded.warnings).toHaveLength(3);
    expect(bounded.warnings[0]).toContain(`evidence of ${MAX_EVIDENCE_CHARS + 500} characters cut to ${MAX_EVIDENCE_CHARS}`);
    expect(bounded.warnings[1]).toContain('quote of d.txt [100000, 100300) cut to its first 100 characters');
    expect(bounded.warnings[2]).toContain('quote of d.txt [200000, 200050) not stored');
  });

  it('never cuts inside a surrogate pair', () => {
    const evidence = 'a' + '😀'.repeat(MAX_EVIDENCE_CHARS); // the bound falls after a high surrogate

    const bounded = boundMessageText(evidence, []);

    expect(bounded.evidence).toHaveLength(MAX_EVIDENCE_CHARS - 1);
    expect(bounded.evidence).not.toMatch(/[\uD800-\uDBFF]$/);
    expect(Buffer.from(bounded.evidence, 'utf8').toString('utf8')).toBe(bounded.evidence);
  });
});

describe('one Seek task', () => {
  let dir: string;
  let blobs: FsBlobStore;
  const text = 'x'.repeat(400_000);
  const chunk: Chunk = { index: 0, tokens: 50_000, chars: text.length, text, segments: [{ documentId: 'big.txt', start: 0, end: text.length, chunkStart: 0 }] };

  beforeEach(async () => {
    clearRunCaches();
    dir = mkdtempSync(path.join(tmpdir(), 'seek-step-'));
    blobs = new FsBlobStore(dir);
    const record = {
      runId: 'r',
      question: 'q?',
      options: parseRunOptions({}),
      documents: [],
      skipped: [],
      chunks: 1,
      tokens: 0,
      tokenizer: 't',
      createdAt: '',
    } as unknown as RunRecord;
    await blobs.put(runRecordKey('r'), JSON.stringify(record));
    await blobs.put(chunkKey('r', 0), JSON.stringify(chunk));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('records a bad model setting for the chunk: the factory is called inside the task error handling', async () => {
    const recorded: Recorded = { messages: [], failures: [], warnings: [] };

    const failure = await seekChunk(
      { runId: 'r', round: 1, chunk: 0 },
      {
        blobs,
        store: fakeStore(recorded),
        model: () => {
          throw new ConfigurationError('Unknown model spec "bedrock:"');
        },
      },
    ).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(ConfigurationError);
    expect(recorded.failures).toEqual([{ chunk: 0, error: 'ConfigurationError', message: 'Unknown model spec "bedrock:"' }]);
  });

  it('advises, for a prompt over the context, a chunk size below the one that failed, from the tokens the model counted', async () => {
    const recorded: Recorded = { messages: [], failures: [], warnings: [] };
    const overflowing: AgentModel = {
      description: 'a seeking prompt of 8,370 tokens for a context of 8,192',
      seek: async () => {
        throw new ContextOverflowError('llama model m.gguf: the prompt has 8370 tokens', { tokens: { prompt: 8370, context: 8192, reply: 152 } });
      },
      reason: async () => {
        throw new Error('not called');
      },
    };

    const failure = await seekChunk({ runId: 'r', round: 1, chunk: 0 }, { blobs, store: fakeStore(recorded), model: overflowing }).catch((e: unknown) => e);

    expect(failure).toBeInstanceOf(ContextOverflowError);
    const advised = Number(/chunks of about (\d+) tokens would fit/.exec((failure as Error).message)?.[1]);
    expect(advised).toBeGreaterThan(64);
    expect(advised).toBeLessThan(parseRunOptions({}).chunkTokens);
    expect((failure as Error).message).toContain('prompt was 8370 tokens for a context of 8192 less 152 for the reply');
  });

  it('records a failure of the store before the model is called, and rethrows it unchanged', async () => {
    const recorded: Recorded = { messages: [], failures: [], warnings: [] };
    const storeDown = Object.assign(new Error('Requested resource not found'), { name: 'ResourceNotFoundException' });
    const model: AgentModel = {
      description: 'must not be called',
      seek: async () => {
        throw new Error('the model was called');
      },
      reason: async () => {
        throw new Error('the model was called');
      },
    };

    const failure = await seekChunk(
      { runId: 'r', round: 1, chunk: 0 },
      { blobs, store: fakeStore(recorded, { seekState: async () => Promise.reject(storeDown) }), model },
    ).catch((error: unknown) => error);

    expect(failure).toBe(storeDown);
    expect(recorded.failures).toEqual([{ chunk: 0, error: 'ResourceNotFoundException', message: 'Requested resource not found' }]);
  });

  it('stores a bounded message when the model returns evidence and a span covering a 400,000-character chunk, and reports the cuts', async () => {
    const recorded: Recorded = { messages: [], failures: [], warnings: [] };
    const model: AgentModel = {
      description: 'returns everything',
      seek: async () => ({ evidence: text, score: 80, spans: [{ start: 0, end: text.length }], usage, warnings: [] }),
      reason: async () => {
        throw new Error('not used');
      },
    };

    const outcome = await seekChunk({ runId: 'r', round: 1, chunk: 0 }, { blobs, store: fakeStore(recorded), model });

    expect(outcome).toEqual({ chunk: 0, outcome: 'message' });
    const [stored] = recorded.messages;
    expect(stored.evidence).toHaveLength(MAX_EVIDENCE_CHARS);
    expect(stored.quotes).toEqual([{ documentId: 'big.txt', start: 0, end: MAX_STORED_QUOTE_CHARS, text: text.slice(0, MAX_STORED_QUOTE_CHARS) }]);
    expect(Buffer.byteLength(JSON.stringify(stored))).toBeLessThan(100_000);
    expect(recorded.warnings).toEqual([
      expect.stringMatching(/^chunk 0, round 1: evidence of 400000 characters cut to 16000/),
      expect.stringMatching(/^chunk 0, round 1: quote of big.txt \[0, 400000\) cut to its first 32000 characters/),
    ]);
  });

  describe('the wait after a throttled attempt', () => {
    const answering: AgentModel = {
      description: 'answers',
      seek: async () => ({ evidence: null, score: 0, spans: [], usage, warnings: [] }),
      reason: async () => {
        throw new Error('not used');
      },
    };
    /** Seek chunk 0 at t = 100,000 ms after a recorded failure; the waits added to the counters. */
    const waitsAfter = async (failure: { error: string; at?: number } | undefined): Promise<number[]> => {
      const waits: number[] = [];
      const store = fakeStore(
        { messages: [], failures: [], warnings: [] },
        {
          lastSeekFailure: async () => failure && { chunk: 0, message: 'm', ...failure },
          addThrottleWait: async (_run: string, ms: number) => void waits.push(ms),
        },
      );
      await seekChunk({ runId: 'r', round: 1, chunk: 0 }, { blobs, store, model: answering, now: () => 100_000 });
      return waits;
    };

    it("is measured from the throttled attempt's failure record to the next attempt", async () => {
      expect(await waitsAfter({ error: ModelThrottledError.name, at: 96_500 })).toEqual([3500]);
    });

    it('is not counted after another error, without a record time, or after a gap no backoff takes (a resumed run)', async () => {
      expect(await waitsAfter({ error: 'ModelError', at: 96_500 })).toEqual([]);
      expect(await waitsAfter({ error: ModelThrottledError.name })).toEqual([]);
      expect(await waitsAfter({ error: ModelThrottledError.name, at: 100_000 - MAX_COUNTED_THROTTLE_WAIT_MS - 1 })).toEqual([]);
      expect(await waitsAfter(undefined)).toEqual([]);
    });

    it('records the time of a failure, from which the next attempt measures', async () => {
      const failures: Array<{ at?: number }> = [];
      const store = fakeStore(
        { messages: [], failures: [], warnings: [] },
        { recordSeekFailure: async (_r: string, _n: number, _c: number, f: { at?: number }) => void failures.push(f) },
      );
      const throttled: AgentModel = { ...answering, seek: async () => Promise.reject(new ModelThrottledError('slow down')) };

      await seekChunk({ runId: 'r', round: 1, chunk: 0 }, { blobs, store, model: throttled, now: () => 42 }).catch(() => undefined);

      expect(failures).toEqual([expect.objectContaining({ error: 'ModelThrottledError', at: 42 })]);
    });
  });
});
