/**
 * The project's esbuild bundling, shared by the prebuilt CLI (scripts/build-cli.cjs) and the packaged
 * library (scripts/build-lib.cjs): project TypeScript modules bundled into one CommonJS file, npm
 * packages left as `require`s of node_modules (`packages: 'external'`), so an installed package
 * loads its dependencies as npm installed them and runs no TypeScript loader.
 *
 * Modules that find files next to their source (`__dirname`, `__filename`: the generated stack
 * template, the price table, the extractive reader's weights, …) keep finding them there: in each
 * project file that uses them, the two names are replaced by the file's own directory and path,
 * computed at run time from the bundle's location and the file's place in the project (esbuild has
 * no per-file `__dirname`; a bundler that had one would replace this plugin). The package therefore
 * ships those data files at their places (package.json `files`).
 *
 * The banner also sets `__extagentsBundleDir`, the bundle's own directory, where the bundled
 * ingestion worker sits (local/services/ingestion-queue.ts).
 * Plain JavaScript, so it needs no TypeScript loader.
 */
const { readFileSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** esbuild, or undefined when it is not installed (a production install without dev dependencies). */
function loadEsbuild() {
  try {
    return require('esbuild');
  } catch {
    return undefined;
  }
}

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

/**
 * Bundle `entry` (a project file) into `outfile` (CommonJS).
 * @returns the project files the bundle was made of (relative, `/`-separated, sorted)
 */
async function bundleProject(esbuild, { entry, outfile, what }) {
  const rootFromBundle = path.relative(path.dirname(outfile), root).split(path.sep).join('/') || '.';
  const result = await esbuild.build({
    entryPoints: [path.join(root, entry)],
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
        `// ${what}, built by scripts/bundle.cjs from the TypeScript sources (${entry}).\n` +
        `var __extagentsPath = require('node:path');\nvar __extagentsRoot = __extagentsPath.resolve(__dirname, ${JSON.stringify(rootFromBundle)});\n` +
        'var __extagentsBundleDir = __dirname;',
    },
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [fileLocation],
  });
  return Object.keys(result.metafile.inputs)
    .map((input) => path.relative(root, path.resolve(process.cwd(), input)).split(path.sep).join('/'))
    .filter((input) => !input.startsWith('node_modules/') && !input.startsWith('..'))
    .sort();
}

module.exports = { root, loadEsbuild, bundleProject };
