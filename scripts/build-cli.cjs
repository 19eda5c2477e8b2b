#!/usr/bin/env node
/**
 * Build the prebuilt CLI (issue 11, item 1): local/cli/cli.ts and every project module it reaches,
 * bundled by esbuild into one CommonJS file, `dist/cli/cli.cjs`, with the npm packages left as
 * `require`s of node_modules (`packages: 'external'`). `bin/extagents` runs it instead of
 * transpiling the TypeScript sources through tsx on every start, but only while it is fresh: the
 * build also writes `dist/cli/inputs.json`, the project files the bundle was made of, and the bin
 * falls back to the sources when any of them is newer than the bundle or gone (bin/prebuilt.cjs).
 *
 * Run by `npm ci` / `npm install` (the package's `prepare` script) and by `npm pack` (`prepack`);
 * by hand: `npm run build:cli`. Plain JavaScript, so it needs no TypeScript loader.
 *
 * Modules that find files next to their source (`__dirname`, `__filename`: the generated stack
 * template, the price table, the ingestion worker, …) keep finding them there: in each project file
 * that uses them, the two names are replaced by the file's own directory and path, computed at run
 * time from the bundle's location and the file's place in the project (esbuild has no per-file
 * `__dirname`; a bundler that had one would replace this plugin).
 *
 * Usage: node scripts/build-cli.cjs [--outdir <dir>]   (default dist/cli)
 */
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
let esbuild;
try {
  esbuild = require('esbuild');
} catch {
  // A production install without dev dependencies: bin/extagents runs the sources through tsx.
  process.stdout.write('build-cli: esbuild is not installed: no prebuilt CLI (bin/extagents runs the TypeScript sources)\n');
  process.exit(0);
}

const root = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
if (args.includes('--help')) {
  process.stdout.write('Usage: node scripts/build-cli.cjs [--outdir <dir>]   (default dist/cli)\n');
  process.exit(0);
}
const outIndex = args.indexOf('--outdir');
const outdir = path.resolve(outIndex >= 0 && args[outIndex + 1] ? args[outIndex + 1] : path.join(root, 'dist', 'cli'));

/** Per-file `__dirname` / `__filename` for project sources (see the file comment). */
const fileLocation = {
  name: 'file-location',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!/\b__(dirname|filename)\b/.test(source)) return undefined;
      const relative = path.relative(root, args.path).split(path.sep).join('/');
      const contents =
        `const __extagentsFile = __extagentsPath.join(__extagentsRoot, ${JSON.stringify(relative)});\n` +
        `const __extagentsDir = __extagentsPath.dirname(__extagentsFile);\n` +
        source.replace(/\b__dirname\b/g, '__extagentsDir').replace(/\b__filename\b/g, '__extagentsFile');
      return { contents, loader: 'ts' };
    });
  },
};

async function main() {
  mkdirSync(outdir, { recursive: true });
  const outfile = path.join(outdir, 'cli.cjs');
  const rootFromBundle = path.relative(outdir, root).split(path.sep).join('/') || '.';
  const result = await esbuild.build({
    entryPoints: [path.join(root, 'local', 'cli', 'cli.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    // Dynamic import() of ES-module packages (node-llama-cpp) stays an import() at run time.
    supported: { 'dynamic-import': true },
    banner: {
      js:
        '// Built by scripts/build-cli.cjs from the TypeScript sources; bin/extagents runs it only while it is fresh.\n' +
        `var __extagentsPath = require('node:path');\nvar __extagentsRoot = __extagentsPath.resolve(__dirname, ${JSON.stringify(rootFromBundle)});`,
    },
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [fileLocation],
  });
  const inputs = Object.keys(result.metafile.inputs)
    .map((input) => path.relative(root, path.resolve(process.cwd(), input)).split(path.sep).join('/'))
    .filter((input) => !input.startsWith('node_modules/') && !input.startsWith('..'))
    .sort();
  writeFileSync(path.join(outdir, 'inputs.json'), `${JSON.stringify({ inputs }, null, 1)}\n`);
}

main().catch((error) => {
  process.stderr.write(`build-cli: ${error && error.stack ? error.stack : String(error)}\n`);
  process.exit(1);
});
