#!/usr/bin/env node
/**
 * Build the prebuilt CLI (issue 11, item 1): local/cli/cli.ts and every project module it reaches,
 * bundled by esbuild into one CommonJS file, `dist/cli/cli.cjs`, with the npm packages left as
 * `require`s of node_modules (scripts/bundle.cjs), and the ingestion worker of `serve`
 * (local/services/ingest-worker.ts) beside it as `dist/cli/ingest-worker.cjs`. `bin/extagents` runs
 * the bundle instead of transpiling the TypeScript sources through tsx on every start, but only while
 * it is fresh: the build also writes `dist/cli/inputs.json`, the project files the bundles were made
 * of, and in a checkout the bin falls back to the sources when any of them is newer than the bundle
 * or gone (bin/prebuilt.cjs). An installed package has no sources: it always runs the bundle.
 *
 * Run by `npm run build` (and so by `npm test` and `npm pack`'s prepack); by hand: `npm run build:cli`.
 *
 * Usage: node scripts/build-cli.cjs [--outdir <dir>]   (default dist/cli)
 */
const { mkdirSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { root, loadEsbuild, bundleProject } = require('./bundle.cjs');

const args = process.argv.slice(2);
if (args.includes('--help')) {
  process.stdout.write('Usage: node scripts/build-cli.cjs [--outdir <dir>]   (default dist/cli)\n');
  process.exit(0);
}
const esbuild = loadEsbuild();
if (esbuild === undefined) {
  // A production install without dev dependencies: bin/extagents runs the sources through tsx.
  process.stdout.write('build-cli: esbuild is not installed: no prebuilt CLI (bin/extagents runs the TypeScript sources)\n');
  process.exit(0);
}
const outIndex = args.indexOf('--outdir');
const outdir = path.resolve(outIndex >= 0 && args[outIndex + 1] ? args[outIndex + 1] : path.join(root, 'dist', 'cli'));

async function main() {
  mkdirSync(outdir, { recursive: true });
  const cli = await bundleProject(esbuild, { entry: 'local/cli/cli.ts', outfile: path.join(outdir, 'cli.cjs'), what: 'The prebuilt CLI' });
  const worker = await bundleProject(esbuild, {
    entry: 'local/services/ingest-worker.ts',
    outfile: path.join(outdir, 'ingest-worker.cjs'),
    what: "The ingestion worker of the prebuilt CLI's serve",
  });
  // The build scripts too: a bundle built by an older build (e.g. without the worker) is not fresh.
  const inputs = [...new Set([...cli, ...worker, 'scripts/build-cli.cjs', 'scripts/bundle.cjs'])].sort();
  writeFileSync(path.join(outdir, 'inputs.json'), `${JSON.stringify({ inputs }, null, 1)}\n`);
}

main().catch((error) => {
  process.stderr.write(`build-cli: ${error && error.stack ? error.stack : String(error)}\n`);
  process.exit(1);
});
