/**
 * Which code `bin/extagents` runs: the prebuilt CLI (dist/cli/cli.cjs, built by
 * scripts/build-cli.cjs at `npm run build`, `npm test` and `npm pack`) while it is fresh, else the
 * TypeScript sources through tsx. In an installed package, which ships no sources (nor tsx), always
 * the bundle. Fresh means: `dist/cli/inputs.json` and the bundle exist, and every project
 * file listed there exists and was modified no later than the bundle. An edited, added-to or
 * checked-out source therefore always runs as it is now (never stale code), only slower to start
 * until `npm run build:cli` is run again. `EXTAGENTS_CLI=source` forces the sources.
 * Cost: one stat per input file (about 140), a few milliseconds.
 */
const { readFileSync, statSync } = require('node:fs');
const path = require('node:path');

/**
 * @param {string} root the project directory (the one holding package.json)
 * @returns {{ bundle?: string, reason: string }} the bundle's path when it is fresh, and why (or why not), for `EXTAGENTS_CLI_EXPLAIN=1`
 */
function prebuiltCli(root) {
  if (process.env.EXTAGENTS_CLI === 'source') return { reason: 'EXTAGENTS_CLI=source' };
  const dir = path.join(root, 'dist', 'cli');
  const bundle = path.join(dir, 'cli.cjs');
  let inputs;
  let built;
  try {
    inputs = JSON.parse(readFileSync(path.join(dir, 'inputs.json'), 'utf8')).inputs;
    built = statSync(bundle).mtimeMs;
  } catch {
    return { reason: 'no prebuilt CLI in dist/cli (npm run build:cli builds it)' };
  }
  if (!Array.isArray(inputs) || inputs.length === 0) return { reason: 'dist/cli/inputs.json lists no input' };
  // The npm package ships the bundle without its TypeScript sources (package.json `files`), nor tsx:
  // there the bundle is all there is, and it is as fresh as the package.
  try {
    statSync(path.join(root, 'local', 'cli', 'cli.ts'));
  } catch {
    return { bundle, reason: 'an installed package (no TypeScript sources): the prebuilt CLI' };
  }
  for (const input of inputs) {
    let modified;
    try {
      modified = statSync(path.join(root, input)).mtimeMs;
    } catch {
      return { reason: `${input} is gone since the CLI was built` };
    }
    if (modified > built) return { reason: `${input} is newer than dist/cli/cli.cjs (npm run build:cli rebuilds it)` };
  }
  return { bundle, reason: `dist/cli/cli.cjs is up to date with its ${inputs.length} source files` };
}

module.exports = { prebuiltCli };
