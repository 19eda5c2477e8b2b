/**
 * `extagents runs ls | show <runId> | rm <runId...>|--older-than <days>` (local/cli/commands.ts lists it):
 * see and reclaim what local runs keep in a state directory (local/engine/runs.ts).
 */
import { Command } from 'commander';
import { InvalidInputError, NotFoundError } from '../../shared/errors';
import { numberFlag } from './cli-numbers';
import { UsageError, writableStateDir } from './common';
import { formatResult } from './format';
import { progressSummary } from './progress';
import { bucketOf, describeRun, keepsTableData, listRuns, removeRun, runResult, type StoredRun } from '../engine/runs';
import { readRefusal, type RunRefusal } from '../engine/run-refusal';

/**
 * What `runs show` says of a run Prepare refused before any model call: the error, and that
 * resuming cannot help (Prepare would refuse the same input again): change what the error names
 * and ask again, under the same run id or another.
 */
export function describeRefusal(runId: string, refusal: RunRefusal): string {
  return (
    `run ${runId}: refused before any model call at ${refusal.at.slice(0, 19).replace('T', ' ')} UTC: ${refusal.error}: ${refusal.message}\n` +
    `resuming cannot help (the same input is refused again): change what the error names (options, quota, corpus) and ask again, with --run-id ${runId} or without`
  );
}

