/**
 * One progress style for every long command (`ask`, `eval`, `survey`, `job`), on stderr:
 * - a counted task (the seeking agents of a round, the eval's records, a job's questions) is a bar on
 *   a terminal (cli-progress: `<label> |bar| <done>/<total> <unit> | <pct>% | ETA <eta> | <detail>`)
 *   and, without one (a log file, CI), a line `<label>: <done>/<total> <unit> (<detail>)` when it
 *   starts, at every further 10% and at the end;
 * - anything else is a line of its own (the bar is closed first, so lines never interleave with it).
 * Disabled (`--no-progress`, `--json`), it writes nothing.
 */
import type { SingleBar } from 'cli-progress';
import { formatProgressTime } from './progress-time';

// cli-progress is loaded when a bar is drawn (a terminal), not for lines, `--no-progress` or `--json`.
const cliProgress = (): typeof import('cli-progress') => require('cli-progress') as typeof import('cli-progress');

/** A counted task of a {@link Progress}. */
export interface ProgressTask {
  /** `done` of `total` finished; `detail` (optional) names the latest one. */
  update(done: number, detail?: string): void;
}

export class Progress {
  private bar: SingleBar | undefined;

  /**
   * @param enabled false: write nothing.
   * @param stream where to write (stderr); a bar only when it is a terminal.
   */
  constructor(
    private readonly enabled: boolean,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  /** A line of its own. */
  line(text: string): void {
    if (!this.enabled) return;
    this.stop();
    this.stream.write(`${text}\n`);
  }

  /** Start a counted task of `total` items (closes the previous task's bar). */
  task(label: string, total: number, unit: string): ProgressTask {
    if (!this.enabled) return { update: () => undefined };
    this.stop();
    if (this.stream.isTTY) {
      const { Presets, SingleBar } = cliProgress();
      const bar = new SingleBar(
        {
          stream: this.stream,
          format: `${label} |{bar}| {value}/{total} ${unit} | {percentage}% | ETA {eta_formatted} | {detail}`,
          formatTime: formatProgressTime,
          hideCursor: true,
        },
        Presets.shades_classic,
      );
      bar.start(total, 0, { detail: '' });
      this.bar = bar;
      return { update: (done, detail) => (this.bar === bar ? bar.update(done, { detail: detail ?? '' }) : undefined) };
    }
    let lastDecile = -1;
    const write = (done: number, detail?: string): void => {
      const decile = total === 0 ? 10 : Math.floor((10 * done) / total);
      if (decile === lastDecile) return;
      lastDecile = decile;
      this.stream.write(`${label}: ${done}/${total} ${unit}${detail ? ` (${detail})` : ''}\n`);
    };
    write(0);
    return { update: write };
  }

  /** Close the bar, if one is shown. Idempotent. */
  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
  }
}
