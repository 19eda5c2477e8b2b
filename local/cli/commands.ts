/**
 * The subcommands of `extagents`: name, summary and help term, and the module that registers each.
 * local/cli/cli.ts lists every command from this table but loads a command's module (its options, and
 * whatever its action needs) only when that command runs, so `extagents --version` and
 * `extagents --help` load commander and package.json alone. test/unit/cli-commands.test.ts checks
 * that each module registers the command this table describes. A command's description is set from
 * this table when it is registered (local/cli/cli.ts), so the command modules never import this one
 * (no import circle).
 */
import type { Command } from 'commander';

/** One subcommand. */
export interface CommandEntry {
  name: string;
  /** The `--help` summary (also the command's own description). */
  summary: string;
  /** How the program's help lists it (commander's subcommand term: name, `[options]`, arguments). */
  term: string;
  /** Register this command (and the others of its module) on the program. */
  register: (program: Command) => void;
}

// Each `require` below runs when its command runs (typed by the module's own export).
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'ask',
    summary: 'Answer a question over a corpus with seeking agents, global knowledge synchronization and knowledge-accumulating reasoning.',
    term: 'ask [options]',
    register: (program) => (require('./ask-command') as typeof import('./ask-command')).addAskCommand(program),
  },
  {
    name: 'serve',
    summary:
      'Serve the ExtAgents HTTP API (docs/API.md, docs/openapi.yaml) on 127.0.0.1 over the local stack: same routes, ' +
      'validation and errors as the deployed API, bearer-token authentication instead of SigV4.',
    term: 'serve [options]',
    register: (program) => (require('./serve-command') as typeof import('./serve-command')).addServeCommand(program),
  },
  {
    name: 'ingest',
    summary:
      'Put files under corpora/<id>/ of the local bucket and ingest the corpus once: decode, count and chunk it and cache the chunks, ' +
      'so runs on it with the same --chunk-tokens skip chunking (what an upload to corpora/<id>/ does in AWS). ' +
      'An id that already holds files keeps them: the new files are added (one of the same name replaced), as uploads to a corpus are.',
    term: 'ingest [options]',
    register: (program) => (require('./uploads-command') as typeof import('./uploads-command')).addUploadCommands(program),
  },
  {
    name: 'job',
    summary:
      'Run a job file ({corpus, questions: [{question, options?}], options?}) as an upload to jobs/<name>.json would in AWS: ' +
      'every question on the local workflow, results to results/<name>.jsonl (input order) and results/<name>.summary.json. ' +
      'Running the same file again starts nothing.',
    term: 'job [options] <file>',
    register: (program) => (require('./uploads-command') as typeof import('./uploads-command')).addUploadCommands(program),
  },
  {
    name: 'survey',
    summary:
      'Write a long survey of a topic from a corpus of papers (JSONL / JSON records {id|arxiv_id, title, abstract, authors, year, link?, categories?}, ' +
      'or text / Markdown files, each a source), with an outline by knowledge-accumulating reasoning and checked [id] citations; ' +
      'or run every survey of a schedule file ({surveys: [{topic, corpus, options?}]}) and write an index.',
    term: 'survey [options]',
    register: (program) => (require('./survey-command') as typeof import('./survey-command')).addSurveyCommand(program),
  },
  {
    name: 'runs',
    summary: 'See and reclaim the runs kept in a state directory: runs ls, runs show <runId>, runs rm <runId...> | --older-than <days>.',
    term: 'runs',
    register: (program) => (require('./runs-command') as typeof import('./runs-command')).addRunsCommand(program),
  },
  {
    name: 'doctor',
    summary:
      'Before a deploy: check the AWS region, credentials, the CDK bootstrap and Amazon Bedrock access to the model ids, each problem with the command that fixes it.',
    term: 'doctor [options]',
    register: (program) => (require('./doctor-command') as typeof import('./doctor-command')).addDoctorCommand(program),
  },
  {
    name: 'eval',
    summary: 'Evaluate ExtAgents and the baselines on a data set; records to <out>/records.jsonl (resumable), then a summary and the report.',
    term: 'eval [options]',
    register: (program) => (require('./eval-command') as typeof import('./eval-command')).addEvalCommand(program),
  },
];
