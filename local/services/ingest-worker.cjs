// Entry of the ingestion worker thread (local/services/ingest-worker.ts): workers do not inherit the main
// thread's TypeScript hook, so this registers tsx (as bin/extagents does) and loads the worker.
require('tsx/cjs/api').register();
require('./ingest-worker.ts');
