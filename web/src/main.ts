/**
 * The web page of `extagents serve`: ask a question over a corpus, watch the run live (seeking per
 * round, synchronization, each KAR step), and inspect why it answered (citations opened in their
 * documents, the scored message pool per round and which messages each KAR step read, skipped
 * documents, failed chunks, usage, warnings); the runs of the server; surveys.
 *
 * Preact + htm (tagged templates, no JSX transform), bundled by esbuild (web/build.mjs) into
 * web/dist/, which `serve` answers at `/`. Views are chosen by the URL fragment (`#/`, `#/runs`,
 * `#/runs/<runId>`, `#/surveys`), so a reload shows the same run.
 */
import { h, render } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import {
  ApiError,
  followEvents,
  getToken,
  onUnauthorized,
  request,
  ServerUnreachableError,
  setToken,
  takeTokenFromUrl,
  UnauthorizedError,
  uploadFile,
  type StreamEvent,
} from './api';
import type { Citation, CorpusEntry, DocumentWindow, KarStep, Message, RunListEntry, RunStatus, ServerInfo } from './types';
import { SurveysView } from './survey';

const html = htm.bind(h);

// ---------------------------------------------------------------------------------------------
// Routing and the frame
// ---------------------------------------------------------------------------------------------

type Route = { view: 'ask' } | { view: 'runs' } | { view: 'run'; runId: string } | { view: 'surveys'; key?: string };

function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const run = /^\/runs\/([A-Za-z0-9._-]+)$/.exec(path);
  if (run) return { view: 'run', runId: run[1] };
  if (path === '/runs') return { view: 'runs' };
  const survey = /^\/surveys(?:\/(.+))?$/.exec(path);
  if (survey) return { view: 'surveys', ...(survey[1] !== undefined && { key: decodeURIComponent(survey[1]) }) };
  return { view: 'ask' };
}

