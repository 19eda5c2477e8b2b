/**
 * The runs view: the runs of the server's state directory (`GET /_web/runs`), newest first, each
 * with its question, status, start time, and its answer or error, linked to the run view.
 */
import { useEffect, useState } from 'preact/hooks';
import { request } from '../api';
import type { RunListEntry } from '../types';
import { describeError, html, StatusBadge } from '../ui';

/** The list of runs. */
export function RunsView() {
  const [runs, setRuns] = useState<RunListEntry[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    request<{ runs: RunListEntry[] }>('GET', '/_web/runs').then(
      (r) => setRuns(r.runs),
      (e: unknown) => setError(describeError(e)),
    );
  }, []);
  return html`
    <h1>Runs</h1>
    ${error && html`<div class="error" role="alert">${error}</div>`}
    ${runs && runs.length === 0 && html`<p>No run yet. <a href="#/">Ask a question</a>.</p>`}
    ${
      runs &&
      runs.length > 0 &&
      html`<ul class="runs" data-testid="runs">
      ${runs.map(
        (r) => html`<li>
          <a href=${`#/runs/${r.runId}`} dir="auto">${r.question ?? r.runId}</a>
          <div class="meta"><${StatusBadge} status=${r.status} /> <time datetime=${r.startedAt}>${new Date(r.startedAt).toLocaleString()}</time> <code>${r.runId}</code></div>
          ${r.answer !== null && html`<div class="answer-line" dir="auto">${r.answer}</div>`}
          ${r.error !== undefined && html`<div class="answer-line">${r.error}</div>`}
        </li>`,
      )}
    </ul>`
    }
  `;
}
