#!/usr/bin/env node
/**
 * Build the library of the npm package (issue 26, item 1), what package.json `exports` points at:
 *
 * - `dist/lib/index.cjs`: local/library.ts and every project module it reaches, bundled by esbuild
 *   into one CommonJS file, npm packages left as `require`s (scripts/bundle.cjs). Compiled
 *   JavaScript: loading the package registers no TypeScript hook in the host process.
 * - `dist/lib/index.mjs`: the ES module entry, a thin wrapper that re-exports the CommonJS build's
 *   names. One copy of the code behind both entries, so `instanceof CostLimitExceededError` holds
 *   whichever entry a host's modules loaded (two bundles would be two sets of classes: the dual
 *   package hazard), and the bundle's per-file `__dirname` works (an ES module has none). The names
 *   come from esbuild's own analysis of the entry's exports, never from a hand-kept list.
 * - `dist/types/`: the declarations (tsc -p tsconfig.build.json), pruned to the files that
 *   `local/library.d.ts` reaches, and checked to import no npm package other than the package's
 *   `dependencies` (a consumer type-checks them with `skipLibCheck: false` and only this package
 *   installed: scripts/check-pack.sh).
 *
 * Run by `npm run build` (so by `npm test` and `npm pack`'s prepack); by hand: `npm run build:lib`.
 * Usage: node scripts/build-lib.cjs [--outdir <dir>]   (default dist; writes <dir>/lib and <dir>/types)
 */
const { execFileSync } = require('node:child_process');
const { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { root, loadEsbuild, bundleProject } = require('./bundle.cjs');

const args = process.argv.slice(2);
if (args.includes('--help')) {
  process.stdout.write('Usage: node scripts/build-lib.cjs [--outdir <dir>]   (default dist; writes <dir>/lib and <dir>/types)\n');
  process.exit(0);
}
const outIndex = args.indexOf('--outdir');
const outdir = path.resolve(outIndex >= 0 && args[outIndex + 1] ? args[outIndex + 1] : path.join(root, 'dist'));
const libDir = path.join(outdir, 'lib');
const typesDir = path.join(outdir, 'types');
const ENTRY = 'local/library.ts';

/** The export names of `entry` as esbuild sees them (an in-memory ES module build). */
async function exportNames(esbuild) {
  const result = await esbuild.build({
    entryPoints: [path.join(root, ENTRY)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    write: false,
    outdir: libDir,
    metafile: true,
    logLevel: 'error',
  });
  const [output] = Object.values(result.metafile.outputs).filter((o) => o.entryPoint !== undefined);
  return output.exports.filter((name) => name !== 'default').sort();
}

/** The ES module entry over the CommonJS build. */
function esmWrapper(names) {
  return (
    '// The ES module entry of extagents (package.json "exports" "import"), written by scripts/build-lib.cjs:\n' +
    "// the CommonJS build's names as named exports, one copy of the code behind both entries.\n" +
    "import library from './index.cjs';\n\n" +
    `export const {\n${names.map((name) => `  ${name},\n`).join('')}} = library;\nexport default library;\n`
  );
}

/** Relative module specifiers and package names a declaration file imports. */
function importsOf(file) {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/(?:\bfrom|\bimport\(|^\s*import)\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
}

/** Keep the declarations `local/library.d.ts` reaches; fail on an import of a package that is not a dependency. */
function pruneDeclarations() {
  const dependencies = new Set(Object.keys(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).dependencies));
  const reached = new Set();
  const problems = [];
  const pending = [path.join(typesDir, 'local', 'library.d.ts')];
  while (pending.length > 0) {
    const file = pending.pop();
    if (reached.has(file)) continue;
    reached.add(file);
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith('.')) {
        const base = path.resolve(path.dirname(file), specifier);
        const target = [`${base}.d.ts`, path.join(base, 'index.d.ts')].find((candidate) => existsSync(candidate));
        if (target === undefined) problems.push(`${path.relative(typesDir, file)} imports ${specifier}, which has no declaration`);
        else pending.push(target);
        continue;
      }
      const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
      if (!dependencies.has(name)) problems.push(`${path.relative(typesDir, file)} imports ${specifier}, which is not a dependency of the package`);
    }
  }
  if (problems.length > 0) throw new Error(`the declarations reach what a consumer does not have:\n  ${problems.join('\n  ')}`);
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(file);
        if (readdirSync(file).length === 0) rmSync(file, { recursive: true });
      } else if (!reached.has(file)) rmSync(file);
    }
  };
  walk(typesDir);
  return reached.size;
}

async function main() {
  const esbuild = loadEsbuild();
  if (esbuild === undefined) throw new Error('esbuild is not installed (a dev dependency: npm ci installs it)');
  rmSync(libDir, { recursive: true, force: true });
  rmSync(typesDir, { recursive: true, force: true });
  mkdirSync(libDir, { recursive: true });
  await bundleProject(esbuild, { entry: ENTRY, outfile: path.join(libDir, 'index.cjs'), what: 'The extagents library (CommonJS)' });
  writeFileSync(path.join(libDir, 'index.mjs'), esmWrapper(await exportNames(esbuild)));
  execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', path.join(root, 'tsconfig.build.json'), '--outDir', typesDir], {
    cwd: root,
    stdio: 'inherit',
  });
  const kept = pruneDeclarations();
  process.stdout.write(`build-lib: ${path.relative(root, libDir)}/index.cjs, index.mjs; ${kept} declaration files in ${path.relative(root, typesDir)}/\n`);
}

main().catch((error) => {
  process.stderr.write(`build-lib: ${error && error.stack ? error.stack : String(error)}\n`);
  process.exit(1);
});
