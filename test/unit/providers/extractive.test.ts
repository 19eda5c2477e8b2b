/**
 * The model conformance suite (test/support/model-conformance.ts) for the `extractive` provider: the
 * offline reader itself (no chat model, no failures: its rows are the agent ones).
 */
import { loadModels } from '../../../models';
import { describeAgentConformance } from '../../support/model-conformance';

describeAgentConformance({ kind: 'extractive', spec: 'extractive', deps: () => ({}), exactUsage: true });

it('has no chat model', async () => {
  expect((await loadModels('extractive')).chat('seeker')).toBeUndefined();
});
