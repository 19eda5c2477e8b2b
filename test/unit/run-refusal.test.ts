/**
 * The names local/engine/run-refusal.ts takes for Prepare's refusals are the workflow's
 * (infra/extagents-workflow.ts `PREPARE_ERRORS`, the errors that end a run at PrepareFailed).
 */
import { PREPARE_ERRORS } from '../../infra/extagents-workflow';
import { PREPARE_REFUSALS } from '../../local/engine/run-refusal';

describe("Prepare's refusals", () => {
  it('are the errors the workflow ends at PrepareFailed with', () => {
    expect([...PREPARE_REFUSALS].sort()).toEqual([...PREPARE_ERRORS].sort());
  });
});
