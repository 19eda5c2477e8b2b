import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { toGrammarSchema } from '../../models/llama/grammar';
import { checkGgufFile } from '../../models/llama/llama';
import { runOptionDefaultsForContext, parseRunOptions } from '../../shared/config';
import { ModelConfigurationError } from '../../shared/errors';
import { parseModelSpec } from '../../models/spec';
import { parseReasonReply, parseSeekReply } from '../../shared/llm/parse';
import {
  maxReplyChars,
  outlineReplySchema,
  outputTokenBudget,
  MAX_CITED_SENTENCES,
  MAX_NOTE_CHARS,
  reasonReplySchema,
  SCORE_LEVELS,
  SCORE_REPLY,
  seekReplySchema,
  sectionReplySchema,
  SEEK_REPLY,
  type JsonSchema,
} from '../../shared/llm/schemas';

/** Every string has maxLength and every array maxItems, everywhere in the schema. */
function bounded(schema: JsonSchema): boolean {
  if (schema.type === 'string' && !schema.enum && schema.maxLength === undefined) return false;
  if (schema.type === 'array' && (schema.maxItems === undefined || !schema.items || !bounded(schema.items))) return false;
  return Object.values(schema.properties ?? {}).every(bounded);
}

describe('reply schemas (shared/llm/schemas.ts)', () => {
  const all = [
    SEEK_REPLY,
    seekReplySchema(3),
    SCORE_REPLY,
    reasonReplySchema(['r1-c0', 'r2-c3']),
    reasonReplySchema([]),
    reasonReplySchema(['r1-c0'], { force: true }),
    outlineReplySchema(6),
    sectionReplySchema(500),
  ];

  it.each(all.map((s, i) => [`${s.name} #${i}`, s] as const))(
    '%s bounds every string and array, and requires every property (OpenAI strict mode)',
    (_name, schema) => {
      expect(bounded(schema.schema)).toBe(true);
      expect(schema.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      const objects: JsonSchema[] = [];
      const walk = (s: JsonSchema): void => {
        if (s.type === 'object') objects.push(s);
        Object.values(s.properties ?? {}).forEach(walk);
        if (s.items) walk(s.items);
      };
      walk(schema.schema);
      for (const o of objects) {
        expect(o.additionalProperties).toBe(false);
        expect([...(o.required ?? [])].sort()).toEqual(Object.keys(o.properties ?? {}).sort());
      }
    },
  );

  it('the seek reply is sentence ids (1..unit count, at least one, at most MAX_CITED_SENTENCES), a bounded note and a score level, in that order', () => {
    const schema = seekReplySchema(37).schema;
    expect(Object.keys(schema.properties ?? {})).toEqual(['sentences', 'note', 'score']);
    expect(schema.properties?.sentences).toEqual({
      type: 'array',
      minItems: 1,
      maxItems: MAX_CITED_SENTENCES,
      items: { type: 'integer', minimum: 1, maximum: 37 },
    });
    expect(schema.properties?.note).toMatchObject({ type: 'string', maxLength: MAX_NOTE_CHARS });
    expect(schema.properties?.score).toMatchObject({ type: 'integer', enum: [0, 25, 50, 75, 100] });
    expect([...SCORE_LEVELS]).toEqual([0, 25, 50, 75, 100]);
    // A chunk without units still gets a valid range (1..1); the widest reply is that of MAX_UNITS units.
    expect(seekReplySchema(0).schema.properties?.sentences.items?.maximum).toBe(1);
    expect(SEEK_REPLY.schema.properties?.sentences.items?.maximum).toBe(2000);
  });

  it('the reasoning reply puts the answer first; the forced one has no answerable field at all', () => {
    expect(Object.keys(reasonReplySchema(['r1-c0']).schema.properties ?? {})).toEqual(['answer', 'cited', 'answerable']);
    expect(reasonReplySchema(['r1-c0']).schema.required).toEqual(['answer', 'cited', 'answerable']);
    const forced = reasonReplySchema(['r1-c0'], { force: true }).schema;
    expect(Object.keys(forced.properties ?? {})).toEqual(['answer', 'cited']);
    expect(forced.required).toEqual(['answer', 'cited']);
  });

  it('derives the output-token budget from the bounds: a longest valid reply fits, at 2 characters a token', () => {
    const longest = JSON.stringify({ sentences: [2000, 1999, 1998, 1997], note: 'x'.repeat(MAX_NOTE_CHARS), score: 100 });
    expect(maxReplyChars(SEEK_REPLY.schema)).toBeGreaterThanOrEqual(longest.length);
    // A smaller chunk's schema allows shorter ids only, never a longer reply.
    expect(maxReplyChars(seekReplySchema(9).schema)).toBeLessThan(maxReplyChars(SEEK_REPLY.schema));
    expect(maxReplyChars(seekReplySchema(9).schema)).toBeGreaterThanOrEqual(
      JSON.stringify({ sentences: [9, 8, 7, 6], note: 'x'.repeat(MAX_NOTE_CHARS), score: 100 }).length,
    );
    expect(outputTokenBudget(SEEK_REPLY)).toBe(Math.ceil(maxReplyChars(SEEK_REPLY.schema) / 2) + 16);
    expect(outputTokenBudget(SEEK_REPLY)).toBeLessThan(1024);
    expect(outputTokenBudget(SCORE_REPLY)).toBeLessThan(40);
    // Citing only the step's ids is cheaper than citing any id.
    expect(outputTokenBudget(reasonReplySchema(['r1-c0']))).toBeLessThan(outputTokenBudget(reasonReplySchema([])));
    expect(outputTokenBudget(reasonReplySchema(['r1-c0'], { force: true }))).toBeLessThan(outputTokenBudget(reasonReplySchema(['r1-c0'])));
  });

  it('the reasoning schema cites only the ids of the step (an enum), deduplicated', () => {
    expect(reasonReplySchema(['r1-c0', 'r1-c0', 'r2-c3']).schema.properties?.cited.items).toEqual({ type: 'string', enum: ['r1-c0', 'r2-c3'] });
  });

  it('turns the sentence id range into an enum of the ids and drops required for the llama.cpp grammar, keeping every bound', () => {
    const grammar = toGrammarSchema(seekReplySchema(5).schema) as { properties: Record<string, Record<string, unknown>>; required?: unknown };
    expect(grammar.required).toBeUndefined();
    expect(grammar.properties.sentences.maxItems).toBe(MAX_CITED_SENTENCES);
    expect(grammar.properties.sentences.items).toEqual({ enum: [1, 2, 3, 4, 5] });
    expect(grammar.properties.score.enum).toEqual([0, 25, 50, 75, 100]);
    expect(grammar.properties.note.maxLength).toBe(MAX_NOTE_CHARS);
    const widest = toGrammarSchema(SEEK_REPLY.schema) as { properties: { sentences: { items: { enum: number[] } } } };
    expect(widest.properties.sentences.items.enum).toHaveLength(2000);
    expect(widest.properties.sentences.items.enum[1999]).toBe(2000);
  });

  it('turns any bounded integer range into an enum, and leaves an unbounded one as it is', () => {
    expect(toGrammarSchema({ type: 'integer', minimum: 0, maximum: 100 })).toEqual({ enum: Array.from({ length: 101 }, (_, i) => i) });
    expect(toGrammarSchema({ type: 'integer', minimum: 0 })).toEqual({ type: 'integer' });
  });

  it('the parser reads the schema form of "nothing relevant" as no information, and a schema reply as evidence', () => {
    expect(parseSeekReply('{"sentences": [], "note": "", "score": 0}')).toEqual({ kind: 'no_information' });
    expect(parseSeekReply('{"sentences": [2, 1], "note": "", "score": 75}')).toMatchObject({
      kind: 'evidence',
      sentences: [2, 1],
      score: 75,
      truncated: false,
    });
    expect(parseReasonReply('{"answer": "1937", "cited": ["r1-c0"], "answerable": true}')).toMatchObject({
      kind: 'answer',
      answerable: true,
      cited: ['r1-c0'],
    });
    expect(parseReasonReply('{"answer": "1937", "cited": ["r1-c0"]}')).toMatchObject({ kind: 'answer', answerable: true, answer: '1937' });
  });

  it('the parser still reads the free form of a provider without structured output', () => {
    expect(parseSeekReply('{"evidence": "", "quotes": [], "score": 0}')).toEqual({ kind: 'no_information' });
    expect(parseSeekReply('{"evidence": "Opened 1937.", "quotes": ["It opened in 1937."], "score": 80}')).toMatchObject({
      kind: 'evidence',
      sentences: [],
      score: 80,
      truncated: false,
    });
  });
});

describe('llama: specs, model files and context defaults', () => {
  it('parses llama: with one or two paths; the reasoner defaults to the seeker', () => {
    expect(parseModelSpec('llama:/m/a.gguf')).toEqual({ kind: 'llama', seekerModelId: '/m/a.gguf', reasonerModelId: '/m/a.gguf' });
    expect(parseModelSpec('llama: a.gguf , b.gguf')).toEqual({ kind: 'llama', seekerModelId: 'a.gguf', reasonerModelId: 'b.gguf' });
    expect(() => parseModelSpec('llama:')).toThrow(/one or two comma-separated GGUF file paths/);
    expect(() => parseModelSpec('llama:a,b,c')).toThrow(/one or two/);
  });

  it('checks a model file before loading: missing, a directory, not GGUF are clear ModelConfigurationErrors', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'extagents-gguf-'));
    const text = path.join(dir, 'model.gguf');
    writeFileSync(text, 'not a model');
    const gguf = path.join(dir, 'tiny.gguf');
    // A header of version 3 with no tensor and no metadata entry: nothing to contradict.
    const header = Buffer.alloc(24);
    header.write('GGUF', 0, 'latin1');
    header.writeUInt32LE(3, 4);
    writeFileSync(gguf, header);
    const short = path.join(dir, 'short.gguf');
    writeFileSync(short, Buffer.from('GGUF\x03\x00\x00\x00garbage', 'latin1'));
    const absurd = path.join(dir, 'absurd.gguf');
    const counts = Buffer.from(header);
    counts.write('garbage!', 8, 'latin1');
    writeFileSync(absurd, Buffer.concat([counts, Buffer.alloc(100)]));

    await expect(checkGgufFile(path.join(dir, 'missing.gguf'))).rejects.toThrow(/not found \(ENOENT\)/);
    await expect(checkGgufFile(dir)).rejects.toThrow(/is not a file/);
    await expect(checkGgufFile(text)).rejects.toThrow(ModelConfigurationError);
    await expect(checkGgufFile(text)).rejects.toThrow(/is not a GGUF file/);
    await expect(checkGgufFile(gguf)).resolves.toMatchObject({ bytes: 24 });
    await expect(checkGgufFile(short)).rejects.toThrow(/is too short for a GGUF header \(15 bytes, at least 24\)/);
    await expect(checkGgufFile(absurd)).rejects.toThrow(/a damaged GGUF header \(\d+ tensors and 0 metadata entries cannot fit in 124 bytes\)/);
  });

  it('fits the option defaults to a small context, within the options schema', () => {
    const fitted = runOptionDefaultsForContext(8192);
    expect(fitted).toEqual({ chunkTokens: 3276, syncBudgetTokens: 983, reasonerBudgetTokens: 4505 });
    expect(() => parseRunOptions(fitted)).not.toThrow();
    expect(runOptionDefaultsForContext(1_000_000)).toEqual({ chunkTokens: 8000, syncBudgetTokens: 4000, reasonerBudgetTokens: 16_000 });
    expect(() => parseRunOptions(runOptionDefaultsForContext(256))).not.toThrow();
  });
});

describe('EXTAGENTS_LLAMA_THREADS', () => {
  it('is read as a thread count and rejected clearly when it is not one', () => {
    const { llamaThreadsFromEnv } = jest.requireActual<typeof import('../../models/llama/llama')>('../../models/llama/llama');
    expect(llamaThreadsFromEnv({})).toBeUndefined();
    expect(llamaThreadsFromEnv({ EXTAGENTS_LLAMA_THREADS: '1' })).toBe(1);
    expect(() => llamaThreadsFromEnv({ EXTAGENTS_LLAMA_THREADS: 'two' })).toThrow(/EXTAGENTS_LLAMA_THREADS must be an integer 1-256/);
    expect(() => llamaThreadsFromEnv({ EXTAGENTS_LLAMA_THREADS: '0' })).toThrow(/integer 1-256/);
  });
});
