/**
 * The extractive reader: the offline, deterministic default model of local mode. It is NOT an LLM:
 * it plays both agent roles of ExtAgents (paper, section 2A) with lexical relevance of sentences.
 *
 * - Seeking agent: BM25 ranks the chunk's sentences against the question; the evidence is the best
 *   few sentences, verbatim, with their offsets; the relevance score is the weighted share of the
 *   question's content terms that the evidence covers (see `ExtractiveReader.seek`).
 * - Reasoning agent (knowledge-accumulating reasoning, paper 2B): answers with the best-supported
 *   sentence(s) of the given messages, or refuses with "NO ANSWER" so that KAR widens k.
 */
import { createHash } from 'node:crypto';
import { NotFoundError } from '../errors';
import type { AgentModel, BlobStore, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../ports';
import { countTokens } from '../tokenizer';
import { NO_ANSWER, type Message, type RoleUsage } from '../types';
import { analyzeQuestion, DEFAULT_EXPANSION, type ExpansionOptions, expandQuery, type QuestionAnalysis, type WeightedQuery } from './query';
import {
  ANALYSIS_VERSION,
  type AnalyzedSentence,
  analyzeText,
  coverage,
  hasAnswerCandidate,
  parseAnalysis,
  SentenceIndex,
  serializeAnalysis,
  unionTerms,
} from './relevance';

/** What the reader may use besides its options. */
export interface ExtractiveReaderDeps {
  /**
   * Where the sentence analysis of each chunk read (its sentences with their terms: most of a
   * seeking agent's work, e.g. 2.7 s of the 278 SOTU chunks) is kept, by the chunk text's content
   * (`analysisKey`, beside the chunk cache), so that it is made once per chunk and every later
   * question over that chunk (a warm run, a job) reads it. Without it, every seek analyzes its chunk.
   */
  analyses?: BlobStore;
  /** How a chunk text is analyzed (default `analyzeText`): a seam for tests that count the analyses a run makes. */
  analyze?: (text: string) => AnalyzedSentence[];
}

/**
 * A text that exercises what the analysis depends on outside this code: the sentence boundaries of
 * `Intl.Segmenter` (the ICU of the Node that runs), the stop-word list (stopword) and the stemmer
 * (wink-porter2-stemmer). Its analysis is part of the cache key (`analysisFingerprint`), so an
 * upgrade of any of them that changes it reads no analysis made before.
 */
const FINGERPRINT_TEXT =
  'Mr. Jefferson wrote to Congress in 1791: the villages were known as the Chickamaugas!\n' +
  '- Generously, the harbours of Baltimore were being deepened; relational nationalization hopefully happened.\n' +
  '2) Is it not what they would have done? 中文句子。Another line without an end\nand a last one.';

let fingerprint: string | undefined;

/**
 * The first 12 hex digits of the SHA-256 of `FINGERPRINT_TEXT`'s serialized analysis, computed once
 * per process. A change of the analysis code itself bumps `ANALYSIS_VERSION` (test/unit/extractive.test.ts
 * pins the analysis of a whole address against it).
 */
export function analysisFingerprint(): string {
  fingerprint ??= createHash('sha256')
    .update(serializeAnalysis(analyzeText(FINGERPRINT_TEXT)))
    .digest('hex')
    .slice(0, 12);
  return fingerprint;
}

/**
 * `cache/extractive/v<ANALYSIS_VERSION>-<analysisFingerprint()>/<SHA-256 of the text>.json`: the
 * stored analysis of one chunk text, which is also all the reader's ranking needs (its `SentenceIndex`
 * scores from it; no index is built or stored).
 */
export const analysisKey = (text: string): string =>
  `cache/extractive/v${ANALYSIS_VERSION}-${analysisFingerprint()}/${createHash('sha256').update(text).digest('hex')}.json`;

/** Tuning of the extractive reader. All coverages are weighted shares of the question's terms (0-1). */
export interface ExtractiveReaderOptions {
  /** BM25 candidates per chunk considered for the evidence. */
  candidates: number;
  /** At most this many sentences in one message's evidence. */
  maxEvidenceSentences: number;
  /** Evidence token cap (o200k tokens); a sentence that would pass it is not added (the first always is). */
  maxEvidenceTokens: number;
  /** A further evidence sentence must add at least this much coverage. */
  minExtraGain: number;
  /** Share of a further sentence's added coverage that counts towards the relevance score. */
  extraGainCredit: number;
  /** Added coverage of a sentence not adjacent to the evidence counts this much when choosing it. */
  nonAdjacentDiscount: number;
  /** Below this calibrated relevance (0-1) the seeking agent reports "no information". */
  minSeekRelevance: number;
  /**
   * The reader's confidence threshold: the reasoning agent answers from one sentence covering at
   * least this much of the question's weighted terms, and below it refuses (`answerable: false`,
   * "NO ANSWER") unless a multi-hop rule holds; every reply states its coverage (`answerBasis`).
   */
  answerCoverage: number;
  /**
   * ... and only when that sentence also covers at least this share of the weight of the question's
   * ordinary terms (those lighter than `rareTermWeight`): a sentence that shares only the question's
   * names ("Millbrook was founded in 1842." for "When did the library of Millbrook open?") is no answer.
   */
  minOrdinaryCoverage: number;
  /** ... or from up to `maxAnswerSentences` sentences covering at least this much together. */
  combinedAnswerCoverage: number;
  /** Each sentence of a combined (multi-hop) answer must cover at least this much on its own. */
  minHopCoverage: number;
  /**
   * A question of several sentences (multi-hop, each hop stated in a sentence) is also answered
   * when every one of its sentences is covered at least this much by one sentence of the messages.
   */
  partCoverage: number;
  /** Each further sentence of a multi-hop answer must add at least this many question terms. */
  minHopTerms: number;
  /** Only a question of at least this many content terms is answered by combining sentences (rule 2). */
  minHopQuestionTerms: number;
  /**
   * Question terms at least this heavy (background weight, nats) are rare (names, words almost never
   * seen in general English: 11.9 = at most ~5 occurrences in SUBTLEX-US's 51 million words); the
   * answer must contain every one of them. A number of one or two digits never is (a label such as
   * "(question 0)"); a longer one (a year) may be.
   */
  rareTermWeight: number;
  /** Sentences combined into one answer, at most. */
  maxAnswerSentences: number;
  /**
   * Comparison questions ("which came first, A or B?"): an alternative is supported when at most
   * two sentences of one message cover at least this share of the alternative's own terms.
   */
  alternativeCoverage: number;
  /** Query expansion from the synchronized messages in rounds >= 2. */
  expansion: ExpansionOptions;
}

/** Defaults, tuned on the State of the Union dev questions (bench/extractive-sotu.ts). */
export const DEFAULT_READER_OPTIONS: ExtractiveReaderOptions = {
  candidates: 20,
  maxEvidenceSentences: 3,
  maxEvidenceTokens: 320,
  minExtraGain: 0.08,
  extraGainCredit: 0.5,
  nonAdjacentDiscount: 0.5,
  minSeekRelevance: 0.15,
  answerCoverage: 0.5,
  minOrdinaryCoverage: 0.25,
  combinedAnswerCoverage: 0.6,
  minHopCoverage: 0.25,
  partCoverage: 0.35,
  minHopTerms: 3,
  minHopQuestionTerms: 10,
  rareTermWeight: 11.9,
  maxAnswerSentences: 3,
  alternativeCoverage: 0.6,
  expansion: DEFAULT_EXPANSION,
};

/**
 * How every answer and refusal of the reader begins its `answerBasis` (shared/ports.ts
 * `ReasonResult`), e.g. "extractive: a sentence chosen by word overlap, covering 72% of the
 * question's weighted words (it answers from 50%)": the answer is a sentence of the corpus, not a
 * reply written by a language model.
 */
export const EXTRACTIVE_BASIS = 'extractive';

/** A share 0-1 as a whole percentage, rounded down so that a share under a threshold never reads as the threshold ("49%", not "50%"). */
const percent = (share: number): string => `${Math.floor(100 * share + 1e-9)}%`;

/** Separator between non-adjacent evidence sentences in a message (a line break). */
const EVIDENCE_SEPARATOR = '\n';

/** One sentence of a message, as the reasoning agent weighs it. */
interface Candidate {
  message: Message;
  sentence: AnalyzedSentence;
  /** Position among all sentences of the request (message order, then sentence order). */
  order: number;
}

/** The reasoning agent's assessment of the support for a question. */
interface Support {
  /** Sentences the answer would use, best first. */
  sentences: Candidate[];
  /** Their joint coverage of the question (0-1). */
  coverage: number;
  /** Whether the support is strong enough to answer. */
  sufficient: boolean;
  /** Rare question terms (stems) the sentences lack: each one makes the support insufficient. */
  missingRare: string[];
  /** True when the best sentence covers enough of the question only through its names (`minOrdinaryCoverage`). */
  ordinaryOnly?: boolean;
  /** The rule of `assessSupport` that chose the sentences: 1 `single`, 2 `combined`, 3 `parts`. */
  rule: 'single' | 'combined' | 'parts';
}

/**
 * Offline extractive reader implementing `AgentModel` (shared/ports.ts). Deterministic (same input,
 * same output), no network, no credentials, no model calls.
 */
export class ExtractiveReader implements AgentModel {
  readonly description = 'extractive (offline BM25 sentence reader, not an LLM)';
  private readonly options: ExtractiveReaderOptions;

  /**
   * @param options overrides of `DEFAULT_READER_OPTIONS` (for tuning and tests).
   * @param deps where chunk analyses are kept (none: analyzed on every seek).
   */
  constructor(
    options: Partial<ExtractiveReaderOptions> = {},
    private readonly deps: ExtractiveReaderDeps = {},
  ) {
    this.options = { ...DEFAULT_READER_OPTIONS, ...options };
  }

  /**
   * The sentences of a chunk text with their terms: read from `deps.analyses` when it was stored
   * there as the analysis of this text, else analyzed and stored (an entry that is not, corrupt or
   * truncated, is overwritten). Ranking reads nothing else: a warm seek analyzes and indexes nothing.
   * @throws StorageError (from the store) when it cannot be read or written.
   */
  private async analysisOf(text: string): Promise<AnalyzedSentence[]> {
    const store = this.deps.analyses;
    const analyze = this.deps.analyze ?? analyzeText;
    if (store === undefined) return analyze(text);
    const key = analysisKey(text);
    try {
      const stored = parseAnalysis(text, await store.getText(key));
      if (stored !== undefined) return stored;
      // Not an analysis of this text (a corrupt or truncated entry): made again and overwritten below.
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    const sentences = analyze(text);
    await store.put(key, serializeAnalysis(sentences), 'application/json');
    return sentences;
  }

  /**
   * Seeking agent (paper 2A): extract the sentences of `request.chunk` most relevant to the question.
   *
   * Relevance score (integer 0-100, comparable across chunks): BM25 is only comparable within one
   * chunk (its IDF and length normalisation are the chunk's), so BM25 only picks the candidate
   * sentences, and the score is calibrated on the weighted share of the question's content terms that
   * the evidence covers, each term weighted by its background (general-English) IDF, the same for
   * every chunk: 100 x (coverage of the best sentence + `extraGainCredit` x coverage added by the
   * further sentences, that of a sentence not adjacent to the evidence discounted by
   * `nonAdjacentDiscount`). A comparison question ("A or B?") is scored per alternative (the shared part
   * plus one alternative), the best alternative counting.
   *
   * Round >= 2 (global knowledge synchronization, paper 2B): the query is expanded with salient terms
   * of `request.synchronized` (discounted weights; their credit never exceeds the sentence's
   * coverage of the question itself), and sentences already present in a synchronized message are
   * skipped, so only new evidence is returned.
   *
   * Returns evidence null and score 0 ("no information") when the calibrated relevance is below
   * `minSeekRelevance`. `spans` are `[start, end)` offsets into `request.chunk.text`; the evidence is
   * their texts joined by a line break. Usage: one call; input tokens = question + chunk (+ the
   * synchronized evidence), output tokens = the evidence. Never throws.
   */
  async seek(request: SeekRequest): Promise<SeekResult> {
    const analysis = analyzeQuestion(request.question);
    const synchronized = request.round >= 2 ? request.synchronized : [];
    const usage: RoleUsage = {
      calls: 1,
      inputTokens: countTokens(request.question) + request.chunk.tokens + synchronized.reduce((sum, m) => sum + m.tokens, 0),
      outputTokens: 0,
    };
    const none: SeekResult = { evidence: null, score: 0, spans: [], usage, warnings: [] };

    const index = new SentenceIndex(await this.analysisOf(request.chunk.text));
    // The synchronized evidence as one string (messages separated by a character that never occurs
    // in a sentence), so that "already known" is one substring search per sentence.
    const known = synchronized.map((m) => normalizeSpace(m.evidence)).join('\u0000');
    const knownCache = new Map<number, boolean>();
    const isKnown = (s: AnalyzedSentence): boolean => {
      if (known.length === 0) return false;
      let result = knownCache.get(s.position);
      if (result === undefined) {
        result = known.includes(normalizeSpace(s.text));
        knownCache.set(s.position, result);
      }
      return result;
    };
    const queries = analysis.alternatives.length > 0 ? analysis.alternatives.map((a) => a.query) : [analysis.query];
    let best: Selection | undefined;
    for (const base of queries) {
      const query = expandQuery(base, synchronized, this.options.expansion);
      const selection = this.selectEvidence(index, isKnown, query);
      if (selection !== undefined && (best === undefined || selection.relevance > best.relevance)) best = selection;
    }
    if (best === undefined || best.relevance < this.options.minSeekRelevance) return none;

    const spans = mergeAdjacent(
      [...best.sentences].sort((a, b) => a.position - b.position),
      request.chunk.text,
    );
    const evidence = spans.map((s) => request.chunk.text.slice(s.start, s.end)).join(EVIDENCE_SEPARATOR);
    usage.outputTokens = countTokens(evidence);
    return {
      evidence,
      score: Math.max(1, Math.min(100, Math.round(100 * best.relevance))),
      spans,
      usage,
      warnings: [],
    };
  }

  /**
   * Choose the evidence sentences of one chunk for one (possibly expanded) query: the best BM25
   * candidate by coverage (ties: a sentence naming a candidate answer, then BM25, then position),
   * then up to `maxEvidenceSentences - 1` further sentences that add coverage (neighbours preferred,
   * since they carry the context of the best sentence), within `maxEvidenceTokens`.
   */
  private selectEvidence(index: SentenceIndex, isKnown: (sentence: AnalyzedSentence) => boolean, query: WeightedQuery): Selection | undefined {
    const o = this.options;
    const sentences = index.sentences;
    const ranked = index.rank(query, o.candidates, isKnown);
    if (ranked.length === 0) return undefined;
    const value = (terms: ReadonlySet<string>): number => {
      const c = coverage(terms, query);
      // Expansion terms (round >= 2) add at most the sentence's own question coverage: a bridge
      // entity makes a sentence more relevant only when the sentence also matches the question.
      return c.question + Math.min(c.expansion, c.question);
    };
    const best = ranked
      .map((r) => ({ r, v: value(r.sentence.terms), a: hasAnswerCandidate(r.sentence, query) ? 1 : 0 }))
      .sort((x, y) => y.v - x.v || y.a - x.a || y.r.bm25 - x.r.bm25 || x.r.sentence.position - y.r.sentence.position)[0].r.sentence;
    const chosen: AnalyzedSentence[] = [best];
    let tokens = countTokens(best.text);
    const bestValue = value(best.terms);
    let covered: Set<string> = new Set(best.terms);
    let credit = 0;
    while (chosen.length < o.maxEvidenceSentences) {
      const pool = new Map<number, AnalyzedSentence>();
      for (const r of ranked) pool.set(r.sentence.position, r.sentence);
      for (const c of chosen) {
        for (const n of [sentences[c.position - 1], sentences[c.position + 1]]) {
          if (n !== undefined && !isKnown(n)) pool.set(n.position, n);
        }
      }
      for (const c of chosen) pool.delete(c.position);
      const current = value(covered);
      let pick: { s: AnalyzedSentence; rank: number } | undefined;
      for (const s of [...pool.values()].sort((a, b) => a.position - b.position)) {
        const gain = value(unionTerms([covered, s.terms])) - current;
        const adjacent = chosen.some((c) => Math.abs(c.position - s.position) === 1);
        const rank = adjacent ? gain : gain * o.nonAdjacentDiscount;
        if (pick === undefined || rank > pick.rank) pick = { s, rank };
      }
      if (pick === undefined || pick.rank < o.minExtraGain) break;
      const extraTokens = countTokens(pick.s.text);
      if (tokens + extraTokens > o.maxEvidenceTokens) break;
      chosen.push(pick.s);
      tokens += extraTokens;
      covered = unionTerms([covered, pick.s.terms]);
      // Credit the gain as discounted for choosing it: scattered sentences that each match a few
      // words of the question must not add up to a relevant passage.
      credit += o.extraGainCredit * pick.rank;
    }
    return { sentences: chosen, relevance: bestValue + credit };
  }

  /**
   * Reasoning agent (knowledge-accumulating reasoning, paper 2B): answer from the given messages
   * (best first) with the best-supported sentence(s), verbatim, or refuse.
   *
   * It answers with the sentences that `assessSupport` finds sufficient: one sentence covering most
   * of the question's weighted terms, or sentences of different messages that together cover it (a
   * multi-hop answer), always containing the question's rare terms (names). A comparison question
   * ("which came first, A or B?") is answered with the alternative's text when every alternative is
   * supported (see `alternativeCoverage`): the one whose evidence comes first (or last) in corpus
   * order when the question asks for the earlier (or later) one (this assumes a corpus in
   * chronological order, as the State of the Union addresses are), otherwise the best-supported one.
   *
   * A question asking who ("Who …", "By whom …") is answered only by sentences that name someone
   * the question does not (a capitalised word that is not a number).
   *
   * Otherwise it refuses: `answerable` false, `answer` exactly "NO ANSWER" (`NO_ANSWER`), no
   * citations, so that KAR widens k. With `force` it answers with the best-covering sentence anyway
   * (or the first message's evidence when nothing matches). `citedMessageIds` = the messages whose
   * sentences the answer uses. Every reply says what it is in `answerBasis`, beginning "extractive":
   * which rule chose the sentences and how much of the question's weighted terms they cover, or why
   * it refused (e.g. "extractive: no sentence covers 50% of the question's weighted words (the best
   * covers 31%)"). Usage: one call; input = question + messages, output = the answer. Never throws.
   */
  async reason(request: ReasonRequest): Promise<ReasonResult> {
    const analysis = analyzeQuestion(request.question);
    const usage: RoleUsage = {
      calls: 1,
      inputTokens: countTokens(request.question) + request.messages.reduce((sum, m) => sum + m.tokens, 0),
      outputTokens: 0,
    };
    const candidates: Candidate[] = [];
    for (const message of request.messages) {
      for (const sentence of analyzeText(message.evidence)) {
        candidates.push({ message, sentence, order: candidates.length });
      }
    }
    const answer = (text: string, used: Candidate[], answerBasis: string, warnings: string[] = []): ReasonResult => {
      usage.outputTokens = countTokens(text);
      const cited = [...new Set([...used].sort((a, b) => a.order - b.order).map((c) => c.message.id))];
      return { answerable: true, answer: text, citedMessageIds: cited, usage, warnings, answerBasis };
    };
    const refuse = (answerBasis: string, warnings: string[] = []): ReasonResult => {
      usage.outputTokens = countTokens(NO_ANSWER);
      return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings, answerBasis };
    };
    const o = this.options;

    if (analysis.alternatives.length > 0) {
      const chosen = this.chooseAlternative(analysis, candidates);
      if (chosen !== undefined) {
        const how = analysis.order === null ? 'the best-supported one' : `the one whose evidence comes ${analysis.order} in corpus order`;
        return answer(
          chosen.text,
          chosen.used,
          `${EXTRACTIVE_BASIS}: the question's alternatives were each found in the evidence by word overlap; the answer is ${how}`,
        );
      }
    }
    const support = this.assessSupport(analysis, candidates);
    const covers = `${percent(support.coverage)} of the question's weighted words`;
    // A question asking who: word overlap found the topic, but an answer names someone.
    const nobody = support.sufficient && ASKS_WHO.test(request.question) && !namesSomeone(support.sentences, analysis.query);
    if (nobody && !request.force) {
      return refuse(`${EXTRACTIVE_BASIS}: asked who, but the sentence(s) with the most word overlap (covering ${covers}) name no one the question does not`);
    }
    if (support.sufficient) {
      const what = support.sentences.length === 1 ? 'a sentence' : `${support.sentences.length} sentences`;
      const rule = {
        single: `(it answers from ${percent(o.answerCoverage)})`,
        combined: `together (it answers from ${percent(o.combinedAnswerCoverage)} together)`,
        parts: `(one for each sentence of the question, each covering at least ${percent(o.partCoverage)} of it, linked by a name)`,
      }[support.rule];
      return answer(sentencesText(support.sentences), support.sentences, `${EXTRACTIVE_BASIS}: ${what} chosen by word overlap, covering ${covers} ${rule}`);
    }
    const rareWords = support.missingRare.map((t) => JSON.stringify(t)).join(', ');
    const missing = support.missingRare.length > 0 ? `; it lacks the question's rare word(s) ${rareWords} (names the answer must contain)` : '';
    if (!request.force) {
      return refuse(
        support.ordinaryOnly === true
          ? `${EXTRACTIVE_BASIS}: the best sentence covers ${covers}, but through its names only (under ${percent(o.minOrdinaryCoverage)} of its other words; no sentence covers ${percent(o.answerCoverage)} of them)`
          : support.coverage >= o.answerCoverage && support.missingRare.length > 0
            ? `${EXTRACTIVE_BASIS}: the best sentence covers ${covers} but lacks the question's rare word(s) ${rareWords} (names the answer must contain)`
            : `${EXTRACTIVE_BASIS}: no sentence covers ${percent(o.answerCoverage)} of the question's weighted words (the best covers ${percent(support.coverage)})`,
      );
    }
    if (support.sentences.length > 0) {
      const best = support.sentences.slice(0, 1);
      return answer(
        sentencesText(best),
        best,
        `${EXTRACTIVE_BASIS}, best effort: the sentence with the most word overlap, covering ${covers}${support.coverage < o.answerCoverage ? `, below the ${percent(o.answerCoverage)} it answers from` : ''}${missing}`,
        ['weak support; best sentence given'],
      );
    }
    const first = request.messages[0];
    if (first === undefined) return refuse(`${EXTRACTIVE_BASIS}: no evidence to answer from`, ['no messages to answer from']);
    usage.outputTokens = countTokens(first.evidence);
    return {
      answerable: true,
      answer: first.evidence,
      citedMessageIds: [first.id],
      usage,
      warnings: ['no sentence matches the question; the best message given'],
      answerBasis: `${EXTRACTIVE_BASIS}, best effort: no sentence shares a word with the question; the best message's evidence given`,
    };
  }

  /**
   * How well the candidate sentences support the question (first rule that holds):
   * 1. one sentence covers at least `answerCoverage`, and at least `minOrdinaryCoverage` of the
   *    question's ordinary terms; when the best one covers it only through the question's names, the
   *    best sentence covering `answerCoverage` of the ordinary terms on its own, with its message's
   *    sentence that holds the names, if together they cover `answerCoverage`;
   * 2. multi-hop: greedily combined sentences (at most `maxAnswerSentences`), each covering at least
   *    `minHopCoverage` alone and adding at least `minHopTerms` question terms, cover at least
   *    `combinedAnswerCoverage` together;
   * 3. a question of several sentences: each of its sentences is covered at least `partCoverage`
   *    by one sentence, and the sentences for consecutive parts share a bridge entity (a name or
   *    number that the question does not contain, e.g. the president the first part identifies).
   * In every case the answer must also contain each rare question term (background weight at least
   * `rareTermWeight`: names and words almost never seen in general English); a sentence of the same
   * message that contains a missing rare term is added as context. Deterministic; never throws.
   */
  private assessSupport(analysis: QuestionAnalysis, candidates: readonly Candidate[]): Support {
    const o = this.options;
    const query = analysis.query;
    const value = (terms: ReadonlySet<string>): number => coverage(terms, query).question;
    // A number of one or two digits is a label more often than a name ("(question 0)", "report 12"):
    // never a word the answer must contain, whatever its background weight.
    const isRare = (t: { term: string; weight: number }): boolean => t.weight >= o.rareTermWeight && !/^\p{N}{1,2}$/u.test(t.term);
    const rare = query.terms.filter((t) => t.origin === 'question' && isRare(t)).map((t) => t.term);
    const conclude = (chosen: Candidate[], enough: boolean, rule: Support['rule']): Support => {
      const used = withRareContext(chosen, candidates, rare);
      const covered = unionTerms(used.map((c) => c.sentence.terms));
      const missingRare = rare.filter((t) => !covered.has(t));
      return { sentences: used, coverage: value(covered), sufficient: enough && missingRare.length === 0, missingRare, rule };
    };

    // The question's ordinary (not rare) terms: a sentence sharing only its names is no answer.
    const ordinary = query.terms.filter((t) => t.origin === 'question' && !isRare(t));
    const ordinaryWeight = ordinary.reduce((sum, t) => sum + t.weight, 0);
    const ordinaryValue = (terms: ReadonlySet<string>): number =>
      ordinaryWeight === 0 ? 1 : ordinary.filter((t) => terms.has(t.term)).reduce((sum, t) => sum + t.weight, 0) / ordinaryWeight;

    const ordered = candidates
      .map((c) => ({ c, v: value(c.sentence.terms), a: hasAnswerCandidate(c.sentence, query) ? 1 : 0 }))
      .filter((x) => x.v > 0)
      .sort((x, y) => y.v - x.v || y.a - x.a || x.c.order - y.c.order);
    if (ordered.length === 0) return { sentences: [], coverage: 0, sufficient: false, missingRare: rare, rule: 'single' };
    const first = ordered[0];
    const single = conclude([first.c], first.v >= o.answerCoverage && ordinaryValue(first.c.sentence.terms) >= o.minOrdinaryCoverage, 'single');
    if (single.sufficient) return single;
    // 1b. The best sentence shares only the question's names: the best one that covers `answerCoverage`
    // of the question's ordinary terms on its own, with the sentence of its own message that names
    // what it refers to (rare context), when both together cover `answerCoverage` of the question.
    if (first.v >= o.answerCoverage && single.missingRare.length === 0) {
      const named = ordered.find((x) => ordinaryValue(x.c.sentence.terms) >= o.answerCoverage);
      if (named !== undefined) {
        const withContext = conclude([named.c], true, 'single');
        if (withContext.sufficient && withContext.coverage >= o.answerCoverage) return withContext;
      }
      return { ...single, ordinaryOnly: true };
    }

    // 2. Multi-hop combination of strong sentences (a short question is answered by one sentence:
    // with few terms, two partial matches cover it by chance).
    const hops = ordered.filter((x) => x.v >= o.minHopCoverage);
    const questionTerms = query.terms.filter((t) => t.origin === 'question').length;
    if (hops.length >= 2 && hops[0] === first && questionTerms >= o.minHopQuestionTerms) {
      const chosen = [first];
      let covered: Set<string> = new Set(first.c.sentence.terms);
      while (chosen.length < o.maxAnswerSentences) {
        const current = value(covered);
        let pick: { h: (typeof hops)[number]; gain: number } | undefined;
        for (const h of hops) {
          if (chosen.includes(h)) continue;
          const added = query.terms.filter((t) => t.origin === 'question' && h.c.sentence.terms.has(t.term) && !covered.has(t.term));
          if (added.length < o.minHopTerms) continue;
          const gain = value(unionTerms([covered, h.c.sentence.terms])) - current;
          if (pick === undefined || gain > pick.gain) pick = { h, gain };
        }
        if (pick === undefined) break;
        chosen.push(pick.h);
        covered = unionTerms([covered, pick.h.c.sentence.terms]);
        if (value(covered) >= o.combinedAnswerCoverage) {
          const combined = conclude(
            chosen.map((x) => x.c),
            true,
            'combined',
          );
          if (combined.sufficient) return combined;
          break;
        }
      }
    }

    // 3. One sentence for each sentence of the question, consecutive ones linked by a bridge entity.
    if (analysis.parts.length > 0) {
      const chain = bridgedChain(analysis, candidates, o.partCoverage);
      if (chain !== undefined) {
        // The sentence answering the last part (where the question asks its "what") comes first.
        const parts = conclude([...new Set(chain)].reverse(), true, 'parts');
        if (parts.sufficient) return parts;
      }
    }
    return single;
  }

  /**
   * Comparison questions: when every alternative is supported by at most two sentences of one
   * message (covering at least `alternativeCoverage` of the alternative's own terms), choose one:
   * by corpus order (chunk index, then position in the message) when the question asks for the
   * first or last, otherwise the best-supported. Returns undefined when some alternative lacks
   * support (KAR then widens k).
   */
  private chooseAlternative(analysis: QuestionAnalysis, candidates: readonly Candidate[]): { text: string; used: Candidate[] } | undefined {
    const supports = analysis.alternatives.map((alternative) => {
      let best: { used: Candidate[]; own: number; full: number } | undefined;
      for (const message of new Set(candidates.map((c) => c.message))) {
        const inMessage = candidates.filter((c) => c.message === message);
        for (let i = 0; i < inMessage.length; i++) {
          for (let j = i; j < inMessage.length; j++) {
            const used = i === j ? [inMessage[i]] : [inMessage[i], inMessage[j]];
            const terms = unionTerms(used.map((c) => c.sentence.terms));
            const own = coverage(terms, alternative.own).question;
            const full = coverage(terms, alternative.query).question;
            // Better: more of the alternative's own terms, then of the whole query; a single sentence
            // beats a pair that adds nothing (the pair comes later in this loop order).
            if (best === undefined || own > best.own || (own === best.own && full > best.full)) best = { used, own, full };
          }
        }
      }
      return { alternative, best };
    });
    if (supports.some((s) => s.best === undefined || s.best.own < this.options.alternativeCoverage)) return undefined;
    const supported = supports as Array<{ alternative: (typeof supports)[number]['alternative']; best: { used: Candidate[]; own: number; full: number } }>;
    const position = (s: (typeof supported)[number]): [number, number] => {
      const first = s.best.used[0];
      return [first.message.chunkIndex, first.sentence.start];
    };
    const sorted = [...supported].sort((a, b) => {
      if (analysis.order !== null) {
        const [ca, sa] = position(a);
        const [cb, sb] = position(b);
        const byPosition = ca - cb || sa - sb;
        return analysis.order === 'first' ? byPosition : -byPosition;
      }
      return b.best.full - a.best.full;
    });
    const chosen = sorted[0];
    // The alternative as the question wrote it, without quotation marks around words.
    const text = chosen.alternative.text.replace(/(^|\s)['"‘“]+/g, '$1').replace(/['"’”]+(?=\s|$)/g, '');
    return { text, used: supported.flatMap((s) => s.best.used) };
  }
}

/** A question asking for a person: "Who …", "Whom …", "By whom …". */
const ASKS_WHO = /^\s*(?:(?:by|to|from|with|for|of)\s+)?(?:who|whom)\b/i;

/**
 * Does one of the sentences name someone the question does not: a capitalised word (not a number,
 * not the sentence's first word: `AnalyzedSentence.names`) absent from the question's terms?
 */
function namesSomeone(used: readonly Candidate[], query: WeightedQuery): boolean {
  const asked = new Set(query.terms.map((t) => t.term));
  return used.some((c) => [...c.sentence.names].some((name) => !/\d/.test(name) && !asked.has(name)));
}

/** Evidence chosen from one chunk and its calibrated relevance (0-1). */
interface Selection {
  sentences: AnalyzedSentence[];
  relevance: number;
}

/**
 * The sentences' texts in corpus order (their chunk, then their place in the message's evidence,
 * which keeps its chunk's order), joined by a space: a multi-sentence answer reads as the documents
 * do, whatever order the sentences were chosen in.
 */
function sentencesText(used: readonly Candidate[]): string {
  return [...used]
    .sort((a, b) => a.message.chunkIndex - b.message.chunkIndex || a.message.round - b.message.round || a.sentence.start - b.sentence.start)
    .map((c) => c.sentence.text)
    .join(' ');
}

/**
 * For a question of several sentences (parts): one candidate per part, each covering its part at
 * least `minCoverage`, consecutive ones sharing a bridge entity (a term written as a name or number
 * in one of them, present in the other, absent from the question). The chain with the highest total
 * coverage (dynamic programming over the parts; ties by candidate order), or undefined.
 */
function bridgedChain(analysis: QuestionAnalysis, candidates: readonly Candidate[], minCoverage: number): Candidate[] | undefined {
  const inQuestion = new Set(analysis.query.terms.map((t) => t.term));
  const linked = (a: Candidate, b: Candidate): boolean => {
    if (a === b) return true;
    for (const name of a.sentence.names) if (!inQuestion.has(name) && b.sentence.terms.has(name)) return true;
    for (const name of b.sentence.names) if (!inQuestion.has(name) && a.sentence.terms.has(name)) return true;
    return false;
  };
  // Chains ending at each candidate that covers the current part; the first part starts them.
  let chains: Array<{ last: Candidate; total: number; chain: Candidate[] }> = [];
  for (const [i, part] of analysis.parts.entries()) {
    const next: typeof chains = [];
    for (const c of candidates) {
      const v = coverage(c.sentence.terms, part).question;
      if (v < minCoverage) continue;
      if (i === 0) {
        next.push({ last: c, total: v, chain: [c] });
        continue;
      }
      let best: (typeof chains)[number] | undefined;
      for (const p of chains) {
        if (linked(p.last, c) && (best === undefined || p.total > best.total)) best = p;
      }
      if (best !== undefined) next.push({ last: c, total: best.total + v, chain: [...best.chain, c] });
    }
    if (next.length === 0) return undefined;
    chains = next;
  }
  let best = chains[0];
  for (const p of chains) if (p.total > best.total) best = p;
  return best?.chain;
}

/**
 * `chosen` plus, for each rare term they miss, the first sentence of a chosen sentence's message
 * that contains it (the context that names what the chosen sentence refers to).
 */
function withRareContext(chosen: readonly Candidate[], candidates: readonly Candidate[], rare: readonly string[]): Candidate[] {
  const used = [...chosen];
  const messages = new Set(chosen.map((c) => c.message));
  for (const term of rare) {
    if (used.some((c) => c.sentence.terms.has(term))) continue;
    const context = candidates.find((c) => messages.has(c.message) && c.sentence.terms.has(term));
    if (context !== undefined) used.push(context);
  }
  return used;
}

/** Whitespace collapsed to single spaces (to compare sentence texts with synchronized evidence). */
function normalizeSpace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Spans of sentences sorted by position, adjacent sentences merged into one span. */
function mergeAdjacent(sorted: readonly AnalyzedSentence[], text: string): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number; last: number }> = [];
  for (const s of sorted) {
    const previous = spans[spans.length - 1];
    if (previous !== undefined && previous.last === s.position - 1 && text.slice(previous.end, s.start).trim() === '') {
      previous.end = s.end;
      previous.last = s.position;
    } else {
      spans.push({ start: s.start, end: s.end, last: s.position });
    }
  }
  return spans.map(({ start, end }) => ({ start, end }));
}
