/**
 * A local run in a child process, for the resume test (test/integration/resume.test.ts): runs
 * `runLocal` over a corpus directory with the scripted model; after `stallAfter` seeks have returned
 * it prints "STALLED" on stdout and every further model call hangs, so that the parent can kill the
 * process (SIGKILL) in the middle of the seeking phase.
 *
 * Usage: node -r tsx/cjs test/support/killable-run.ts <corpusDir> <stateDir> <runId> <stallAfter>
 */
import { resolveCorpus } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import type { AgentModel } from '../../shared/ports';
import { scriptedModel } from './corpus';

async function main(): Promise<void> {
  const [corpusDir, stateDir, runId, stallAfterText] = process.argv.slice(2);
  const stallAfter = Number(stallAfterText);
  const inner = scriptedModel({ everyChunk: true });
  let returned = 0;
  const never = new Promise<never>(() => undefined);
  const model: AgentModel = {
    description: 'scripted model that stalls (tests)',
    async seek(request) {
      if (returned >= stallAfter) return never;
      const result = await inner.seek(request);
      returned += 1;
      if (returned === stallAfter) process.stdout.write('STALLED\n');
      return result;
    },
    reason: async () => never,
  };
  await runLocal({
    files: await resolveCorpus([corpusDir]),
    question: 'What is the answer?',
    options: { chunkTokens: 64, rounds: 1, concurrency: 4 },
    stateDir,
    runId,
    model,
  });
  process.stdout.write('FINISHED\n'); // never reached: the parent kills the process
}

void main();