function describeError(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (HTTP ${error.status})`;
  if (error instanceof Error) return error.message;
  return String(error);
}

function App() {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const [authed, setAuthed] = useState(getToken() !== undefined);
  const [loginNote, setLoginNote] = useState<string | undefined>();
  const [info, setInfo] = useState<ServerInfo | undefined>();
  const [fatal, setFatal] = useState<string | undefined>();

  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onHash);
    const off = onUnauthorized(() => {
      setToken(undefined);
      setAuthed(false);
      setLoginNote('The server refused the token (401). Enter the token `extagents serve` printed.');
    });
    return () => {
      removeEventListener('hashchange', onHash);
      off();
    };
  }, []);

  useEffect(() => {
    if (!authed) return;
    setFatal(undefined);
    request<ServerInfo>('GET', '/_web/info').then(setInfo, (error: unknown) => {
      if (!(error instanceof UnauthorizedError)) setFatal(describeError(error));
    });
  }, [authed]);

  if (!authed) {
    return html`<${Login}
      note=${loginNote}
      onLogin=${(token: string) => {
        setToken(token);
        setLoginNote(undefined);
        setAuthed(true);
      }}
    />`;
  }
  return html`
    <header class="top">
      <a class="brand" href="#/">ExtAgents</a>
      <nav aria-label="Main">
        <a href="#/" aria-current=${route.view === 'ask' ? 'page' : undefined}>Ask</a>
        <a href="#/runs" aria-current=${route.view === 'runs' || route.view === 'run' ? 'page' : undefined}>Runs</a>
        <a href="#/surveys" aria-current=${route.view === 'surveys' ? 'page' : undefined}>Surveys</a>
      </nav>
      <span class="model" title="The model this server runs">model: <strong data-testid="model">${info?.model ?? '…'}</strong></span>
      <button
        class="link"
        onClick=${() => {
          setToken(undefined);
          setLoginNote(undefined);
          setAuthed(false);
        }}
      >
        Log out
      </button>
    </header>
    <main id="main">
      ${fatal && html`<div class="error" role="alert">${fatal}</div>`}
      ${route.view === 'ask' && info && html`<${AskView} info=${info} />`}
      ${route.view === 'runs' && html`<${RunsView} />`}
      ${route.view === 'run' && html`<${RunView} key=${route.runId} runId=${route.runId} />`}
      ${route.view === 'surveys' && html`<${SurveysView} surveyKey=${route.key} request=${request} />`}
    </main>
  `;
}

function Login({ note, onLogin }: { note?: string; onLogin: (token: string) => void }) {
  const [token, setTokenText] = useState('');
  return html`
    <main id="main" class="login">
      <h1>ExtAgents</h1>
      <form
        onSubmit=${(event: Event) => {
          event.preventDefault();
          if (token.trim() !== '') onLogin(token.trim());
        }}
      >
        ${note && html`<p class="error" role="alert" data-testid="login-note">${note}</p>`}
        <label for="token">Token</label>
        <p class="hint">The bearer token <code>extagents serve</code> printed (or opened with its URL). It is kept for this tab only.</p>
        <input id="token" type="password" autocomplete="off" value=${token} onInput=${(e: Event) => setTokenText((e.target as HTMLInputElement).value)} autofocus />
        <button type="submit">Log in</button>
      </form>
    </main>
  `;
}

// ---------------------------------------------------------------------------------------------
// Ask
// ---------------------------------------------------------------------------------------------

const OPTION_HINTS: Record<string, string> = {
  chunkTokens: 'tokens per chunk (L)',
  rounds: 'seeking rounds',
  reasonerBudgetTokens: 'evidence tokens per KAR step',
  syncBudgetTokens: 'synchronized evidence tokens',
  syncMaxMessages: 'synchronized messages at most',
  bestEffort: 'answer from the best evidence instead of refusing',
  concurrency: 'seeking agents at once',
  toleratedFailurePercentage: 'chunks that may fail, %',
  maxCostUsd: 'refuse runs estimated above, USD',
  quotaRequestsPerMinute: "seeking model's quota, requests/min (sets concurrency)",
  quotaTokensPerMinute: "seeking model's quota, tokens/min (sets concurrency)",
  seekLatencySeconds: 'expected seconds per seek, for the quota',
};

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

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

function AskView({ info }: { info: ServerInfo }) {
  const [corpora, setCorpora] = useState<CorpusEntry[]>([]);
  const [corpus, setCorpus] = useState('');
  const [question, setQuestion] = useState('');
  const [options, setOptions] = useState<Record<string, string | boolean>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [upload, setUpload] = useState<{ sent: number; total: number; corpusId?: string; done: boolean } | undefined>();

  const loadCorpora = useCallback(async (select?: string) => {
    const list = await request<{ corpora: CorpusEntry[] }>('GET', '/_web/corpora');
    setCorpora(list.corpora);
    setCorpus((current) => select ?? (current || list.corpora[0]?.id || ''));
  }, []);
  useEffect(() => {
    loadCorpora().catch((e: unknown) => setError(describeError(e)));
  }, [loadCorpora]);

  const properties = info.runOptionsSchema.properties;

  const onFiles = async (files: FileList | null) => {
    if (!files || files.length === 0) return;
    setError(undefined);
    const list = [...files];
    const total = list.reduce((s, f) => s + f.size, 0);
    setUpload({ sent: 0, total, done: false });
    try {
      const created = await request<{ corpusId: string; uploads: Array<{ path: string; url: string; method: string; headers: Record<string, string> }> }>(
        'POST',
        '/v1/corpora',
        {
          files: list.map((f) => ({ path: f.name, size: f.size, contentType: f.type || 'application/octet-stream' })),
        },
      );
      const sent = new Map<string, number>();
      for (const up of created.uploads) {
        const file = list.find((f) => f.name === up.path) as File;
        await uploadFile(up.url, up.method, up.headers, file, (n) => {
          sent.set(up.path, n);
          setUpload({ sent: [...sent.values()].reduce((a, b) => a + b, 0), total, corpusId: created.corpusId, done: false });
        });
        sent.set(up.path, file.size);
      }
      await loadCorpora(created.corpusId);
      setUpload({ sent: total, total, corpusId: created.corpusId, done: true });
    } catch (e) {
      setUpload(undefined);
      setError(describeError(e));
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const entry = corpora.find((c) => c.id === corpus);
      if (entry?.bundled && !entry.imported) await request('POST', `/_web/corpora/${encodeURIComponent(corpus)}`);
      const given: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(options)) {
        if (value === '' || value === undefined) continue;
        given[name] = typeof value === 'boolean' ? value : Number(value);
      }
      const started = await request<{ runId: string }>('POST', '/v1/runs', { question, corpus: { id: corpus }, options: given });
      location.hash = `#/runs/${started.runId}`;
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  return html`
    <h1>Ask</h1>
    <form class="ask" onSubmit=${submit}>
      <div class="field">
        <label for="corpus">Corpus</label>
        <div class="row">
          <select id="corpus" value=${corpus} onChange=${(e: Event) => setCorpus((e.target as HTMLSelectElement).value)} required>
            ${corpora.map(
              (c) =>
                html`<option value=${c.id} selected=${c.id === corpus}>${c.name} — ${c.bundled && !c.imported ? 'bundled, imported on first use' : `${c.files} file${c.files === 1 ? '' : 's'}, ${formatBytes(c.bytes)}`}</option>`,
            )}
          </select>
          <label class="button secondary" for="files">Upload files…</label>
          <input id="files" class="visually-hidden" type="file" multiple onChange=${(e: Event) => void onFiles((e.target as HTMLInputElement).files)} />
        </div>
        ${
          upload &&
          html`<div class="upload" data-testid="upload">
          <progress max=${upload.total || 1} value=${upload.sent} aria-label="Upload progress"></progress>
          <span>${upload.done ? `Uploaded to new corpus ${upload.corpusId}` : `Uploading ${formatBytes(upload.sent)} of ${formatBytes(upload.total)}`}</span>
        </div>`
        }
      </div>
      <div class="field">
        <label for="question">Question</label>
        <textarea id="question" rows="3" maxlength="8000" required value=${question} onInput=${(e: Event) => setQuestion((e.target as HTMLTextAreaElement).value)}></textarea>
      </div>
      <details class="options">
        <summary>Run options (defaults from the API's schema)</summary>
        <div class="grid">
          ${Object.entries(properties).map(([name, p]) => {
            const fallback = info.runOptionDefaults[name] ?? p.default;
            if (p.type === 'boolean') {
              return html`<label class="check"
                ><input type="checkbox" checked=${options[name] === true || (options[name] === undefined && fallback === true)} onChange=${(e: Event) => setOptions({ ...options, [name]: (e.target as HTMLInputElement).checked })} />
                ${name} <span class="hint">${OPTION_HINTS[name] ?? ''}</span></label
              >`;
            }
            return html`<div>
              <label for=${`opt-${name}`}>${name}</label>
              <input
                id=${`opt-${name}`}
                type="number"
                min=${p.minimum}
                max=${p.maximum}
                step=${p.type === 'integer' ? 1 : 'any'}
                placeholder=${fallback === undefined ? 'none' : String(fallback)}
                value=${options[name] ?? ''}
                onInput=${(e: Event) => setOptions({ ...options, [name]: (e.target as HTMLInputElement).value })}
              />
              <span class="hint">${OPTION_HINTS[name] ?? ''} (${p.minimum ?? '…'}–${p.maximum ?? '…'}${fallback === undefined ? '' : `, default ${String(fallback)}`})</span>
            </div>`;
          })}
        </div>
      </details>
      <p class="hint">Model: <strong>${info.model}</strong>${info.extractive ? ' — the offline extractive reader: it answers with sentences of the corpus chosen by word overlap, and refuses when they cover under half of the question (not a language model)' : ''}</p>
      ${error && html`<div class="error" role="alert">${error}</div>`}
      <button type="submit" disabled=${busy || corpus === '' || question.trim() === ''}>${busy ? 'Starting…' : 'Ask'}</button>
    </form>
  `;
}

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

