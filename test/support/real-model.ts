/**
 * The real test model (SmolLM2-135M-Instruct, Q4_1 GGUF) for the tests that run a real language
 * model: found through EXTAGENTS_TEST_MODEL, else at the cache path scripts/fetch-test-model.sh
 * writes. In CI (CI=true) a missing model fails the run; elsewhere those tests skip with one line
 * saying how to fetch it.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where scripts/fetch-test-model.sh caches the model by default. */
export const DEFAULT_TEST_MODEL_PATH = path.join(
  process.env.EXTAGENTS_MODEL_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'extagents', 'models'),
  'SmolLM2-135M-Instruct.Q4_1.gguf',
);

/** The test model's path, or undefined when it is not there. */
export const TEST_MODEL: string | undefined = (() => {
  const given = process.env.EXTAGENTS_TEST_MODEL?.trim();
  if (given) return given;
  return existsSync(DEFAULT_TEST_MODEL_PATH) ? DEFAULT_TEST_MODEL_PATH : undefined;
})();

const HOW_TO_FETCH = 'run scripts/fetch-test-model.sh and set EXTAGENTS_TEST_MODEL to the path it prints';

/**
 * `describe` for tests that need the real model: runs them when the model is there; otherwise
 * fails in CI and skips elsewhere, saying how to fetch the model.
 */
export function describeWithRealModel(name: string, body: (modelPath: string) => void): void {
  if (TEST_MODEL !== undefined) {
    describe(name, () => body(TEST_MODEL as string));
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('has the real test model', () => {
        throw new Error(`the real test model is missing (EXTAGENTS_TEST_MODEL unset and ${DEFAULT_TEST_MODEL_PATH} absent): ${HOW_TO_FETCH}`);
      });
    });
    return;
  }
  process.stderr.write(`skipping "${name}": no real test model; ${HOW_TO_FETCH}\n`);
  describe.skip(name, () => body(''));
}
