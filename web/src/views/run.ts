/**
 * The run view: one run watched live (the event stream, applied by live.ts; polling the status when
 * the stream is lost, then trying it again): the rounds of seeking with their chunks, the
 * synchronizations, each KAR step, and a Cancel button while it runs (`POST /v1/runs/{runId}/cancel`:
 * the run ends ABORTED and stays resumable); once it has ended, its message pool and why it answered
 * (views/inspect.ts).
 */
import { useEffect, useState } from 'preact/hooks';
import { followEvents, request, UnauthorizedError } from '../api';
import { applyEvent, applyStatus, EMPTY_LIVE, type LiveState } from '../live';
import type { Message, RunStatus } from '../types';
import { count, describeError, html, roundRange, StatusBadge } from '../ui';
import { Inspect } from './inspect';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Messages of a run in pool order, all pages (at most `max`). */
async function loadPool(runId: string, max = 2000): Promise<{ messages: Message[]; truncated: boolean }> {
  const messages: Message[] = [];
  let cursor: string | null = null;
  do {
    const page: { messages: Message[]; nextCursor: string | null } = await request(
      'GET',
      `/v1/runs/${encodeURIComponent(runId)}/messages?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    );
    messages.push(...page.messages);
    cursor = page.nextCursor;
  } while (cursor !== null && messages.length < max);
  return { messages, truncated: cursor !== null };
}

/** One run, live while it runs, then inspected. */
export function RunView({ runId }: { runId: string }) {
  const [live, setLive] = useState<LiveState>(EMPTY_LIVE);
  const [final, setFinal] = useState<RunStatus | undefined>();
  const [connection, setConnection] = useState<'connecting' | 'live' | 'polling' | 'closed'>('connecting');
  const [error, setError] = useState<string | undefined>();
  const [pool, setPool] = useState<{ messages: Message[]; truncated: boolean } | undefined>();
  const [cancelling, setCancelling] = useState(false);

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    let lastId: string | undefined;
    const finish = async () => {
      const status = await request<RunStatus>('GET', `/v1/runs/${encodeURIComponent(runId)}`);
      if (signal.aborted) return;
      setLive((s) => applyStatus(s, status));
      setFinal(status);
      setConnection('closed');
      if (status.result) setPool(await loadPool(runId));
    };
    (async () => {
      const first = await request<RunStatus>('GET', `/v1/runs/${encodeURIComponent(runId)}`);
      if (signal.aborted) return;
      setLive((s) => applyStatus(s, first));
      if (first.status !== 'RUNNING') return finish();
      while (!signal.aborted) {
        setConnection('live');
        const how = await followEvents(
          runId,
          lastId,
          (event) => {
            lastId = event.id;
            setLive((s) => applyEvent(s, event));
          },
          signal,
        );
        if (how === 'aborted') return;
        if (how === 'ended') return finish();
        // The stream dropped: poll the status, then try the stream again.
        setConnection('polling');
        try {
          const status = await request<RunStatus>('GET', `/v1/runs/${encodeURIComponent(runId)}`);
          setError(undefined);
          setLive((s) => applyStatus(s, status));
          if (status.status !== 'RUNNING') return finish();
        } catch (e) {
          if (e instanceof UnauthorizedError) return;
          setError(describeError(e));
        }
        await sleep(1000);
      }
    })().catch((e: unknown) => {
      if (!signal.aborted && !(e instanceof UnauthorizedError)) setError(describeError(e));
    });
    return () => controller.abort();
  }, [runId]);

  // A finished run read without the stream: messages per round from the pool.
  const rounds = Object.values(live.rounds)
    .sort((a, b) => a.round - b.round)
    .map((r) => (r.messages === undefined && pool && !pool.truncated ? { ...r, messages: pool.messages.filter((m) => m.round === r.round).length } : r));
  const steps = Object.entries(live.kar)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([seq, s]) => ({ ...s, seq: Number(seq) }));
  const status = final?.status ?? live.status ?? '…';
  // The stream's end event (or the polling) then shows ABORTED; a run that ended meanwhile answers 409, said as the error.
  const cancel = () => {
    setCancelling(true);
    request('POST', `/v1/runs/${encodeURIComponent(runId)}/cancel`).then(
      () => setError(undefined),
      (e: unknown) => {
        setCancelling(false);
        if (!(e instanceof UnauthorizedError)) setError(describeError(e));
      },
    );
  };
  const question = final?.question ?? live.question ?? undefined;

  return html`
    <p><a href="#/runs">← Runs</a></p>
    <h1 class="question" dir="auto">${question ?? 'Run'}</h1>
    <div class="meta" data-testid="run-meta">
      <${StatusBadge} status=${status} /> <code>${runId}</code>
      ${
        final?.result?.models !== undefined &&
        html` · model <strong data-testid="run-model">${final.result.models.seeker === final.result.models.reasoner ? final.result.models.seeker : `${final.result.models.seeker} (seeking), ${final.result.models.reasoner} (reasoning)`}</strong>`
      }
      ${live.chunks != null && html` · ${live.chunks} chunks, ${live.tokens?.toLocaleString()} tokens`}
      ${connection === 'live' && html` · <span class="live" data-testid="connection">live</span>`}
      ${connection === 'polling' && html` · <span class="warn" data-testid="connection">stream lost — polling</span>`}
      ${
        status === 'RUNNING' &&
        !final &&
        html` · <button type="button" class="secondary" data-testid="cancel" disabled=${cancelling} onClick=${cancel}>${cancelling ? 'Cancelling…' : 'Cancel'}</button>`
      }
    </div>
    ${error && html`<div class="error" role="alert">${error}</div>`}
    <section aria-labelledby="watch-h">
      <h2 id="watch-h">Progress</h2>
      <div aria-live="polite" data-testid="progress">
        ${live.phase === 'preparing' && html`<p>Preparing: reading and chunking the corpus…</p>`}
        ${rounds.map(
          (r) => html`
            ${live.syncs.includes(r.round - 1) && html`<p class="sync" data-testid="sync">Synchronized the pool of ${roundRange(1, r.round - 1)}: the top messages go to every seeking agent of round ${r.round}.</p>`}
            <div class="round" data-testid=${`round-${r.round}`}>
              <div class="round-head">
                <strong>Round ${r.round}</strong>
                <span data-testid="round-count">${r.done} / ${count(r.total, 'chunk')}</span>
                ${r.messages !== undefined && html`<span>${count(r.messages, 'message')}</span>`}
                <span class=${r.failed > 0 ? 'warn' : ''}>${r.failed} failed</span>
              </div>
              <progress max=${r.total || 1} value=${r.done} aria-label=${`Round ${r.round}: ${r.done} of ${r.total} chunks sought`}></progress>
            </div>
          `,
        )}
        ${
          steps.length > 0 &&
          html`<div class="table-wrap">
          <table data-testid="kar-live">
            <caption>
              Knowledge-accumulating reasoning steps
            </caption>
            <thead>
              <tr><th>step</th><th>round</th><th>k</th><th>messages read</th><th>evidence tokens</th><th>outcome</th></tr>
            </thead>
            <tbody>
              ${steps.map(
                (s) => html`<tr>
                  <td>${s.seq}</td><td>${s.round}</td><td>${s.k}</td><td>${s.messagesUsed}</td><td>${s.evidenceTokens}</td>
                  <td><span class=${`badge ${s.outcome}`}>${s.outcome}${s.forced ? ' (best effort)' : ''}</span>${
                    s.followUp !== undefined && html`<div class="meta" data-testid="follow-up" dir="auto">follow-up: ${s.followUp}</div>`
                  }</td>
                </tr>`,
              )}
            </tbody>
          </table>
        </div>`
        }
      </div>
    </section>
    ${final && html`<${Inspect} status=${final} pool=${pool} steps=${steps} />`}
  `;
}
