/**
 * The model conformance suite (test/support/model-conformance.ts) for the `llama:` provider: the real
 * test model (SmolLM2-135M GGUF), only when EXTAGENTS_TEST_MODEL names it (its rows take about 80 s
 * on 2 cores; the real-model integration tests cover it otherwise). A service failure such as
 * throttling has no in-process counterpart, so its only failure row is a prompt over its context.
 */
import { disposeLlamaModels } from '../../../models/llama/llama';
import { describeAgentConformance, describeChatModelConformance, type ConformanceHarness } from '../../support/model-conformance';

/** The GGUF file of the llama rows: EXTAGENTS_TEST_MODEL, when set. */
const LLAMA_MODEL = process.env.EXTAGENTS_TEST_MODEL?.trim() || undefined;

afterAll(async () => {
  await disposeLlamaModels();
});

if (LLAMA_MODEL === undefined) {
  process.stderr.write('providers/llama: the llama rows run only with EXTAGENTS_TEST_MODEL set (the path scripts/fetch-test-model.sh prints)\n');
  it.skip('llama conformance (EXTAGENTS_TEST_MODEL unset)', () => undefined);
} else {
  const harness: ConformanceHarness = { kind: 'llama', spec: `llama:${LLAMA_MODEL}`, deps: () => ({}), exactUsage: false };
  describeChatModelConformance(harness);
  describeAgentConformance(harness);
}
