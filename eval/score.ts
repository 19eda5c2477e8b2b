/**
 * Per-example answer scores with each data set's official scorer (eval/scorers.ts), as
 * fractions in [0, 1]: EM and F1, each the maximum over the gold answers.
 *
 * A refusal (`answerable` false: the prediction is the "NO ANSWER" sentinel, not an answer) is
 * scored as no prediction, 0, whatever the scorer: its text is never compared with the gold, where
 * "no" or "answer" (or, for the Chinese character F1, the letters of "NOANSWER") would earn partial
 * credit. The one exception is a SOTU question whose gold is "NO ANSWER" (see `sotu`).
 */
import { NO_ANSWER } from '../shared/types';
import { cmrcExactMatch, cmrcF1, hotpotExactMatch, hotpotF1, infiniteBenchEnF1, infiniteBenchZhF1, normalizeAnswer, normalizeZhAnswer } from './scorers';

/**
 * Which scorer a data set uses:
 * - `hotpotqa`: HotpotQA EM / F1 (`hotpot_evaluate_v1.py`);
 * - `sotu`: the HotpotQA rules, except that a gold "NO ANSWER" (an unanswerable question) scores 1
 *   exactly when the strategy refused (answerable false), else 0;
 * - `en`: InfiniteBench En.QA token F1 (also FairytaleQA and NarrativeQA, free-form English); EM =
 *   equality after the same normalization;
 * - `zh`: InfiniteBench Zh.QA character F1; EM = equality after its normalization;
 * - `cmrc`: CMRC 2018 F1 / EM (`cmrc2018_evaluate.py`).
 */
export type ScorerKind = 'hotpotqa' | 'sotu' | 'en' | 'zh' | 'cmrc';

/** EM and F1 of one prediction against the gold answers (0 for no gold answers). */
export function scoreAnswer(kind: ScorerKind, prediction: string, answerable: boolean, golds: readonly string[]): { em: number; f1: number } {
  if (golds.length === 0) return { em: 0, f1: 0 };
  if (!answerable && kind !== 'sotu') return { em: 0, f1: 0 };
  const max = (f: (gold: string) => number): number => Math.max(0, ...golds.map(f));
  switch (kind) {
    case 'hotpotqa':
      return { em: max((g) => hotpotExactMatch(prediction, g)), f1: max((g) => hotpotF1(prediction, g).f1) };
    case 'sotu': {
      if (golds.some((g) => g.trim().toUpperCase() === NO_ANSWER)) {
        const right = answerable ? 0 : 1;
        return { em: right, f1: right };
      }
      const said = answerable ? prediction : '';
      return { em: max((g) => hotpotExactMatch(said, g)), f1: max((g) => hotpotF1(said, g).f1) };
    }
    case 'en':
      return { em: max((g) => (normalizeAnswer(prediction) === normalizeAnswer(g) ? 1 : 0)), f1: infiniteBenchEnF1(prediction, golds) };
    case 'zh':
      return { em: max((g) => (normalizeZhAnswer(prediction) === normalizeZhAnswer(g) ? 1 : 0)), f1: infiniteBenchZhF1(prediction, golds) };
    case 'cmrc':
      return { em: cmrcExactMatch(prediction, golds), f1: cmrcF1(prediction, golds) };
  }
}
