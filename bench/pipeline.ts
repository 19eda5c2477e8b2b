/**
 * Pipelined rounds benchmark (run option pipelineRounds, CLI --pipeline; paper 2B "Parallelism"):
 * the local workflow (local/engine/run.ts `runLocal`, the synthesized state machine) with a scripted
 * model whose every call sleeps a fixed time (test/support/two-hop.ts `withLatency`), over the
 * two-hop corpus padded to `--notes` one-chunk notes:
 *
 * - "round 2": "What is the capital of the country where Ada Quill was born?" needs round 2 (round
 *   1's KAR refuses at every k; round 2's seeking agent of the capital's chunk, given the
 *   synchronized birth place, finds the capital; KAR of round 2 answers at k = 2);
 * - "round 1": "Where was Ada Quill born?" is answered by round 1's first KAR step, so a pipelined
 *   run's round 2 is speculative and stopped.
 *
 * Each question runs unpipelined and pipelined, alternately, `--repeat` times, in this one process
 * (same machine, same moment). Prints per question: the median time to answer of each (runLocal's
 * wall time, start to result, the local stack's start included), their ratio, the model calls of
 * each and the speculative ones (`usage.speculative`), and the eval's MODELED latency of the
 * unpipelined run's calls (eval/latency.ts, a latency model of exactly the injected fixed
 * times: `modeledLatency` and `modeledPipelinedLatency`), for comparison. One JSON line per question.
 *
 * Usage: npx tsx bench/pipeline.ts [--notes 40] [--concurrency 4] [--seek-ms 200] [--reason-ms 300] [--repeat 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus, type CorpusFile } from '../local/engine/corpus';
import { runLocal } from '../local/engine/run';
import { modeledLatency, modeledPipelinedLatency, type LatencyModel } from '../eval/latency';
import type { EvalCall } from '../eval/records';
import type { RunResult } from '../shared/types';
import { writeCorpus } from '../test/support/corpus';
import { BIRTH_QUESTION, TWO_HOP_QUESTION, twoHopAnsweringModel, twoHopCorpus, withLatency, type TimedCall } from '../test/support/two-hop';
import { benchArgs } from './support/args';

const USAGE = `Usage: npx tsx bench/pipeline.ts [--notes 40] [--concurrency 4] [--seek-ms 200] [--reason-ms 300] [--repeat 3]

Pipelined rounds (run option pipelineRounds, CLI --pipeline): the time to answer of the local
workflow without and with pipelining, with a scripted model that sleeps a fixed time per call, over
the two-hop corpus; one question needs round 2, one is answered in round 1 (its pipelined round 2 is
speculative and stopped). Each question runs unpipelined and pipelined alternately, in this process.
Prints one JSON line per question: the median time to answer of each mode (ms, the local stack's
start included), their ratio, the model calls of each, the speculative calls, and the eval's modeled
latencies of the same calls (eval/latency.ts) for comparison.

Options:
  --notes N          one-chunk notes padding the two-hop corpus (default 40)
  --concurrency N    seeking agents at once (default 4)
  --seek-ms MS       each seeking call's sleep, milliseconds (default 200)
  --reason-ms MS     each reasoning call's sleep, milliseconds (default 300)
  --repeat N         runs of each question in each mode; the median is kept (default 3)
  -h, --help         print this and exit
`;

const { values } = benchArgs(USAGE, {
  notes: { type: 'string', default: '40' },
  concurrency: { type: 'string', default: '4' },
  'seek-ms': { type: 'string', default: '200' },
  'reason-ms': { type: 'string', default: '300' },
  repeat: { type: 'string', default: '3' },
});
const notes = Number(values.notes);
const concurrency = Number(values.concurrency);
const latency = { seekMs: Number(values['seek-ms']), reasonMs: Number(values['reason-ms']) };
const repeat = Number(values.repeat);
const rounds = 2;

interface Measured {
  ms: number;
  result: RunResult;
  calls: TimedCall[];
}

async function once(files: CorpusFile[], dir: string, question: string, pipelineRounds: boolean): Promise<Measured> {
  const calls: TimedCall[] = [];
  const started = performance.now();
  const result = await runLocal({
    files,
    question,
    options: { chunkTokens: 64, rounds, concurrency, syncMaxMessages: 4, pipelineRounds },
    stateDir: path.join(dir, 'state'),
    model: withLatency(twoHopAnsweringModel(), latency, calls),
  });
  return { ms: performance.now() - started, result, calls };
}

/** The recorded calls of an unpipelined run as the eval records them: a stage per round's seeking, one per KAR step, in order of start. */
function evalCalls(calls: readonly TimedCall[]): EvalCall[] {
  const ordered = [...calls].sort((a, b) => a.start - b.start);
  const out: EvalCall[] = [];
  let stage = -1;
  let seekRound: number | undefined;
  for (const call of ordered) {
    if (call.role === 'reasoner' || call.round !== seekRound) stage += 1;
    seekRound = call.role === 'seeker' ? call.round : undefined;
    out.push({ stage, role: call.role, inputTokens: 0, outputTokens: 0 });
  }
  return out;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'extagents-bench-pipeline-'));
  try {
    const files = await resolveCorpus([writeCorpus(dir, twoHopCorpus(notes))]);
    // A latency model of exactly the injected times (no per-token cost), for the eval's modeled figures.
    const model: LatencyModel = {
      roles: {
        seeker: { fixedMs: latency.seekMs, perInputTokenMs: 0, perOutputTokenMs: 0, quadraticCrossoverTokens: 1 },
        reasoner: { fixedMs: latency.reasonMs, perInputTokenMs: 0, perOutputTokenMs: 0, quadraticCrossoverTokens: 1 },
      },
      concurrency,
      description: 'the injected fixed latencies',
    };
    await once(files, dir, BIRTH_QUESTION, false); // warm-up: module loading, the chunk cache
    for (const [label, question] of [
      ['round 2', TWO_HOP_QUESTION],
      ['round 1', BIRTH_QUESTION],
    ] as const) {
      const plain: Measured[] = [];
      const pipelined: Measured[] = [];
      for (let i = 0; i < repeat; i++) {
        plain.push(await once(files, dir, question, false));
        pipelined.push(await once(files, dir, question, true));
      }
      const p = plain[0].result;
      const q = pipelined[0].result;
      if (p.answer !== q.answer || JSON.stringify(p.trace) !== JSON.stringify(q.trace))
        throw new Error(`${label}: the pipelined run differs: ${q.answer} vs ${p.answer}`);
      const modeled = modeledPipelinedLatency(evalCalls(plain[0].calls), rounds, model);
      const plainMs = median(plain.map((m) => m.ms));
      const pipelinedMs = median(pipelined.map((m) => m.ms));
      const speculative = pipelined.map((m) => m.result.usage.speculative?.calls ?? 0);
      console.log(
        JSON.stringify({
          question: label,
          answer: p.answer,
          chunks: p.chunks,
          concurrency,
          seekMs: latency.seekMs,
          reasonMs: latency.reasonMs,
          repeat,
          unpipelinedMs: Math.round(plainMs),
          pipelinedMs: Math.round(pipelinedMs),
          ratio: Number((pipelinedMs / plainMs).toFixed(3)),
          unpipelinedCalls: { seeker: p.usage.seeker.calls, reasoner: p.usage.reasoner.calls },
          pipelinedCalls: pipelined.map((m) => ({ seeker: m.result.usage.seeker.calls, reasoner: m.result.usage.reasoner.calls })),
          speculativeCalls: speculative,
          modeledUnpipelinedMs: Math.round(modeledLatency(evalCalls(plain[0].calls), 'extagents', model).totalMs),
          modeledPipelinedMs: Math.round(modeled.totalMs),
          modeledRatio: Number((modeled.totalMs / modeled.sequentialMs).toFixed(3)),
          modeledSpeculativeCalls: modeled.speculativeCalls,
        }),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
