/**
 * One run of the crash-point sweep (test/integration/crash-sweep.test.ts), in a child process: a
 * two-round question through the local workflow (`runLocal`, persistent state, fixed run id) with
 * the two-hop scripted model of test/support/two-hop.ts. Every event of the run — each model call as
 * it starts, each blob write (but the heartbeat's, `runs/<id>/live.json`: progress for `runs show`,
 * written as each seeking agent ends with writes coalesced by timing, so its count differs from run
 * to run; no run state is read from it) and each message-store write as it completes — is numbered and appended
 * to a log file (one line each, written synchronously, so the log survives the kill). When the event
 * number reaches `killAt`, the process kills itself with SIGKILL on the spot: no handler, no flush, as
 * a crash or the OOM killer would. `killAt` 0 never kills; the process then prints the run's
 * result as one JSON line on stdout.
 *
 * The hooks wrap the prototypes of the local stack's own adapters (FsBlobStore, DynamoMessageStore):
 * test code only, nothing in the product knows about them.
 *
 * Usage: node -r tsx/cjs test/support/crash-run.ts <corpusDir> <stateDir> <runId> <killAt> <logFile> [pipeline|grow|reseek]
 * (`pipeline`: with the run option pipelineRounds; `grow`: with coverage 'grow' from one chunk, so
 * the run grows its coverage three times before round 2; `reseek`: with reseek 'promising' and the
 * sparse two-hop model, whose round 2 re-reads two chunks; `batch`: with seekMode 'batch' and the
 * chat-level two-hop model, each round one job of the local batch runner, whose record calls are
 * logged as `call record <chunk's first words>`.)
 */
import { appendFileSync } from 'node:fs';
import { resolveCorpus } from '../../local/engine/corpus';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { runLocal } from '../../local/engine/run';
import { DynamoMessageStore } from '../../lambdas/adapters/dynamo-message-store';
import type { AgentModel, ChatModel } from '../../shared/ports';
import { LlmAgents } from '../../shared/llm/agents';
import type { RunOptionsInput } from '../../shared/config';
import { TWO_HOP_GROW, TWO_HOP_OPTIONS, TWO_HOP_QUESTION, twoHopChatModel, twoHopModel, twoHopSparseModel } from './two-hop';

/** The follow-up mode's question for round 2. */
const TWO_HOP_FOLLOW_UP = 'What is the capital of Freedonia?';

const [corpusDir, stateDir, runId, killAtText, logFile, mode] = process.argv.slice(2);
/** The run options of each mode, beside TWO_HOP_OPTIONS. */
const MODE_OPTIONS: Record<string, RunOptionsInput> = {
  plain: {},
  pipeline: { pipelineRounds: true },
  grow: TWO_HOP_GROW,
  reseek: { reseek: 'promising' },
  batch: { seekMode: 'batch' },
  'follow-up': { synchronization: 'follow-up' },
};
const killAt = Number(killAtText);
let events = 0;

/** Number and log one event; die with SIGKILL if it is the chosen one. */
function event(label: string): void {
  events += 1;
  appendFileSync(logFile, `${process.pid} ${events} ${label}\n`);
  if (events === killAt) process.kill(process.pid, 'SIGKILL');
}

/** Wrap an async method so that its completion is an event, labelled from its arguments. */
function afterEach<T extends object>(proto: T, name: keyof T & string, label: (args: unknown[]) => string | undefined): void {
  const original = proto[name] as unknown as (...args: unknown[]) => Promise<unknown>;
  (proto as Record<string, unknown>)[name] = async function (this: unknown, ...args: unknown[]) {
    const result = await original.apply(this, args);
    const said = label(args);
    if (said !== undefined) event(said);
    return result;
  };
}

// The heartbeat is not an event (see above): the sweep's kill points must be the same in every run.
afterEach(FsBlobStore.prototype, 'put', (args) => (String(args[0]).endsWith('/live.json') ? undefined : `put ${String(args[0])}`));
// One write per sought chunk (message, usage and warnings together): the sweep reads `sought r<R> c<C>`.
afterEach(DynamoMessageStore.prototype, 'recordSeek', (args) => {
  const record = args[1] as { round: number; chunkIndex: number; message?: unknown };
  return `sought r${record.round} c${record.chunkIndex}${record.message ? ' with message' : ''}`;
});
// One write per KAR step (its outcome, usage and warnings together).
afterEach(DynamoMessageStore.prototype, 'putStep', (args) => `step ${(args[1] as { seq: number }).seq} r${(args[1] as { round: number }).round}`);

/** The batch mode's models: the chat-level two-hop model, its record calls logged (test/support/two-hop.ts). */
function batchModels(): { model: AgentModel; batch: NonNullable<Parameters<typeof runLocal>[0]['batch']> } {
  const scripted = twoHopChatModel();
  const chat: ChatModel = {
    modelId: scripted.chat.modelId,
    async complete(request) {
      const chunk = /<chunk>([\s\S]*?)<\/chunk>/.exec(request.messages[0].text)?.[1] ?? '';
      event(
        `call record ${chunk
          .replace(/\[\d+\]\s*/g, '')
          .trim()
          .slice(0, 12)
          .replace(/\s+/g, ' ')}`,
      );
      return scripted.chat.complete(request);
    },
  };
  const agents = (wrap?: (c: ChatModel) => ChatModel): AgentModel => {
    const inner = scripted.agents();
    const llm = new LlmAgents({ seeker: wrap ? wrap(chat) : chat, reasoner: chat });
    return {
      description: inner.description,
      seek: (request) => llm.seek(request),
      async reason(request) {
        event(`call reason${request.force ? ' forced' : ''} [${request.messages.map((m) => m.id).join(',')}]`);
        return inner.reason(request);
      },
    };
  };
  return { model: agents(), batch: { minRecords: 4, seekerChat: chat, agents } };
}

async function main(): Promise<void> {
  if (mode === 'batch') {
    const { model, batch } = batchModels();
    const result = await runLocal({
      files: await resolveCorpus([corpusDir]),
      question: TWO_HOP_QUESTION,
      options: { ...TWO_HOP_OPTIONS, ...MODE_OPTIONS.batch },
      stateDir,
      runId,
      model,
      batch,
      retryIntervalMs: 0,
    });
    process.stdout.write(`${JSON.stringify({ events, result })}\n`);
    return;
  }
  const inner = mode === 'reseek' ? twoHopSparseModel({ capitalFiller: true }) : twoHopModel();
  const model: AgentModel = {
    description: inner.description,
    async seek(request) {
      event(`call seek r${request.round} c${request.chunk.index}`);
      return inner.seek(request);
    },
    async reason(request) {
      event(`call reason${request.force ? ' forced' : ''} [${request.messages.map((m) => m.id).join(',')}]`);
      return inner.reason(request);
    },
    // The follow-up mode's question (synchronization 'follow-up'): one call when round 1 ends refused.
    ...(mode === 'follow-up' && {
      async followUp(request: { messages: Array<{ id: string }> }) {
        event(`call follow-up [${request.messages.map((m) => m.id).join(',')}]`);
        return { followUp: TWO_HOP_FOLLOW_UP, usage: { calls: 1, inputTokens: 10, outputTokens: 5 }, warnings: [] };
      },
    }),
  };
  const result = await runLocal({
    files: await resolveCorpus([corpusDir]),
    question: TWO_HOP_QUESTION,
    options: { ...TWO_HOP_OPTIONS, ...MODE_OPTIONS[mode ?? 'plain'] },
    stateDir,
    runId,
    model,
    retryIntervalMs: 0,
  });
  process.stdout.write(`${JSON.stringify({ events, result })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
