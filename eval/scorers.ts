/**
 * Official answer scorers of the benchmarks the evaluation harness uses, written here as pure
 * functions (no I/O, no dependencies). Every score is a fraction in [0, 1] per example; the
 * `mean…` helpers return the mean over examples, also in [0, 1] (multiply by 100 for the published
 * percentages).
 *
 * - HotpotQA answer EM / F1: the official `hotpot_evaluate_v1.py` (SQuAD normalization; if either
 *   normalized side is yes/no/noanswer and they differ, F1 = 0). One gold answer per question.
 *   Source: https://github.com/hotpotqa/hotpot/blob/master/hotpot_evaluate_v1.py
 * - InfiniteBench En.QA token F1 and Zh.QA character F1: `qa_f1_score` / `qa_f1_score_zh` of
 *   InfiniteBench `src/compute_scores.py` (max over the gold answers).
 *   Source: https://github.com/OpenBMB/InfiniteBench/blob/main/src/compute_scores.py
 * - CMRC 2018 F1 / EM: `calc_f1_score` / `calc_em_score` of the official `cmrc2018_evaluate.py`
 *   (max over the gold answers). Source: https://github.com/ymcui/cmrc2018/blob/master/squad-style-data/cmrc2018_evaluate.py
 *
 * Python vs. JavaScript: Python's `str.lower()` and `str.split()` are matched by `toLowerCase()` and
 * a split on Unicode whitespace; Python 3's `\b` is Unicode-aware, so the article rule uses
 * Unicode letter/number look-arounds instead of JavaScript's ASCII-only `\b`.
 */

/** ASCII punctuation: Python's `string.punctuation`. */
export const ASCII_PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

/**
 * The Chinese punctuation of InfiniteBench's `normalize_zh_answer`, character for character (note:
 * it lists "》" but not "《", and the ASCII "." again; kept as is so the scores match).
 */
export const INFINITEBENCH_CN_PUNCTUATION =
  '！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏.';

const ASCII_PUNCTUATION_SET = new Set(ASCII_PUNCTUATION);
const ZH_PUNCTUATION_SET = new Set([...ASCII_PUNCTUATION, ...INFINITEBENCH_CN_PUNCTUATION]);
/** Python 3 `re` `\b(a|an|the)\b` on a str: word characters are Unicode letters, digits and `_`. */
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;
/** Python `str.split()` with no argument: runs of Unicode whitespace (plus the ASCII separators 0x1c-0x1f). */
// oxlint-disable-next-line no-control-regex -- Python's whitespace includes the separators 0x1c-0x1f.
const WHITESPACE = /[\s\x1c-\x1f\x85]+/u;

/** Split like Python's `str.split()`: no empty tokens. */
function pySplit(text: string): string[] {
  return text.split(WHITESPACE).filter((t) => t !== '');
}

/**
 * SQuAD / HotpotQA / InfiniteBench English normalization: lower-case, remove ASCII punctuation,
 * replace the articles a/an/the by a space, collapse whitespace to single spaces (trimmed).
 * @example normalizeAnswer('The  Eiffel-Tower!') === 'eiffeltower'
 */
export function normalizeAnswer(text: string): string {
  const lower = text.toLowerCase();
  let noPunct = '';
  for (const ch of lower) if (!ASCII_PUNCTUATION_SET.has(ch)) noPunct += ch;
  return pySplit(noPunct.replace(ARTICLES, ' ')).join(' ');
}

/**
 * InfiniteBench Chinese normalization: lower-case, remove ASCII and the listed Chinese punctuation,
 * remove all whitespace.
 */
export function normalizeZhAnswer(text: string): string {
  let out = '';
  for (const ch of text.toLowerCase()) if (!ZH_PUNCTUATION_SET.has(ch)) out += ch;
  return pySplit(out).join('');
}

/** Precision, recall and F1 (each in [0, 1]) of one prediction against one gold answer. */
export interface PrfScore {
  f1: number;
  precision: number;
  recall: number;
}

const ZERO: PrfScore = { f1: 0, precision: 0, recall: 0 };

/**
 * Multiset-overlap F1 of two token lists (Counter intersection, as in the official scripts);
 * zero when nothing overlaps (including when either list is empty).
 */
