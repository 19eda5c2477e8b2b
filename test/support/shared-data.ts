/**
 * Tests that read the public datasets of `../shared/data` (or `EXTAGENTS_DATA_DIR`): a clone of the
 * repository alone has no such folder, so those tests skip with one line naming it; in CI (`CI=true`),
 * where the folder is beside the repository, a missing folder fails the run instead of skipping.
 */
import { existsSync } from 'node:fs';
import { defaultDataRoot } from '../../eval/datasets';

/** The shared data folder the tests read. */
export const SHARED_DATA = defaultDataRoot();

const present = existsSync(SHARED_DATA);
if (!present && process.env.CI === 'true') {
  throw new Error(
    `CI=true but the shared data folder ${SHARED_DATA} is missing: CI must run the tests that read it (put ../shared beside the repository or set EXTAGENTS_DATA_DIR)`,
  );
}
let said = false;

/**
 * `describe` when the shared data folder exists; otherwise one skipped placeholder test (the body,
 * which may read the data while collecting, is not run) and one line on stderr per test file.
 */
export function describeWithSharedData(name: string, body: () => void): void {
  if (present) {
    describe(name, body);
    return;
  }
  if (!said) {
    said = true;
    process.stderr.write(
      `skipping tests that read the shared datasets: ${SHARED_DATA} is missing (clone with ../shared beside the repository, or set EXTAGENTS_DATA_DIR)\n`,
    );
  }
  describe.skip(name, () => {
    it(`needs ${SHARED_DATA}`, () => undefined);
  });
}