function StatusBadge({ status }: { status: string }) {
  return html`<span class=${`badge ${status.toLowerCase()}`}>${status}</span>`;
}

function RunsView() {
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
          <a href=${`#/runs/${r.runId}`}>${r.question ?? r.runId}</a>
          <div class="meta"><${StatusBadge} status=${r.status} /> <time datetime=${r.startedAt}>${new Date(r.startedAt).toLocaleString()}</time> <code>${r.runId}</code></div>
          ${r.answer !== null && html`<div class="answer-line">${r.answer}</div>`}
          ${r.error !== undefined && html`<div class="answer-line">${r.error}</div>`}
        </li>`,
      )}
    </ul>`
    }
  `;
}

interface RoundState {
  round: number;
  done: number;
  failed: number;
  total: number;
  messages?: number;
}

interface LiveState {
  status?: string;
  phase?: string;
  question?: string | null;
  chunks?: number | null;
  tokens?: number | null;
  rounds: Record<number, RoundState>;
  syncs: number[];
  kar: Record<number, KarStep>;
  end?: { status: string; answer?: string; error?: { name: string; message: string } };
}

const EMPTY_LIVE: LiveState = { rounds: {}, syncs: [], kar: {} };

function applyEvent(state: LiveState, event: StreamEvent): LiveState {
  const d = event.data;
  switch (event.type) {
    case 'status':
      return {
        ...state,
        status: d.status as string,
        phase: d.phase as string,
        question: d.question as string | null,
        chunks: d.chunks as number | null,
        tokens: d.tokens as number | null,
      };
    case 'seek':
      return { ...state, rounds: { ...state.rounds, [d.round as number]: d as unknown as RoundState } };
    case 'sync':
      return state.syncs.includes(d.round as number) ? state : { ...state, syncs: [...state.syncs, d.round as number] };
    case 'kar':
      return { ...state, kar: { ...state.kar, [d.seq as number]: d as unknown as KarStep } };
    case 'end':
      return { ...state, end: d as LiveState['end'], status: d.status as string };
    default:
      return state;
  }
}

function applyStatus(state: LiveState, status: RunStatus): LiveState {
  const rounds = { ...state.rounds };
  for (const r of status.progress.rounds) {
    const previous = rounds[r.round];
    const failed = status.result?.chunkFailures.filter((f) => f.round === r.round).length ?? previous?.failed ?? 0;
    rounds[r.round] = { round: r.round, done: Math.max(r.sought, previous?.done ?? 0), failed, total: r.total, messages: previous?.messages };
  }
  const kar = { ...state.kar };
  for (const step of status.progress.karSteps) kar[step.seq ?? 0] = step;
  const syncs = status.progress.rounds.filter((r) => r.round > 1).map((r) => r.round - 1);
  return {
    ...state,
    status: status.status,
    phase: status.progress.phase,
    question: status.question ?? state.question,
    chunks: status.progress.chunks,
    tokens: status.progress.tokens,
    rounds,
    syncs: [...new Set([...state.syncs, ...syncs])],
    kar,
  };
}

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

function RunView({ runId }: { runId: string }) {
  const [live, setLive] = useState<LiveState>(EMPTY_LIVE);
  const [final, setFinal] = useState<RunStatus | undefined>();
  const [connection, setConnection] = useState<'connecting' | 'live' | 'polling' | 'closed'>('connecting');
  const [error, setError] = useState<string | undefined>();
  const [pool, setPool] = useState<{ messages: Message[]; truncated: boolean } | undefined>();

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
  const question = final?.question ?? live.question ?? undefined;

  return html`
    <p><a href="#/runs">← Runs</a></p>
    <h1 class="question">${question ?? 'Run'}</h1>
    <div class="meta" data-testid="run-meta">
      <${StatusBadge} status=${status} /> <code>${runId}</code>
      ${live.chunks != null && html` · ${live.chunks} chunks, ${live.tokens?.toLocaleString()} tokens`}
      ${connection === 'live' && html` · <span class="live" data-testid="connection">live</span>`}
      ${connection === 'polling' && html` · <span class="warn" data-testid="connection">stream lost — polling</span>`}
    </div>
    ${error && html`<div class="error" role="alert">${error}</div>`}
    <section aria-labelledby="watch-h">
      <h2 id="watch-h">Progress</h2>
      <div aria-live="polite" data-testid="progress">
        ${live.phase === 'preparing' && html`<p>Preparing: reading and chunking the corpus…</p>`}
        ${rounds.map(
          (r) => html`
            ${live.syncs.includes(r.round - 1) && html`<p class="sync" data-testid="sync">Synchronized the pool of rounds 1–${r.round - 1}: the top messages go to every seeking agent of round ${r.round}.</p>`}
            <div class="round" data-testid=${`round-${r.round}`}>
              <div class="round-head">
                <strong>Round ${r.round}</strong>
                <span data-testid="round-count">${r.done} / ${r.total} chunks</span>
                ${r.messages !== undefined && html`<span>${r.messages} messages</span>`}
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
                  <td><span class=${`badge ${s.outcome}`}>${s.outcome}${s.forced ? ' (best effort)' : ''}</span></td>
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

// ---------------------------------------------------------------------------------------------
// Inspect
// ---------------------------------------------------------------------------------------------

interface DocTarget {
  documentId: string;
  start: number;
  end: number;
  label: string;
}

function Inspect({ status, pool, steps }: { status: RunStatus; pool?: { messages: Message[]; truncated: boolean }; steps: Array<KarStep & { seq: number }> }) {
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
          ? html`<blockquote class="answer" data-testid="answer">${result.answer}</blockquote>`
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
            <q>${c.quote}</q>
          </li>`,
        )}
      </ol>`
      }
    </section>
    ${doc && html`<${DocumentPanel} key=${`${doc.documentId}:${doc.start}`} runId=${status.runId} target=${doc} onClose=${() => setDoc(undefined)} />`}
    <section aria-labelledby="pool-h">
      <h2 id="pool-h">Message pool</h2>
      <p class="hint">
        ${result.poolSize} messages from ${result.chunks} chunks in ${result.rounds} round${result.rounds === 1 ? '' : 's'}, by relevance score (pool order: score, then chunk, then round).
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
                <td>
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
    <div>${message.evidence}</div>
    ${message.quotes.slice(0, 3).map((q) => html`<button class="link" onClick=${() => onOpen({ documentId: q.documentId, start: q.start, end: q.end, label: message.id })}>open chars ${q.start}–${q.end} in ${q.documentId}</button> `)}
  </div>`;
}

/** Characters shown either side of a quote at first, and added by each "more". */
const CONTEXT_STEP = 1500;

function DocumentPanel({ runId, target, onClose }: { runId: string; target: DocTarget; onClose: () => void }) {
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
      <div class="doc-text">${win.windowStart > 0 ? '… ' : ''}${before}<mark ref=${mark} data-testid="highlight">${quote}</mark>${after}${win.windowEnd < win.chars ? ' …' : ''}</div>
      ${win.windowEnd < win.chars && html`<button class="link" onClick=${() => setContext(context + CONTEXT_STEP)}>more after</button>`}`
    }
  </section>`;
}

// ---------------------------------------------------------------------------------------------

takeTokenFromUrl();
addEventListener('unhandledrejection', (event) => {
  if (event.reason instanceof UnauthorizedError || event.reason instanceof ServerUnreachableError) event.preventDefault();
});
render(html`<${App} />`, document.getElementById('app') as HTMLElement);
