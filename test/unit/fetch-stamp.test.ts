/**
 * A model the project's fetch script made is checked again by the llama loader once per file identity
 * (models/llama/llama.ts `checkGgufFile` → `checkFetchStamp`; issue 51, item 5): a file damaged past
 * its header (the header check alone passes it) is refused naming what differs; the same bytes under a
 * new identity pass once and renew the stamp; a model without a stamp is not checked.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkGgufFile } from '../../models/llama/llama';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'fetch-stamp-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A GGUF file of no tensors and no metadata (a header the loader's check passes), then `body`. */
function gguf(file: string, body: Buffer): Buffer {
  const header = Buffer.alloc(24);
  header.write('GGUF', 0, 'latin1');
  header.writeUInt32LE(3, 4);
  const bytes = Buffer.concat([header, body]);
  writeFileSync(file, bytes);
  return bytes;
}

/** The stamp scripts/fetch-model.py writes after it checked `file`. */
function stamp(file: string, bytes: Buffer): void {
  const info = statSync(file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  writeFileSync(`${file}.verified.json`, JSON.stringify({ size: bytes.length, sha256, ino: info.ino, mtimeMs: info.mtimeMs }));
}

describe('a fetched model checked against its fetch stamp', () => {
  it('passes as fetched, refuses it damaged past its header, and checks a new identity once', async () => {
    const file = path.join(dir, 'model.gguf');
    const bytes = gguf(file, Buffer.alloc(4096, 7));
    stamp(file, bytes);
    await expect(checkGgufFile(file)).resolves.toMatchObject({ bytes: bytes.length });

    // Damaged in its tensors (same size): the header check alone would pass it.
    const damaged = Buffer.from(bytes);
    damaged[3000] ^= 0xff;
    writeFileSync(file, damaged);
    await expect(checkGgufFile(file)).rejects.toThrow(
      /^llama: model file .*model\.gguf has sha256 [0-9a-f]{64}, not the [0-9a-f]{64} its fetch checked; the file is damaged: fetch it again/,
    );
    // Cut short.
    writeFileSync(file, bytes.subarray(0, 2000));
    await expect(checkGgufFile(file)).rejects.toThrow(/has 2000 bytes, not the 4120 its fetch checked/);

    // The right bytes again, as a new file: checked once, its stamp renewed for the new identity.
    writeFileSync(file, bytes);
    await expect(checkGgufFile(file)).resolves.toMatchObject({ bytes: bytes.length });
    const renewed = JSON.parse(readFileSync(`${file}.verified.json`, 'utf8')) as { mtimeMs: number; ino: number };
    expect(renewed.ino).toBe(statSync(file).ino);
    expect(Math.abs(renewed.mtimeMs - statSync(file).mtimeMs)).toBeLessThan(1);
  });

  it("does not check a model of one's own (no stamp)", async () => {
    const file = path.join(dir, 'mine.gguf');
    gguf(file, Buffer.alloc(100, 1));
    await expect(checkGgufFile(file)).resolves.toMatchObject({ bytes: 124 });
  });
});
