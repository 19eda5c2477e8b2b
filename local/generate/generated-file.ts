/**
 * The command line of the project's generators of committed files (docs/openapi.yaml,
 * local/engine/generated/stack-template.json, shared/extractive/background-stems.json): write the file, or
 * with `--check` exit 1 when the committed one differs from what the generator makes now.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Write `text` to `file`, or (`--check` in `argv`) compare them and set exit status 1 on a difference.
 * @param command how to regenerate the file, named in the out-of-date message.
 */
export function writeOrCheckGenerated(file: string, text: string, command: string, argv: readonly string[] = process.argv): void {
  if (argv.includes('--check')) {
    if (readFileSync(file, 'utf8') !== text) {
      process.stderr.write(`${file} is out of date: run ${command}\n`);
      process.exitCode = 1;
    }
    return;
  }
  writeFileSync(file, text);
  process.stdout.write(`wrote ${file}\n`);
}
