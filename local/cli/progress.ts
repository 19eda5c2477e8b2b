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
import type { RunProgressEvent, RunSeekEvent, RunStatusEvent } from '../../shared/progress';
import { formatDurationMs, formatProgressTime } from './progress-time';

// cli-progress is loaded when a bar is drawn (a terminal), not for lines, `--no-progress` or `--json`.
const cliProgress = (): typeof import('cli-progress') => require('cli-progress') as typeof import('cli-progress');

/** A counted task of a {@link Progress}. */
export interface ProgressTask {
  /**
   * `done` of `total` finished; `detail` (optional) names the latest one; `etaMs` (optional) the time
   * left, for the lines (a bar estimates its own).
   */
  update(done: number, detail?: string, etaMs?: number | null): void;
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

  /**
   * Start a counted task of `total` items (closes the previous task's bar); `start`: how far it is
   * already (`done` items, with the `detail` and `etaMs` of {@link ProgressTask.update}).
   */
  task(label: string, total: number, unit: string, start: { done?: number; detail?: string; etaMs?: number | null } = {}): ProgressTask {
    const done = start.done ?? 0;
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
      bar.start(total, done, { detail: start.detail ?? '' });
      this.bar = bar;
      return { update: (done, detail) => (this.bar === bar ? bar.update(done, { detail: detail ?? '' }) : undefined) };
    }
    let lastDecile = -1;
    const write = (done: number, detail?: string, etaMs?: number | null): void => {
      const decile = total === 0 ? 10 : Math.floor((10 * done) / total);
      if (decile === lastDecile) return;
      lastDecile = decile;
      const eta = etaMs !== undefined && etaMs !== null && done < total ? `ETA ${formatDurationMs(etaMs)}` : undefined;
      const parts = [detail, eta].filter(Boolean).join(', ');
      this.stream.write(`${label}: ${done}/${total} ${unit}${parts ? ` (${parts})` : ''}\n`);
    };
    write(done, start.detail, start.etaMs);
    return { update: write };
  }

  /** Close the bar, if one is shown. Idempotent. */
  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
  }
}

/** `n thing(s)` with the plural when n is not 1. */
const count = (n: number, thing: string): string => `${n} ${thing}${n === 1 ? '' : 's'}`;

/**
 * The line the CLI prints for a run's progress event (shared/progress.ts), or undefined for those
 * it shows otherwise: a round's seeking counts are a counted task ({@link seekTask}), `end` is the
 * printed result or error, and the `seeking` and `finished` statuses say nothing the next event does
 * not.
 */
export function progressLine(event: RunProgressEvent): string | undefined {
  switch (event.type) {
    case 'info':
      return event.message;
    case 'status':
      switch (event.phase) {
        case 'preparing':
          return 'preparing: reading and chunking the corpus';
        case 'synchronizing':
          return `round ${event.round ?? '?'}: synchronizing the pool for round ${(event.round ?? 0) + 1}`;
        case 'reasoning':
          return `round ${event.round ?? '?'}: KAR step with k=${event.k ?? '?'} (the reasoning agent reads the top ${event.k === 1 ? 'message' : `${event.k ?? '?'} messages`})`;
        case 'answering':
          return `round ${event.round ?? '?'}: best-effort answer from the best evidence (no round answered)`;
        case 'finalizing':
          return 'finalizing: citations and the result';
        default:
          return undefined;
      }
    case 'sync':
      return `round ${event.round}: synchronized${event.messages === undefined ? '' : ` ${count(event.messages, 'message')}`} for the seeking agents of round ${event.round + 1}`;
    case 'kar':
      return (
        `KAR step ${event.seq} (round ${event.round}, k=${event.k}${event.forced ? ', best-effort' : ''}): ` +
        `read ${count(event.messagesUsed, 'message')} (${count(event.evidenceTokens, 'token')}): ${event.outcome}` +
        (event.followUp !== undefined ? `; follow-up for round ${event.round + 1}: ${JSON.stringify(event.followUp)}` : '')
      );
    case 'seek':
    case 'end':
      return undefined;
  }
}

/** The label and detail of a round's seeking counts as a counted task. */
export function seekTask(event: RunSeekEvent): { label: string; detail: string } {
  const failed = event.failed > 0 ? `, ${event.failed} failed` : '';
  return {
    label: `round ${event.round} seeking agents${event.speculative ? ' (speculative, beside the KAR steps)' : ''}`,
    detail: `${count(event.messages, 'message')}${failed}`,
  };
}

/**
 * A run's progress on a {@link Progress}: each round's seeking agents as a counted task (a bar on a
 * terminal), every other event as the line of {@link progressLine}.
 */
export class RunProgressReporter {
  private task: ProgressTask | undefined;
  private round: string | undefined;

  constructor(private readonly progress: Progress) {}

  /** Show one event. */
  onProgress(event: RunProgressEvent): void {
    if (event.type === 'seek') {
      const { label, detail } = seekTask(event);
      if (!this.task || this.round !== label) {
        this.round = label;
        this.task = this.progress.task(label, event.total, event.total === 1 ? 'chunk' : 'chunks', { done: event.done, detail, etaMs: event.etaMs });
      } else this.task.update(event.done, detail, event.etaMs);
      return;
    }
    const line = progressLine(event);
    if (line === undefined) return;
    this.task = undefined;
    this.round = undefined;
    this.progress.line(line);
  }

  /** Close the bar, if one is shown. */
  stop(): void {
    this.progress.stop();
  }
}

/**
 * One phrase for a run's latest progress (what `runs show` says of a run still going or
 * interrupted): its seeking counts while it seeks, else the line of its status.
 * @returns undefined when nothing is known yet.
 */
export function progressSummary(latest: { status?: RunStatusEvent; seek?: RunSeekEvent }): string | undefined {
  const { status, seek } = latest;
  if (seek && (status === undefined || status.phase === 'seeking')) {
    const { label, detail } = seekTask(seek);
    const eta = seek.etaMs !== null && seek.done < seek.total ? `, ETA ${formatDurationMs(seek.etaMs)}` : '';
    return `${label}: ${seek.done}/${seek.total} ${seek.total === 1 ? 'chunk' : 'chunks'} (${detail}${eta})`;
  }
  return status ? progressLine(status) : undefined;
}
