/**
 * The `extagents serve` subcommand (local/cli/cli.ts adds it): the HTTP API on 127.0.0.1 over one
 * long-lived local stack (local/services/serve.ts). Runs until SIGINT / SIGTERM, then stops the server,
 * aborts running executions and stops the stack.
 */
import { type Command, Option } from 'commander';
import { formatModelSpec, DEFAULT_LOCAL_MODEL_SPEC } from '../../models/spec';
import { DEFAULT_MAX_CONCURRENT_RUNS, DEFAULT_PORT, MAX_MODEL_SEQUENCES, RUNS_AT_ONCE } from '../engine/defaults';
import { applyStructured, checkLocalModelFiles, MODEL_OPTION_HELP, parseModelFlag, structuredOption, UsageError, writableStateDir } from './common';
import { numberFlag, rangeText } from './cli-numbers';

/** local/services/serve.ts (the HTTP server and the local stack), loaded when the command runs, not for `--help`. */
const serveModule = (): typeof import('../services/serve') => require('../services/serve') as typeof import('../services/serve');

export interface ServeCommandOptions {
  port: number;
  host: string;
  token?: string;
  stateDir: string;
  model: string;
  maxConcurrentRuns: number;
  json?: boolean;
}

/**
 * Check what the user typed before anything starts: the token (from --token or EXTAGENTS_TOKEN),
 * the model spec and the state directory.
 * @returns the token to use (undefined: generate one).
 * @throws UsageError (exit status 2) naming the option.
 */
export function validateServe(opts: ServeCommandOptions, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const token = opts.token ?? (env.EXTAGENTS_TOKEN || undefined);
  if (token !== undefined) {
    const problem = serveModule().tokenProblem(token);
    if (problem !== undefined) {
      throw new UsageError(`${opts.token !== undefined ? '--token' : 'EXTAGENTS_TOKEN'} ${problem}; or leave it out to have a token generated`);
    }
  }
  writableStateDir(opts.stateDir);
  return token;
}

/** Add `serve` to the program. */
export function addServeCommand(program: Command): Command {
  return program
    .command('serve')
    .option('--port <n>', 'port (0-65535; 0 = any free port)', numberFlag('--port', { min: 0, max: 65535 }), DEFAULT_PORT)
    .addOption(new Option('--host <address>', 'listen address').choices(['127.0.0.1']).default('127.0.0.1'))
    .option(
      '--token <token>',
      'bearer token, at least 16 printable characters (default: $EXTAGENTS_TOKEN, else a new one generated and printed at every start)',
    )
    .option('--state-dir <dir>', 'where the local bucket and DynamoDB data are kept (persistent)', '.extagents')
    .addOption(new Option('-m, --model <spec>', MODEL_OPTION_HELP).default(DEFAULT_LOCAL_MODEL_SPEC))
    .option(
      '--max-concurrent-runs <n>',
      `runs executed at once (${rangeText(RUNS_AT_ONCE)}; others wait); each run's seeking agents at once are its run option concurrency`,
      numberFlag('--max-concurrent-runs', RUNS_AT_ONCE),
      DEFAULT_MAX_CONCURRENT_RUNS,
    )
    .option('--json', 'print the start-up line (url, token, model, state directory) as one JSON object on stdout', false)
    .addOption(structuredOption())
    .action(async (opts: ServeCommandOptions & { structured?: string }) => {
      applyStructured(opts.structured);
      const model = parseModelFlag(opts.model);
      await checkLocalModelFiles(model, { sequences: MAX_MODEL_SEQUENCES });
      const token = validateServe(opts);
      const server = await serveModule().startServer({
        port: opts.port,
        host: opts.host,
        token,
        stateDir: opts.stateDir,
        modelSpec: model,
        maxConcurrentRuns: opts.maxConcurrentRuns,
        log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
      });
      if (opts.json) {
        const startup = {
          url: server.url,
          model: formatModelSpec(model),
          stateDir: opts.stateDir,
          maxConcurrentRuns: opts.maxConcurrentRuns,
          tokenGenerated: server.tokenGenerated,
          ...(server.tokenGenerated && { token: server.token, pageUrl: `${server.url}/#token=${encodeURIComponent(server.token)}` }),
        };
        process.stdout.write(`${JSON.stringify(startup)}\n`);
      } else {
        process.stdout.write(
          `extagents serve: ${server.url} (model ${formatModelSpec(model)}, state ${opts.stateDir}, at most ${opts.maxConcurrentRuns} run(s) at once)\n`,
        );
        if (server.tokenGenerated) process.stdout.write(`token: ${server.token}   (new at every start; keep one with --token or EXTAGENTS_TOKEN)\n`);
        // The token rides in the fragment, which the browser never sends: the page keeps it for the tab and drops it from the address bar.
        const page = server.tokenGenerated ? `${server.url}/#token=${encodeURIComponent(server.token)}` : `${server.url}/#token=<token>`;
        process.stdout.write(`page: ${page}   (open in a browser: ask, watch and inspect runs)\n`);
        process.stdout.write(`try: curl -H "Authorization: Bearer <token>" ${server.url}/v1/runs/<runId>   (docs/API.md)\n`);
      }
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      process.stderr.write('extagents serve: stopping (running executions are aborted)\n');
      await server.stop();
    });
}
