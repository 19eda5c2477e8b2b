/**
 * Build the web page of `extagents serve`: web/src/main.ts bundled by esbuild (Preact + htm, no
 * JSX transform) into web/dist/assets/app.js, with web/src/app.css and web/index.html beside it.
 * Runs from `npm run build` (which `npm test` and `npm pack` run) and `npm run build:web`; `serve` answers the files at `/`.
 * Without esbuild (a production install without dev dependencies) it says so and leaves the build
 * that shipped with the package.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, 'dist');
let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.log('web/build.mjs: esbuild is not installed (production install): keeping the shipped web/dist');
  process.exit(0);
}
mkdirSync(path.join(dist, 'assets'), { recursive: true });
const built = await esbuild.build({
  entryPoints: [path.join(here, 'src', 'main.ts')],
  metafile: true,
  bundle: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  minify: true,
  sourcemap: true,
  legalComments: 'none',
  outfile: path.join(dist, 'assets', 'app.js'),
  logLevel: 'warning',
  // Inputs keep their node_modules/ path when node_modules is a symbolic link (a git worktree's), so
  // the check below still tells packages from server code.
  preserveSymlinks: true,
});
// The page may import the API's types from shared/ (type-only, erased); never server code itself.
const root = path.dirname(here);
const server = Object.keys(built.metafile.inputs)
  .map((input) => path.relative(root, path.resolve(input)))
  .filter((input) => !input.startsWith(`web${path.sep}`) && !input.startsWith(`node_modules${path.sep}`));
if (server.length > 0) {
  console.error(`web/build.mjs: the page's bundle must not hold server code, but it holds ${server.join(', ')} (import types with \`import type\`)`);
  process.exit(1);
}
copyFileSync(path.join(here, 'src', 'app.css'), path.join(dist, 'assets', 'app.css'));
copyFileSync(path.join(here, 'index.html'), path.join(dist, 'index.html'));
