/**
 * A window of a run's document around a quote (`GET /_web/runs/<runId>/document`, local/services/web.ts),
 * the quote highlighted and scrolled to, widened on demand ("more before", "more after"); opened from
 * a citation or a message of views/inspect.ts.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { request } from '../api';
import type { DocumentWindow } from '../types';
import { describeError, html } from '../ui';

/** A place to open: a document's characters `start`–`end` (UTF-16 units), and the label of what points there. */
export interface DocTarget {
  documentId: string;
  start: number;
  end: number;
  label: string;
}

/** Characters shown either side of a quote at first, and added by each "more". */
const CONTEXT_STEP = 1500;

/** The document panel of `target` in run `runId`; Escape or Close calls `onClose`. */
export function DocumentPanel({ runId, target, onClose }: { runId: string; target: DocTarget; onClose: () => void }) {
  const [context, setContext] = useState(CONTEXT_STEP);
  const [win, setWin] = useState<DocumentWindow | undefined>();
  const [error, setError] = useState<string | undefined>();
  const heading = useRef<HTMLHeadingElement>(null);
  const mark = useRef<HTMLElement>(null);
  useEffect(() => {
    const q = new URLSearchParams({ id: target.documentId, start: String(target.start), end: String(target.end), context: String(context) });
    request<DocumentWindow>('GET', `/_web/runs/${encodeURIComponent(runId)}/document?${q.toString()}`).then(setWin, (e: unknown) => setError(describeError(e)));
  }, [runId, target, context]);
  useEffect(() => heading.current?.focus(), []);
  useEffect(() => {
    if (win && context === CONTEXT_STEP) mark.current?.scrollIntoView({ block: 'center' });
  }, [win]);
  const before = win ? win.text.slice(0, win.start - win.windowStart) : '';
  const quote = win ? win.text.slice(win.start - win.windowStart, win.end - win.windowStart) : '';
  const after = win ? win.text.slice(win.end - win.windowStart) : '';
  return html`<section class="document" aria-labelledby="doc-h" data-testid="document" onKeyDown=${(e: KeyboardEvent) => e.key === 'Escape' && onClose()}>
    <div class="doc-head">
      <h2 id="doc-h" tabindex="-1" ref=${heading}>${target.label} ${target.documentId}</h2>
      <button onClick=${onClose}>Close</button>
    </div>
    ${error && html`<div class="error" role="alert">${error}</div>`}
    ${
      win &&
      html`<p class="meta">
        characters ${win.start.toLocaleString()}–${win.end.toLocaleString()} of ${win.chars.toLocaleString()}${win.format ? ` (${win.format})` : ''}; showing ${win.windowStart.toLocaleString()}–${win.windowEnd.toLocaleString()}
      </p>
      ${win.windowStart > 0 && html`<button class="link" onClick=${() => setContext(context + CONTEXT_STEP)}>more before</button>`}
      <div class="doc-text" dir="auto">${win.windowStart > 0 ? '… ' : ''}${before}<mark ref=${mark} data-testid="highlight">${quote}</mark>${after}${win.windowEnd < win.chars ? ' …' : ''}</div>
      ${win.windowEnd < win.chars && html`<button class="link" onClick=${() => setContext(context + CONTEXT_STEP)}>more after</button>`}`
    }
  </section>`;
}
