/**
 * The stopping rule of knowledge-accumulating reasoning (paper 2B; docs/CONCEPTS.md, "When an answer
 * stands"). In the paper the reasoning agent's own "I can answer" ends KAR; a small model says it
 * from one message that holds only half of a two-step question, or writes a number no document
 * holds. So an answer of a KAR step stands only when both checks below pass:
 *
 * - **Support** (every run, every provider): the answer's words are in the quotes of the messages it
 *   cites ({@link answerSupport}): every number of the answer, and at least half of its other
 *   content terms (stemmed, stop words dropped; CJK text by character bigrams). A yes or no (which no
 *   sentence holds as words) is supported by any cited message. An answer its quotes do not hold is
 *   never accepted: KAR reads on, and a best-effort answer that fails it is refused with the guess
 *   shown apart (`RunResult.unsupportedAnswer`).
 * - **A sufficiency check** (run option `karStop: 'checked'`): one short call of the reasoning agent
 *   must say that the cited passages state the answer ({@link checkedVerdict}; "Sufficient Context",
 *   arXiv 2411.06037); a "no" reads on as an unconfirmed answer.
 * - **Confirmation** (run option `karStop: 'confirmed'`): the answer of step k stands when the next
 *   step, reading 2k messages, gives the same answer ({@link sameAnswer}), or when no wider step
 *   exists (the step read the whole pool, or the reasoning budget already cut it). Under
 *   `karStop: 'first'` (the paper's rule) the first supported answer stands.
 *
 * Pure functions: the workflow's Reason task (shared/pipeline/reason.ts) and the eval's in-memory
 * loop (eval/strategies/extagents.ts) call the same {@link judgeAnswer}.
 */
import { foldedWords, OFFERS_CHOICE } from './llm/parse';
import { retrievalTerms } from './extractive/text';
import type { Message } from './types';
import type { KarStopRule } from './kar';

/** Share of an answer's non-number content terms its cited quotes must hold (numbers: all of them). */
export const MIN_SUPPORTED_SHARE = 0.5;

/** A yes-or-no answer, alone or with a short tail ("Yes, both are"). */
const YES_NO = /^\s*(yes|no)\b/i;
/** A number term (digits, with an inner decimal point). */
const NUMBER_TERM = /^\p{N}+(?:\.\p{N}+)*$/u;

/** Whether an answer is supported by its cited quotes, and why not. */
export type Support = { supported: true } | { supported: false; reason: string };

/**
 * The text a message's citations hold: its quotes (verbatim document text), or its evidence when it
 * has none (a free-form reply whose quotes were not located).
 */
export function quotedText(message: Pick<Message, 'quotes' | 'evidence'>): string {
  return message.quotes.length > 0 ? message.quotes.map((q) => q.text).join('\n') : message.evidence;
}

/**
 * Whether `answer` is held by the quotes of `cited` (see the file comment, "Support").
 * The question's own words count as held when it offers a choice ("A or B", "which of"), whose
 * answer is one of them.
 * @param answer the reasoning agent's answer (not "NO ANSWER").
 * @param question the run's question.
 * @param cited the messages the answer cites (none: unsupported).
 * @returns `{supported: true}` or `{supported: false, reason}`, the reason naming what is missing.
 */
export function answerSupport(answer: string, question: string, cited: readonly Pick<Message, 'quotes' | 'evidence'>[]): Support {
  if (cited.length === 0) return { supported: false, reason: 'it cites no message' };
  if (YES_NO.test(answer) && retrievalTerms(answer.replace(YES_NO, '')).length === 0) return { supported: true };
  const terms = [...new Set(retrievalTerms(answer))];
  if (terms.length === 0) return { supported: false, reason: 'it has no content word to find in its citations' };
  const held = new Set(retrievalTerms(cited.map(quotedText).join('\n')));
  if (OFFERS_CHOICE.test(question)) for (const t of retrievalTerms(question)) held.add(t);
  const numbers = terms.filter((t) => NUMBER_TERM.test(t));
  const missingNumbers = numbers.filter((t) => !held.has(t));
  if (missingNumbers.length > 0) {
    return { supported: false, reason: `its cited quotes do not hold ${missingNumbers.map((n) => JSON.stringify(n)).join(', ')}` };
  }
  const words = terms.filter((t) => !NUMBER_TERM.test(t));
  const found = words.filter((t) => held.has(t)).length;
  if (words.length > 0 && found < MIN_SUPPORTED_SHARE * words.length) {
    return { supported: false, reason: `its cited quotes hold ${found} of its ${words.length} content word(s)` };
  }
  return { supported: true };
}

