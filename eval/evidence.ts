/**
 * Evidence recall: the share of an example's gold evidence units (HotpotQA supporting paragraphs,
 * SOTU evidence quotes, CMRC answer spans) present in a strategy's final reasoning context. Not an
 * official metric of any benchmark; it tells a retrieval miss (the evidence never reached the
 * reasoning agent) from a reasoning miss.
 */
import type { Message } from '../shared/types';
import type { GoldEvidence } from './datasets';

/**
 * Units: gold evidence items are grouped into units by their location: (document, start, end) when
 * they have offsets (HotpotQA supporting facts of one paragraph share their paragraph's offsets, so
 * a paragraph counts once), else their quote, else their title.
 *
 * A unit is present when
 * - with offsets: a quote of a context message lies in the same document and overlaps `[start, end)`;
 * - else with a quote: the quote (white space collapsed) occurs in a context message's evidence or quotes;
 * - else with a title: the title occurs in a context message's evidence (case-insensitive).
 * A message whose evidence was trimmed to a budget keeps its quotes, so a unit in its cut-off part may
 * count as present (strategies that cut corpus text, `direct` and `rag`, recompute the quotes).
 * @returns a fraction in [0, 1], or null when the example has no gold evidence.
 */
export function evidenceRecall(gold: readonly GoldEvidence[], context: readonly Message[]): number | null {
  const units = new Map<string, GoldEvidence>();
  for (const e of gold) {
    const key =
      e.documentId !== undefined && e.start !== undefined && e.end !== undefined
        ? `span\u0000${e.documentId}\u0000${e.start}\u0000${e.end}`
        : e.quote !== undefined
          ? `quote\u0000${e.quote}`
          : e.title !== undefined
            ? `title\u0000${e.title}`
            : undefined;
    if (key !== undefined && !units.has(key)) units.set(key, e);
  }
  if (units.size === 0) return null;
  const quotes = context.flatMap((m) => m.quotes);
  const texts = context.flatMap((m) => [m.evidence, ...m.quotes.map((q) => q.text)]).map(collapse);
  const lower = context.map((m) => m.evidence.toLowerCase());
  let present = 0;
  for (const u of units.values()) {
    let found: boolean;
    if (u.documentId !== undefined && u.start !== undefined && u.end !== undefined) {
      const { documentId, start, end } = u;
      found = quotes.some((q) => q.documentId === documentId && q.start < end && q.end > start);
    } else if (u.quote !== undefined) {
      const quote = collapse(u.quote);
      found = texts.some((t) => t.includes(quote));
    } else {
      const title = (u.title ?? '').toLowerCase();
      found = lower.some((t) => t.includes(title));
    }
    if (found) present++;
  }
  return present / units.size;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