/** Bytes in KiB/MiB for the listing. */
function size(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

/** An error about a run id the user typed: usage (exit 2) for a bad id, as it is otherwise. */
function asUsage(error: unknown): never {
  if (error instanceof InvalidInputError || error instanceof NotFoundError) throw new UsageError(error.message, { cause: error });
  throw error;
}

/**
 * What `runs show` says of a run without a result: `running` (an `ask` whose process still beats, or
 * a `serve`/`job` execution), with its process and latest progress; `interrupted` (an `ask` killed:
 * its heartbeat file outlived it), with when and where it stopped; else that it stopped before it
 * ended. Each but a running one says how to resume it.
 * @param now the time heartbeat ages are measured from.
 */
export function describeUnfinished(run: StoredRun, now: Date = new Date()): string {
  const known = `${run.chunks ?? 0} chunks${run.question ? `; question: ${run.question}` : ''}`;
  const heartbeat = run.live?.heartbeat;
  // A run with a generated id keeps no progress (its DynamoDB data is not on disk): nothing to resume.
  const resume =
    heartbeat?.resumable === false
      ? 'it kept no progress to resume (started without --run-id): ask the question again, with --run-id <id> to make a run resumable'
      : `resume it with 'extagents ask ... --run-id ${run.runId}'`;
  const doing = heartbeat ? progressSummary(heartbeat) : undefined;
  if (run.status === 'RUNNING') {
    if (!heartbeat) return `run ${run.runId}: running, no result yet (${known})`;
    const age = Math.max(0, Math.round((now.getTime() - Date.parse(heartbeat.heartbeatAt)) / 1000));
    return `run ${run.runId}: running in process ${heartbeat.pid} since ${utc(heartbeat.startedAt)}${doing ? `: ${doing}` : ''} (last heartbeat ${age} s ago; ${known})`;
  }
  if (run.live?.state === 'interrupted' && heartbeat) {
    return `run ${run.runId}: interrupted: its process ${heartbeat.pid} stopped after ${utc(heartbeat.heartbeatAt)}${doing ? `, at ${doing}` : ''}; no result (${known}); ${resume}`;
  }
  const why = run.stopped ? `: ${run.stopped.error}${run.stopped.cause ? ` (${run.stopped.cause})` : ''}` : run.status === 'FAILED' ? ': it failed' : '';
  return `run ${run.runId}: no result (it stopped before it ended${why}; ${known}); ${resume}`;
}

/** An ISO time as `yyyy-mm-dd hh:mm:ss UTC`. */
const utc = (iso: string): string => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

/** Add `runs` (with `ls`, `show`, `rm`) to the program. */
export function addRunsCommand(program: Command): void {
  const runs = program.command('runs');
  const stateDirOption = ['--state-dir <dir>', 'the state directory of the runs', '.extagents'] as const;

  runs
    .command('ls')
    .description(
      'List the runs of the state directory, newest first (as the API and the page): run id, time, status (as the API says it: RUNNING, SUCCEEDED, FAILED, ABORTED), outcome (answered, refused), chunks, disk size, question.',
    )
    .option(...stateDirOption)
    .option('--json', 'one JSON array of the runs on stdout', false)
    .action(async (opts: { stateDir: string; json: boolean }) => {
      const list = await listRuns(opts.stateDir);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(list)}\n`);
        return;
      }
      if (list.length === 0) {
        process.stdout.write(`no runs in ${opts.stateDir}\n`);
        return;
      }
      const rows = list.map((r: StoredRun) => [
        r.runId,
        r.createdAt?.slice(0, 19).replace('T', ' ') ?? '-',
        r.status,
        r.outcome ?? '-',
        String(r.chunks ?? '-'),
        size(r.bytes),
        (r.question ?? '').slice(0, 60),
      ]);
      const header = ['run id', 'created (UTC)', 'status', 'outcome', 'chunks', 'size', 'question'];
      const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
      for (const row of [header, ...rows]) process.stdout.write(`${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')}\n`);
      process.stdout.write(`${list.length} run(s), ${size(list.reduce((sum, r) => sum + r.bytes, 0))}\n`);
    });

  runs
    .command('show')
    .description(
      "Print a run's result (as `ask` prints it), or what is known of it while it has none: running (its process, its latest progress), interrupted (and how to resume it), or refused before any model call (quota, cost limit, empty corpus: why and what to change).",
    )
    .argument('<runId>', 'the run id (see `extagents runs ls`)')
    .option(...stateDirOption)
    .option('--json', 'the result (or the run description) as JSON', false)
    .option(
      '--citation <n>',
      "print the document text around the run's n-th citation (1 = the first), the quote between [[ and ]], with where to open the source file (the text citations count is the extracted text of HTML, Markdown, PDF, DOCX)",
      numberFlag('--citation', { min: 1, max: 1_000_000 }),
    )
    .option('--context <chars>', 'characters of text shown either side of the quote, with --citation', numberFlag('--context', { min: 0, max: 100_000 }), 300)
    .action(async (runId: string, opts: { stateDir: string; json: boolean; citation?: number; context: number }) => {
      const run = await describeRun(opts.stateDir, runId).catch(asUsage);
      const result = await runResult(opts.stateDir, runId);
      if (opts.citation !== undefined) {
        if (!result) throw new UsageError(`runs show --citation: run ${runId} has no result yet`);
        const citation = result.citations[opts.citation - 1];
        if (citation === undefined)
          throw new UsageError(`runs show --citation: run ${runId} has ${result.citations.length} citation(s); give 1 to ${result.citations.length}`);
        const { RunDocuments } = require('../services/web') as typeof import('../services/web');
        const query = new URLSearchParams({ id: citation.documentId, start: String(citation.start), end: String(citation.end), context: String(opts.context) });
        const window = await new RunDocuments(bucketOf(opts.stateDir)).window(runId, query).catch(asUsage);
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ citation, window })}\n`);
          return;
        }
        const at = (offset: number): number => offset - window.windowStart;
        const where = [
          `chars ${citation.start}-${citation.end} of ${window.chars}`,
          citation.page !== undefined ? `page ${citation.page}` : '',
          citation.sourceLine !== undefined ? `source line ${citation.sourceLine}` : '',
          citation.sourceOffset !== undefined ? `source char ${citation.sourceOffset}` : '',
        ].filter((x) => x !== '');
        const text = `${window.windowStart > 0 ? '…' : ''}${window.text.slice(0, at(window.start))}[[${window.text.slice(at(window.start), at(window.end))}]]${window.text.slice(at(window.end))}${window.windowEnd < window.chars ? '…' : ''}`;
        process.stdout.write(`[${opts.citation}] ${citation.documentId}${citation.location ? ` (${citation.location})` : ''} ${where.join(', ')}\n${text}\n`);
        return;
      }
      const refusal = result === undefined ? await readRefusal(bucketOf(opts.stateDir), runId) : undefined;
      if (opts.json) process.stdout.write(`${JSON.stringify(result ?? (refusal ? { ...run, refusal } : run))}\n`);
      else if (result) process.stdout.write(`${formatResult(result)}\n`);
      else if (refusal) process.stdout.write(`${describeRefusal(runId, refusal)}\n`);
      else process.stdout.write(`${describeUnfinished(run)}\n`);
    });

  runs
    .command('rm')
    .description('Delete runs: their files, the corpus copy an ask made for them, and their table items. Corpora under other ids and the chunk cache stay.')
    .argument('[runIds...]', 'the run ids to delete')
    .option(
      '--older-than <days>',
      'delete every run created more than this many days ago (0-36500; 0 = every run)',
      numberFlag('--older-than', { min: 0, max: 36_500 }),
    )
    .option(...stateDirOption)
    .action(async (ids: string[], opts: { stateDir: string; olderThan?: number }) => {
      if ((ids.length === 0) === (opts.olderThan === undefined)) throw new UsageError('runs rm: give run ids or --older-than <days>, not both and not neither');
      writableStateDir(opts.stateDir);
      let targets = ids;
      if (opts.olderThan !== undefined) {
        const cutoff = new Date(Date.now() - opts.olderThan * 86_400_000).toISOString();
        // 0 days: every run, those without a record (never prepared) too.
        targets = (await listRuns(opts.stateDir))
          .filter((r) => opts.olderThan === 0 || (r.createdAt !== undefined && r.createdAt < cutoff))
          .map((r) => r.runId);
      } else {
        for (const id of ids) await describeRun(opts.stateDir, id).catch(asUsage);
      }
      // The run's table items are in the state directory's DynamoDB data (runs with --run-id, serve, job).
      let deleteItems: ((runId: string) => Promise<number>) | undefined;
      let stop: (() => Promise<void>) | undefined;
      if (targets.length > 0 && keepsTableData(opts.stateDir)) {
        const { startLocalStack } = require('../engine/stack') as typeof import('../engine/stack');
        const stack = await startLocalStack({ stateDir: opts.stateDir, persistent: true, lockCommand: 'runs rm' });
        deleteItems = (runId) => stack.deleteRunItems(runId);
        stop = () => stack.stop();
      }
      let bytes = 0;
      try {
        for (const id of targets) {
          const freed = await removeRun(opts.stateDir, id, deleteItems);
          bytes += freed.bytes;
          process.stdout.write(`deleted run ${id} (${size(freed.bytes)}${freed.items > 0 ? `, ${freed.items} table items` : ''})\n`);
        }
      } finally {
        await stop?.();
      }
      process.stdout.write(`${targets.length} run(s) deleted, ${size(bytes)} freed\n`);
    });
}