/**
 * Whether two answers of the reasoning agent say the same thing: both yes, both no, or the content
 * terms of one contain those of the other ("Hilo" and "Hilo, Hawaii"; "1903" and "in 1903").
 * Two answers with no content term are the same when their folded text is.
 */
export function sameAnswer(a: string, b: string): boolean {
  const yes = (t: string): string | undefined => YES_NO.exec(t)?.[1]?.toLowerCase();
  if (yes(a) !== undefined || yes(b) !== undefined) return yes(a) === yes(b);
  const ta = new Set(retrievalTerms(a));
  const tb = new Set(retrievalTerms(b));
  if (ta.size === 0 || tb.size === 0) return foldedWords(a) === foldedWords(b);
  const within = (x: Set<string>, y: Set<string>): boolean => [...x].every((t) => y.has(t));
  return within(ta, tb) || within(tb, ta);
}

/**
 * The messages an answer cites, among those its step gave: those named (in the step's order), or
 * every message given when it names none (an answer read from them all).
 */
export function citedAmong<M extends { id: string }>(given: readonly M[], citedIds: readonly string[]): M[] {
  const cited = given.filter((m) => citedIds.includes(m.id));
  return cited.length > 0 ? cited : [...given];
}

/** What a KAR step's answer is worth under the stopping rule. */
export type AnswerVerdict = { outcome: 'answered' } | { outcome: 'unsupported'; reason: string } | { outcome: 'unconfirmed'; reason: string };

/**
 * The stopping rule applied to one KAR step's answer (see the file comment).
 * @param input.answer the answer; `question` the run's question; `cited` the messages it cites.
 * @param input.rule the run option `karStop`.
 * @param input.previousAnswer the answer of the previous step of the same round when that step
 *   answered (supported, awaiting confirmation), else undefined.
 * @param input.widest true when no wider step exists: the step read the whole pool, the reasoning
 *   budget cut it, or it is the best-effort answer.
 * @returns `answered` (it stands), `unsupported` (its quotes do not hold it) or `unconfirmed`
 *   (supported; the next, wider step must give it again).
 */
export function judgeAnswer(input: {
  answer: string;
  question: string;
  cited: readonly Pick<Message, 'quotes' | 'evidence'>[];
  rule: KarStopRule;
  previousAnswer: string | undefined;
  widest: boolean;
}): AnswerVerdict {
  const support = answerSupport(input.answer, input.question, input.cited);
  if (!support.supported) return { outcome: 'unsupported', reason: support.reason };
  // 'checked' is decided by the sufficiency check's reply (`checkedVerdict`), after this.
  if (input.rule !== 'confirmed' || input.widest) return { outcome: 'answered' };
  if (input.previousAnswer !== undefined && sameAnswer(input.previousAnswer, input.answer)) return { outcome: 'answered' };
  return {
    outcome: 'unconfirmed',
    reason:
      input.previousAnswer === undefined
        ? 'the next step, with twice the messages, must give it again'
        : `the step before answered ${JSON.stringify(input.previousAnswer)}; the next step must agree`,
  };
}

/**
 * The verdict on a supported answer after the sufficiency check (`karStop: 'checked'`): `no` makes it
 * `unconfirmed` (KAR reads on, and the next step's answer is checked in turn); `yes` and `unknown`
 * (a reply that is neither) let it stand.
 */
export function checkedVerdict(check: 'yes' | 'no' | 'unknown'): AnswerVerdict {
  return check === 'no' ? { outcome: 'unconfirmed', reason: 'the sufficiency check says its cited passages do not state it' } : { outcome: 'answered' };
}
