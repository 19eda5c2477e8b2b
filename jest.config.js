/** Jest projects: unit, infra (CDK assertions) and integration (the synthesized workflow run locally). */
const transform = { '^.+\\.tsx?$': ['@swc/jest'] };
const common = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'] };
module.exports = {
  // 30 s per test unless a file sets more (a global option: projects ignore it): a loaded CI machine
  // must not turn a slow test into a red one (speed is measured by bench/, never by a timeout).
  testTimeout: 30_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
  ],
};