export function tokenOverlapF1(prediction: readonly string[], gold: readonly string[]): PrfScore {
  const counts = new Map<string, number>();
  for (const t of gold) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of prediction) {
    const left = counts.get(t) ?? 0;
    if (left > 0) {
      same += 1;
      counts.set(t, left - 1);
    }
  }
  if (same === 0) return ZERO;
  const precision = same / prediction.length;
  const recall = same / gold.length;
  return { f1: (2 * precision * recall) / (precision + recall), precision, recall };
}

// ---------------------------------------------------------------------------------------------
// HotpotQA
// ---------------------------------------------------------------------------------------------

const HOTPOT_SPECIAL = new Set(['yes', 'no', 'noanswer']);

/** HotpotQA answer exact match: 1 when the normalized strings are equal, else 0. */
export function hotpotExactMatch(prediction: string, gold: string): number {
  return normalizeAnswer(prediction) === normalizeAnswer(gold) ? 1 : 0;
}

/**
 * HotpotQA answer F1: token-multiset overlap of the normalized answers; zero when either normalized
 * side is "yes", "no" or "noanswer" and the two differ.
 */
export function hotpotF1(prediction: string, gold: string): PrfScore {
  const p = normalizeAnswer(prediction);
  const g = normalizeAnswer(gold);
  if ((HOTPOT_SPECIAL.has(p) || HOTPOT_SPECIAL.has(g)) && p !== g) return ZERO;
  return tokenOverlapF1(pySplit(p), pySplit(g));
}

/** Mean scores over a set of questions, fractions in [0, 1]. */
export interface AnswerScores {
  em: number;
  f1: number;
  precision: number;
  recall: number;
  /** Number of gold questions averaged over. */
  count: number;
  /** Gold question ids with no prediction (scored 0, still counted). */
  missing: string[];
}

/**
 * HotpotQA answer EM / F1 averaged over the GOLD questions, as the official script does: a gold
 * question without a prediction scores 0 and is listed in `missing`; predictions for unknown ids
 * are ignored. An empty gold set gives zeros with `count` 0.
 * @param gold question id -> gold answer.
 * @param predictions question id -> predicted answer.
 */
export function scoreHotpotAnswers(gold: ReadonlyMap<string, string>, predictions: ReadonlyMap<string, string>): AnswerScores {
  let em = 0;
  let f1 = 0;
  let precision = 0;
  let recall = 0;
  const missing: string[] = [];
  for (const [id, answer] of gold) {
    const prediction = predictions.get(id);
    if (prediction === undefined) {
      missing.push(id);
      continue;
    }
    em += hotpotExactMatch(prediction, answer);
    const s = hotpotF1(prediction, answer);
    f1 += s.f1;
    precision += s.precision;
    recall += s.recall;
  }
  const n = gold.size;
  const mean = (x: number): number => (n === 0 ? 0 : x / n);
  return { em: mean(em), f1: mean(f1), precision: mean(precision), recall: mean(recall), count: n, missing };
}

/**
 * Supporting-evidence recall at the title level: the fraction of distinct gold supporting-fact
 * titles found among `retrievedTitles` (1 when there is no gold title). Not an official HotpotQA
 * metric (that is sentence-level supporting-fact EM/F1); used to check whether the evidence the
 * agents kept comes from the gold paragraphs.
 */
export function titleRecall(goldTitles: Iterable<string>, retrievedTitles: Iterable<string>): number {
  const gold = new Set(goldTitles);
  if (gold.size === 0) return 1;
  const got = new Set(retrievedTitles);
  let hit = 0;
  for (const t of gold) if (got.has(t)) hit += 1;
  return hit / gold.size;
}

// ---------------------------------------------------------------------------------------------
// InfiniteBench
// ---------------------------------------------------------------------------------------------

/**
 * InfiniteBench En.QA score of one prediction: the maximum over the gold answers of the token F1
 * of the normalized (`normalizeAnswer`) texts split on whitespace. 0 when there is no gold answer.
 */
export function infiniteBenchEnF1(prediction: string, golds: readonly string[]): number {
  const p = pySplit(normalizeAnswer(prediction));
  let best = 0;
  for (const gold of golds) best = Math.max(best, tokenOverlapF1(p, pySplit(normalizeAnswer(gold))).f1);
  return best;
}

/**
 * InfiniteBench Zh.QA score of one prediction: the maximum over the gold answers of the character
 * F1 (code points) of the normalized (`normalizeZhAnswer`) texts. 0 when there is no gold answer.
 */
export function infiniteBenchZhF1(prediction: string, golds: readonly string[]): number {
  const p = [...normalizeZhAnswer(prediction)];
  let best = 0;
  for (const gold of golds) best = Math.max(best, tokenOverlapF1(p, [...normalizeZhAnswer(gold)]).f1);
  return best;
}

