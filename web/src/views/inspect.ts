/**
 * Why a run answered, under the run view: the answer or the refusal (with the best evidence), its
 * citations opened in their documents (views/document.ts), the scored message pool per round with
 * which messages each KAR step read, skipped documents and failed chunks, usage against the estimate,
 * and warnings; for a run without a result, its error.
 */
import { useMemo, useState } from 'preact/hooks';
import type { Citation, KarStep, Message, RunStatus } from '../types';
import { count, html } from '../ui';
import { DocumentPanel, type DocTarget } from './document';

/** `text` cut to at most `max` UTF-16 units with an ellipsis, never inside a character (grapheme cluster: no half surrogate pair). */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = 0;
  for (const { index } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text.slice(0, max + 16))) {
    if (index > max) break;
    cut = index;
  }
  return `${text.slice(0, cut)}…`;
}

/** A finished run's result (`status`), its message pool (`pool`, loading while undefined) and KAR steps (`steps`, numbered). */
export function Inspect({
  status,
  pool,
  steps,
}: {
  status: RunStatus;
  pool?: { messages: Message[]; truncated: boolean };
  steps: Array<KarStep & { seq: number }>;
}) {
  const [doc, setDoc] = useState<DocTarget | undefined>();
  const [round, setRound] = useState<number | 'all'>('all');
  const [step, setStep] = useState<number | undefined>();
  const result = status.result;

  /** Messages each KAR step read: the first messagesUsed of the pool of rounds up to its own. */
  const readBy = useMemo(() => {
    const map = new Map<string, number[]>();
    if (!pool) return map;
    for (const s of steps) {
      pool.messages
        .filter((m) => m.round <= s.round)
        .slice(0, s.messagesUsed)
        .forEach((m) => map.set(m.id, [...(map.get(m.id) ?? []), s.seq]));
    }
    return map;
  }, [pool, steps]);

  if (!result) {
    return html`<section aria-labelledby="err-h">
      <h2 id="err-h">The run ${status.status === 'RUNNING' ? 'is running' : 'did not finish'}</h2>
      ${status.error && html`<div class="error" role="alert" data-testid="run-error"><strong>${status.error.name}</strong>: ${status.error.message}</div>`}
    </section>`;
  }
  const open = (target: DocTarget) => setDoc(target);
  const rounds = [...new Set(pool?.messages.map((m) => m.round) ?? [])].sort((a, b) => a - b);
  const shown = (pool?.messages ?? []).filter((m) => (round === 'all' || m.round === round) && (step === undefined || (readBy.get(m.id) ?? []).includes(step)));

  return html`
    <section aria-labelledby="answer-h">
      <h2 id="answer-h">Answer</h2>
      ${
        result.answerable
          ? html`<blockquote class="answer" data-testid="answer" dir="auto">${result.answer}</blockquote>`
          : html`<div class="refused-block" data-testid="answer">
            <p>
              <strong>NO ANSWER</strong> —
              ${
                result.poolSize === 0
                  ? `no seeking agent found evidence in any of the ${result.chunks} chunk${result.chunks === 1 ? '' : 's'} (the pool is empty), so no KAR step ran.`
                  : `no KAR step accepted the evidence${result.trace.length > 0 ? ` (${result.trace.length} step${result.trace.length === 1 ? '' : 's'}, up to k = ${Math.max(...result.trace.map((t) => t.k))})` : ''}.`
              }
            </p>
            ${result.poolSize > 0 && html`<h3>Best evidence</h3>`}
            ${
              result.poolSize > 0 &&
              result.citations.length === 0 &&
              html`<ol class="evidence" data-testid="best-evidence">
              ${(pool?.messages ?? []).slice(0, 5).map((m) => html`<li><${MessageCard} message=${m} onOpen=${open} /></li>`)}
            </ol>`
            }
          </div>`
      }
      ${
        result.unsupportedAnswer !== undefined &&
        html`<p class="meta basis" data-testid="unsupported-answer"><strong>Unsupported guess</strong> (best effort; not in the quotes it cites, so refused): <span dir="auto">${result.unsupportedAnswer}</span></p>`
      }
      ${result.answerBasis !== undefined && html`<p class="meta basis" data-testid="answer-basis"><strong>${result.answerable ? 'Answered by' : 'Refused by'}</strong> ${result.answerBasis}</p>`}
      ${
        result.citations.length > 0 &&
        html`<ol class="citations" data-testid="citations">
        ${result.citations.map(
          (c: Citation, i: number) => html`<li>
            <button class="cite" data-testid="citation" onClick=${() => open({ documentId: c.documentId, start: c.start, end: c.end, label: `[${i + 1}]` })}>
              [${i + 1}] ${c.documentId}${c.location ? ` · ${c.location}` : ''}
            </button>
            <span class="meta">chars ${c.start}–${c.end} · chunk ${c.chunkIndex} · round ${c.round} · score ${c.score}</span>
            <q dir="auto">${c.quote}</q>
          </li>`,
        )}
      </ol>`
      }
    </section>
    ${doc && html`<${DocumentPanel} key=${`${doc.documentId}:${doc.start}`} runId=${status.runId} target=${doc} onClose=${() => setDoc(undefined)} />`}
    <section aria-labelledby="pool-h">
      <h2 id="pool-h">Message pool</h2>
      <p class="hint">
        ${count(result.poolSize, 'message')} from ${count(result.chunks, 'chunk')} in ${count(result.rounds, 'round')}, by relevance score (pool order: score, then chunk, then round).
        ${pool?.truncated ? ' Only the first 2,000 are shown.' : ''}
      </p>
      <div class="row filters">
        <label for="round-filter">Round</label>
        <select id="round-filter" value=${String(round)} onChange=${(e: Event) => setRound((e.target as HTMLSelectElement).value === 'all' ? 'all' : Number((e.target as HTMLSelectElement).value))}>
          <option value="all">all rounds</option>
          ${rounds.map((r) => html`<option value=${String(r)}>round ${r}</option>`)}
        </select>
        <label for="step-filter">Read by</label>
        <select id="step-filter" value=${step === undefined ? '' : String(step)} onChange=${(e: Event) => setStep((e.target as HTMLSelectElement).value === '' ? undefined : Number((e.target as HTMLSelectElement).value))}>
          <option value="">any or no KAR step</option>
          ${steps.map((s) => html`<option value=${String(s.seq)}>KAR step ${s.seq} (round ${s.round}, k = ${s.k}, ${s.outcome})</option>`)}
        </select>
      </div>
      ${!pool && html`<p>Loading messages…</p>`}
      ${
        pool &&
        pool.messages.length === 0 &&
        result.poolSize > 0 &&
        html`<p class="hint" data-testid="pool-not-kept">
          This run's ${count(result.poolSize, 'message')} were not kept in this state directory (an <code>ask</code> without <code>--run-id</code> keeps its message pool in memory); its answer, citations and steps above are from its result.
        </p>`
      }
      <div class="table-wrap">
        <table class="pool" data-testid="pool">
          <thead>
            <tr><th>score</th><th>message</th><th>document</th><th>evidence</th><th>read by</th></tr>
          </thead>
          <tbody>
            ${shown.slice(0, 300).map(
              (m) => html`<tr>
                <td class="num">${m.score}</td>
                <td><code>${m.id}</code><br /><span class="meta">chunk ${m.chunkIndex}, round ${m.round}</span></td>
                <td>${m.sources.join(', ')}</td>
                <td dir="auto">
                  ${clip(m.evidence, 400)}
                  ${m.quotes
                    .slice(0, 3)
                    .map(
                      (q) =>
                        html` <button class="link" onClick=${() => open({ documentId: q.documentId, start: q.start, end: q.end, label: m.id })}>open quote in ${q.documentId}</button>`,
                    )}
                </td>
                <td>${(readBy.get(m.id) ?? []).map((s) => `step ${s}`).join(', ') || '—'}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${shown.length > 300 && html`<p class="hint">${shown.length - 300} more not shown; filter by round or KAR step.</p>`}
    </section>
    <section aria-labelledby="issues-h">
      <h2 id="issues-h">Skipped documents and failed chunks</h2>
      ${result.skipped.length === 0 && result.chunkFailures.length === 0 && html`<p>None.</p>`}
      ${result.skipped.length > 0 && html`<ul data-testid="skipped">${result.skipped.map((s) => html`<li><code>${s.documentId}</code>: ${s.reason}</li>`)}</ul>`}
      ${result.chunkFailures.length > 0 && html`<ul data-testid="failed-chunks">${result.chunkFailures.map((f) => html`<li>chunk ${f.chunk} (round ${f.round}): <strong>${f.error}</strong> ${f.message}</li>`)}</ul>`}
    </section>
    <section aria-labelledby="usage-h">
      <h2 id="usage-h">Usage</h2>
      <div class="table-wrap">
        <table data-testid="usage">
          <thead><tr><th>role</th><th>calls</th><th>input tokens</th><th>output tokens</th><th>model time</th><th>estimated before the run, at most</th></tr></thead>
          <tbody>
            ${(['seeker', 'reasoner', 'speculative'] as const).map((role) => {
              const u = role === 'speculative' ? result.usage.speculative : result.usage[role];
              if (u === undefined) return null;
              const e = role === 'speculative' ? undefined : result.estimate?.[role];
              return html`<tr>
                <td>${role === 'speculative' ? 'seeker, speculative (unused)' : role}</td><td class="num">${u.calls}</td><td class="num">${u.inputTokens.toLocaleString()}</td><td class="num">${u.outputTokens.toLocaleString()}</td>
                <td class="num">${u.modelMs === undefined ? '—' : `${(u.modelMs / 1000).toFixed(1)} s`}</td>
                <td class="num">${e ? `${e.calls} calls, ${e.inputTokens.toLocaleString()} / ${e.outputTokens.toLocaleString()} tokens` : '—'}</td>
              </tr>`;
            })}
          </tbody>
        </table>
      </div>
      ${
        status.startedAt &&
        html`<p class="meta" data-testid="run-time">
        Started <time datetime=${status.startedAt}>${new Date(status.startedAt).toLocaleString()}</time>${status.stoppedAt ? `; took ${((Date.parse(status.stoppedAt) - Date.parse(status.startedAt)) / 1000).toFixed(1)} s` : ''}.
      </p>`
      }
      ${result.retries.total > 0 && html`<p>Transient model errors retried: ${result.retries.total}.</p>`}
      <h3>Warnings</h3>
      ${result.warnings.length === 0 ? html`<p>None.</p>` : html`<ul data-testid="warnings">${result.warnings.map((w) => html`<li>${w}</li>`)}</ul>`}
    </section>
  `;
}

function MessageCard({ message, onOpen }: { message: Message; onOpen: (t: DocTarget) => void }) {
  return html`<div class="message">
    <div class="meta">score ${message.score} · <code>${message.id}</code> · ${message.sources.join(', ')}</div>
    <div dir="auto">${message.evidence}</div>
    ${message.quotes.slice(0, 3).map((q) => html`<button class="link" onClick=${() => onOpen({ documentId: q.documentId, start: q.start, end: q.end, label: message.id })}>open chars ${q.start}–${q.end} in ${q.documentId}</button> `)}
  </div>`;
}
