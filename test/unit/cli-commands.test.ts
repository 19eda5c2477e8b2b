/**
 * The command table of the CLI (local/cli/commands.ts): every command's module registers the command the
 * table lists (same name, summary and help term), and starting the CLI for `--version` or `--help`
 * loads none of the commands' modules.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Help } from 'commander';
import { buildProgram } from '../../local/cli/cli';
import { COMMANDS } from '../../local/cli/commands';

const ROOT = path.resolve(__dirname, '..', '..');

describe('the CLI command table', () => {
  it('lists each command as its module registers it: name, summary and term', () => {
    const program = buildProgram();
    const help = new Help();

    for (const entry of COMMANDS) {
      const command = program.commands.find((c) => c.name() === entry.name);
      expect([entry.name, command?.description(), command && help.subcommandTerm(command)]).toEqual([entry.name, entry.summary, entry.term]);
    }
    expect(program.commands.map((c) => c.name())).toEqual(COMMANDS.map((c) => c.name));
  });

  it('loads only the command that runs, and no command module for --version or --help', () => {
    const modulesAfter = (args: string[]): string[] => {
      const probe = [
        "require('tsx/cjs/api').register();",
        "const { buildProgram } = require('./local/cli/cli.ts');",
        `buildProgram(['node', 'extagents', ...${JSON.stringify(args)}]);`,
        "process.stdout.write(JSON.stringify(Object.keys(require.cache).map((f) => f.replace(process.cwd() + '/', ''))));",
      ].join('\n');
      return JSON.parse(execFileSync(process.execPath, ['-e', probe], { cwd: ROOT, encoding: 'utf8' })) as string[];
    };
    const heavy = (files: string[]): string[] =>
      files.filter((f) =>
        /-command\.ts$|local\/(engine|services)\/(stack|run|serve|llama)\.ts$|node_modules\/(zod|dynalite|@aws-sdk|aws-local-stepfunctions|gpt-tokenizer)\//.test(
          f,
        ),
      );

    expect(heavy(modulesAfter(['--version']))).toEqual([]);
    expect(heavy(modulesAfter(['--help']))).toEqual([]);
    const serve = modulesAfter(['serve', '--help']);
    expect(serve).toContain('local/cli/serve-command.ts');
    expect(serve.filter((f) => f.endsWith('-command.ts'))).toEqual(['local/cli/serve-command.ts']);
  });
});
