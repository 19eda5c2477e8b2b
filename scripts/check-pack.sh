#!/usr/bin/env bash
# `npm run check:pack`: the packed library works from another Node project (issue 13, item 2).
#
# 1. `npm pack` (its prepack builds the type declarations, dist/types/) into a temporary directory;
# 2. an empty project there installs the tarball (its dependencies from npm's cache when present;
#    install scripts skipped: node-llama-cpp's postinstall is not needed by the offline model, and
#    classic-level, dynalite's LevelDB binding, loads the prebuilt binary its package ships; optional
#    packages are kept: esbuild, which tsx runs the sources with, takes its binary from one);
# 3. a CommonJS consumer `require('extagents')` answers a question over a small file with the offline
#    extractive reader (no network, no model), and must cite the file;
# 4. a TypeScript consumer type-checks against the package's declarations (this repository's tsc).
# Exit status: 0 when all of it worked; non-zero with the failing step's output otherwise.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/extagents-pack-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
started=$(date +%s)

echo "check:pack: npm pack into $WORK"
(cd "$ROOT" && npm pack --silent --pack-destination "$WORK" >/dev/null)
TARBALL="$(ls "$WORK"/extagents-*.tgz)"
echo "check:pack: $(basename "$TARBALL") $(du -h "$TARBALL" | cut -f1)"

mkdir "$WORK/consumer"
cd "$WORK/consumer"
npm init -y >/dev/null
npm install "$TARBALL" --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error >/dev/null
echo "check:pack: installed in $(( $(date +%s) - started )) s"

cat > corpus.txt <<'TEXT'
The Golden Gate Bridge is a suspension bridge. It opened to traffic in May 1937.
Joseph Strauss was the chief engineer of the Golden Gate Bridge.
TEXT
cat > consumer.cjs <<'JS'
const { ask } = require('extagents');
ask({ corpus: 'corpus.txt', question: 'Who was the chief engineer of the Golden Gate Bridge?' }).then(
  (result) => {
    console.log(`check:pack: answer: ${result.answer}`);
    if (!result.answerable || !/Strauss/.test(result.answer) || result.citations[0]?.documentId !== 'corpus.txt') {
      console.error('check:pack: the packed library did not answer from corpus.txt');
      process.exit(1);
    }
  },
  (error) => {
    console.error(`check:pack: ${error.name}: ${error.message}`);
    process.exit(1);
  },
);
JS
node consumer.cjs
cat > consumer.mjs <<'JS'
import { ask, CostLimitExceededError } from 'extagents';
if (typeof ask !== 'function' || typeof CostLimitExceededError !== 'function') { console.error('check:pack: the ES module entry lacks its named exports'); process.exit(1); }
JS
node consumer.mjs

cat > consumer.ts <<'TS'
import { ask, type RunResult } from 'extagents';
const result: Promise<RunResult> = ask({ corpus: ['corpus.txt'], question: 'Who?', options: { rounds: 1 } });
void result.then((r) => r.citations.map((c) => `${c.documentId}:${c.start}-${c.end} ${c.location ?? ''}`));
// @ts-expect-error: question is required
void ask({ corpus: 'corpus.txt' });
TS
cat > tsconfig.json <<'JSON'
{ "compilerOptions": { "strict": true, "module": "nodenext", "moduleResolution": "nodenext", "target": "ES2022", "skipLibCheck": true, "noEmit": true, "types": [] }, "files": ["consumer.ts"] }
JSON
"$ROOT/node_modules/.bin/tsc" -p tsconfig.json
echo "check:pack: passed in $(( $(date +%s) - started )) s"
