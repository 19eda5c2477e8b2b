// The package's entry (package.json "exports"): the library API of local/library.ts, run from its
// TypeScript sources through tsx's CommonJS hook, as bin/extagents runs the CLI, so it can never run
// stale compiled code. The hook is registered for the process (it loads .ts files; other modules are
// unaffected). Type declarations: dist/types/ (`npm run build:types`, run by `npm pack`'s prepack).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
require('tsx/cjs/api').register();
module.exports = require('./library.ts');
