/**
 * The offline reader's answerability threshold, measured (issue 37 #13): how often the reasoning
 * agent of the offline model (shared/extractive, not an LLM) answers a HotpotQA question whose
 * paragraphs hold the answer, and how often it answers one whose gold paragraphs were removed (so
 * nothing it reads can answer it), at several values of its confidence threshold `answerCoverage`
 * (the share of the question's weighted words one sentence must cover). Every run goes through the
 * synthesized workflow run locally (local/engine/run.ts), as `extagents ask --model extractive` runs
 * it; only the reader's option differs. Questions: the HotpotQA training sample by default (a
 * threshold is a tuning choice: choose on training questions, report on others).
 *
 * Usage: npx tsx bench/extractive-answerability.ts [--dataset hotpot-train|hotpotqa] [--limit 30] [--thresholds 0.3,0.4,0.5,0.6,0.7]
 * Prints one line per threshold: answered with the gold paragraphs (and their official F1), answered
 * without them (false answers), and the accuracy of the answer/refuse decision over both halves.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readHotpotQa, type HotpotQuestion } from '../eval/datasets';
import { hotpotF1 } from '../eval/scorers';
import { resolveCorpus } from '../local/engine/corpus';
import { runLocal } from '../local/engine/run';
import { DEFAULT_READER_OPTIONS, ExtractiveReader } from '../shared/extractive';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/extractive-answerability.ts [--dataset hotpot-train|hotpotqa] [--limit 30] [--thresholds 0.3,0.4,0.5,0.6,0.7]

The offline reader's answerability threshold, measured: each HotpotQA question is asked twice through
the local workflow with the offline model, over its ten paragraphs (answerable) and over its
distractor paragraphs only, the gold ones removed (unanswerable), at each value of the reader's
answerCoverage (the share of the question's weighted words one sentence must cover to answer).
Prints per threshold: answered of the answerable (and their mean official F1), answered of the
unanswerable (false answers), and the decision's accuracy over both (answer the first, refuse the
second). The shipped default is marked.

Options:
  --dataset NAME     hotpot-train (HotpotQA training sample, default) or hotpotqa (dev)
  --limit N          questions (default 30)
  --thresholds LIST  comma-separated answerCoverage values in (0, 1] (default 0.3,0.4,0.5,0.6,0.7)
`;

const FILES: Record<string, string> = {
  'hotpot-train': 'hotpotqa/hotpot_train_100.hipporag.json',
  hotpotqa: 'hotpotqa/hotpot_dev_distractor_100.reflexion.json',
};

/** One question's two corpora as files: its paragraphs, or only those no supporting fact names. */
function writeCorpus(dir: string, question: HotpotQuestion, withGold: boolean): string {
  const gold = new Set(question.supportingFacts.map((f) => f.title));
  const folder = path.join(dir, withGold ? 'answerable' : 'unanswerable');
  mkdirSync(folder, { recursive: true });
  question.context
    .filter((p) => withGold || !gold.has(p.title))
    .forEach((p, i) => writeFileSync(path.join(folder, `p${i}.txt`), `${p.title}. ${p.sentences.join('')}`));
  return folder;
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    dataset: { type: 'string', default: 'hotpot-train' },
    limit: { type: 'string', default: '30' },
    thresholds: { type: 'string', default: '0.3,0.4,0.5,0.6,0.7' },
  });
  const file = FILES[values.dataset];
  if (file === undefined) usageError(USAGE, `--dataset must be one of ${Object.keys(FILES).join(', ')}, got ${values.dataset}`);
  const limit = Number(values.limit);
  if (!Number.isSafeInteger(limit) || limit < 1) usageError(USAGE, `--limit must be an integer >= 1, got ${values.limit}`);
  const thresholds = values.thresholds.split(',').map(Number);
  if (thresholds.some((t) => !(t > 0 && t <= 1))) usageError(USAGE, `--thresholds must be numbers in (0, 1], got ${values.thresholds}`);

  const data = path.resolve(__dirname, '..', '..', 'shared', 'data');
  const questions = readHotpotQa(path.join(data, file)).questions.slice(0, limit);
  const dir = mkdtempSync(path.join(tmpdir(), 'extagents-answerability-'));
  try {
    // Each question's two corpora, written once and read by every threshold's runs.
    const corpora = await Promise.all(
      questions.map(async (question, i) => ({
        question,
        answerable: await resolveCorpus([writeCorpus(path.join(dir, `q${i}`), question, true)]),
        unanswerable: await resolveCorpus([writeCorpus(path.join(dir, `q${i}`), question, false)]),
      })),
    );
    process.stdout.write(`${questions.length} questions of ${file}, offline model, ${thresholds.length} thresholds\n`);
    process.stdout.write(
      '| answerCoverage | answered, answerable | F1 of those | answered, unanswerable (false answers) | decision accuracy |\n|---|---|---|---|---|\n',
    );
    for (const threshold of thresholds) {
      let answered = 0;
      let f1 = 0;
      let falseAnswers = 0;
      for (const [i, { question, answerable, unanswerable }] of corpora.entries()) {
        for (const withGold of [true, false]) {
          const result = await runLocal({
            files: withGold ? answerable : unanswerable,
            question: question.question,
            options: {},
            stateDir: path.join(dir, 'state', `${threshold}-${i}-${withGold}`),
            model: new ExtractiveReader({ answerCoverage: threshold }),
          });
          if (!result.answerable) continue;
          if (withGold) {
            answered += 1;
            f1 += hotpotF1(result.answer, question.answer).f1;
          } else falseAnswers += 1;
        }
      }
      const n = questions.length;
      const mark = threshold === DEFAULT_READER_OPTIONS.answerCoverage ? ' (default)' : '';
      const accuracy = (answered + (n - falseAnswers)) / (2 * n);
      process.stdout.write(
        `| ${threshold}${mark} | ${answered}/${n} | ${answered === 0 ? '–' : ((100 * f1) / answered).toFixed(1)} | ${falseAnswers}/${n} | ${(100 * accuracy).toFixed(1)}% |\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`extractive-answerability: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
