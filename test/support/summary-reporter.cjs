/**
 * A jest reporter that closes the run with one plain line, `tests: N passed, N failed, N skipped`,
 * the closing line CI reads in any language (jest's own "Tests: … total" line is not one of them).
 * With EXTAGENTS_TEST_SUMMARY set to a path, the same line is also written there, so .ci/run can
 * print it again as its own last line after the deploy and pack checks.
 */
const { writeFileSync } = require('node:fs');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `tests: ${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped`;
    process.stdout.write(`${line}\n`);
    if (process.env.EXTAGENTS_TEST_SUMMARY) writeFileSync(process.env.EXTAGENTS_TEST_SUMMARY, `${line}\n`);
  }
}

module.exports = SummaryReporter;
