/** Jest projects: unit, infra (CDK assertions) and integration (the synthesized workflow run locally). */
// `ignoreDynamic`: a dynamic `import()` stays an import (not a require), so the ESM-only
// node-llama-cpp loads in tests as in the CLI (local/llama.ts); jest needs --experimental-vm-modules
// for it (package.json's jest script sets it).
const transform = { '^.+\\.tsx?$': ['@swc/jest', { module: { type: 'commonjs', ignoreDynamic: true } }] };
const common = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'], setupFiles: ['<rootDir>/test/support/one-llama-thread.cjs'] };
module.exports = {
  // 30 s per test unless a file sets more (a global option: projects ignore it): a loaded CI machine
  // must not turn a slow test into a red one (speed is measured by bench/, never by a timeout).
  testTimeout: 30_000,
  // Two test files at once (jest's default on 2 cores is 1): most files wait on I/O, child processes
  // and timers as much as they compute. The files that run a `llama:` model run it with one thread each
  // (test/support/one-llama-thread.cjs). Every test's timeout leaves room for a machine twice as slow.
  maxWorkers: 2,
  // jest's own output, then one plain closing line `tests: N passed, N failed, N skipped` (CI reads it).
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
  ],
};
