/** The progress bars' time format: cli-progress's own, but "--" for an ETA not known yet (not "NFs"); the lines' time left. */
import { Presets, SingleBar } from 'cli-progress';
import { Writable } from 'node:stream';
import { formatDurationMs, formatProgressTime } from '../../local/cli/progress-time';

describe('formatProgressTime', () => {
  it('shows an unknown ETA as -- and known ones as cli-progress does', () => {
    expect(formatProgressTime('INF', { autopaddingChar: ' ' }, 5)).toBe('--');
    expect(formatProgressTime(Number.POSITIVE_INFINITY, { autopaddingChar: ' ' }, 5)).toBe('--');
    expect(formatProgressTime(7, { autopaddingChar: ' ' }, 5)).toBe(' 7s');
    expect(formatProgressTime(185, { autopaddingChar: '0' }, 5)).toBe('03m05s');
  });

  it('keeps "NFs" out of a bar at 0 of n', () => {
    let written = '';
    const stream = new Writable({ write: (chunk: Buffer, _encoding, done) => ((written += chunk.toString()), done()) });
    const bar = new SingleBar(
      { stream: stream as unknown as NodeJS.WriteStream, format: 'ETA {eta_formatted}', noTTYOutput: true, formatTime: formatProgressTime },
      Presets.shades_classic,
    );
    bar.start(10, 0);
    bar.stop();
    expect(written).toContain('ETA --');
    expect(written).not.toContain('NFs');
  });
});

describe('formatDurationMs', () => {
  it('says a time left in seconds, minutes and seconds, or hours and minutes', () => {
    expect(formatDurationMs(0)).toBe('0s');
    expect(formatDurationMs(44_600)).toBe('45s');
    expect(formatDurationMs(185_000)).toBe('3m05s');
    expect(formatDurationMs(3_720_000)).toBe('1h02m');
    expect(formatDurationMs(-5)).toBe('0s');
  });
});