/** The mean of a list of per-example scores (0 for an empty list). */
export function mean(scores: readonly number[]): number {
  return scores.length === 0 ? 0 : scores.reduce((a, b) => a + b, 0) / scores.length;
}

// ---------------------------------------------------------------------------------------------
// CMRC 2018
// ---------------------------------------------------------------------------------------------

/** The official script's `sp_char` list: removed before scoring. */
export const CMRC_PUNCTUATION = [
  '-',
  ':',
  '_',
  '*',
  '^',
  '/',
  '\\',
  '~',
  '`',
  '+',
  '=',
  '，',
  '。',
  '：',
  '？',
  '！',
  '“',
  '”',
  '；',
  '’',
  '《',
  '》',
  '……',
  '·',
  '、',
  '「',
  '」',
  '（',
  '）',
  '－',
  '～',
  '『',
  '』',
] as const;
const CMRC_PUNCTUATION_SET = new Set<string>(CMRC_PUNCTUATION);
/** The CJK range the official script treats as one token per character. */
const CJK = /[\u4e00-\u9fa5]/;
/** Characters of word tokens outside the CJK range: letters (any script) and digits. */
const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * CMRC 2018 mixed segmentation (lower-cased, trimmed): each CJK character (U+4E00-U+9FA5) is a
 * token; each maximal run of other letters/digits (e.g. "ω", "force", "2018") is a token;
 * punctuation, symbols and whitespace separate tokens and are dropped.
 * Differs from the official script, which splits non-CJK runs with NLTK `word_tokenize` and keeps
 * punctuation outside its `sp_char` list as tokens: here all punctuation is removed and a number
 * such as "3.5" becomes "3", "5". On answers that are CJK text with plain words and numbers the
 * two agree.
 */
export function cmrcSegments(text: string): string[] {
  const out: string[] = [];
  let word = '';
  const flush = (): void => {
    if (word !== '') out.push(word);
    word = '';
  };
  for (const ch of text.toLowerCase().trim()) {
    if (CJK.test(ch)) {
      flush();
      out.push(ch);
    } else if (WORD_CHAR.test(ch)) {
      word += ch;
    } else {
      flush();
    }
  }
  flush();
  return out;
}

/** The official `remove_punctuation`: lower-case, trim, drop the `sp_char` characters (single characters; "……" never matches one). */
export function cmrcRemovePunctuation(text: string): string {
  let out = '';
  for (const ch of text.toLowerCase().trim()) if (!CMRC_PUNCTUATION_SET.has(ch)) out += ch;
  return out;
}

/**
 * Length of the longest common CONTIGUOUS run of tokens, as the official `find_lcs` computes it
 * (despite its name, a longest common substring over segments, not a subsequence). O(n·m) time,
 * O(m) memory.
 */
export function longestCommonRun(a: readonly string[], b: readonly string[]): number {
  let best = 0;
  // Typed rows: zero-filled, and run lengths are small integers.
  let prev = new Int32Array(b.length + 1);
  for (let i = 0; i < a.length; i++) {
    const row = new Int32Array(b.length + 1);
    for (let j = 0; j < b.length; j++) {
      if (a[i] === b[j]) {
        row[j + 1] = prev[j] + 1;
        if (row[j + 1] > best) best = row[j + 1];
      }
    }
    prev = row;
  }
  return best;
}

/**
 * CMRC 2018 F1 of one prediction: max over the gold answers of the F1 whose overlap is the longest
 * common run of `cmrcSegments` (precision = run / prediction segments, recall = run / gold segments).
 */
export function cmrcF1(prediction: string, golds: readonly string[]): number {
  const p = cmrcSegments(prediction);
  let best = 0;
  for (const gold of golds) {
    const g = cmrcSegments(gold);
    const run = longestCommonRun(g, p);
    if (run === 0) continue;
    const precision = run / p.length;
    const recall = run / g.length;
    best = Math.max(best, (2 * precision * recall) / (precision + recall));
  }
  return best;
}

/** CMRC 2018 EM of one prediction: 1 when it equals a gold answer after `cmrcRemovePunctuation`, else 0. */
export function cmrcExactMatch(prediction: string, golds: readonly string[]): number {
  const p = cmrcRemovePunctuation(prediction);
  return golds.some((g) => cmrcRemovePunctuation(g) === p) ? 1 : 0;
}
