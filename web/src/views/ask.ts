/**
 * The ask view: choose a corpus (a bundled one, imported on first use, or files uploaded here into a
 * new corpus with `POST /v1/corpora` and its upload URLs), write a question, set run options from the
 * API's JSON Schema (with the server's defaults), and start the run (`POST /v1/runs`), then go to it.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { request, uploadFile } from '../api';
import type { CorpusEntry, ServerInfo } from '../types';
import { describeError, html } from '../ui';

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
  karFirstK: 'messages the first KAR step reads',
  karStop: 'an answer stands at once (first) or when the next step agrees (confirmed)',
  synchronization: 'round 2 gets the best messages (plain) and the open question (follow-up)',
  karRounds: 'KAR after each round, or only after the last (every round sought)',
  pipelineRounds: 'start the next round while one ends',
  ranking: 'how messages are ordered: model score, hybrid, retrieval',
  coverage: 'seek every chunk (full) or grow from the best',
  coverageFirstChunks: 'chunks sought first, with grow',
  coverageMaxChunks: 'chunks sought at most, with grow',
  reseek: 'round 2 re-seeks all chunks or the promising',
  seekMode: 'seeking calls on demand, or as batch jobs (cheaper, hours)',
};

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

/** The ask form over the server's corpora and run options (`info`: the model and the options' schema). */
export function AskView({ info }: { info: ServerInfo }) {
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
  // Never cut (a textarea's maxlength would, with no notice): a question over the API's limit is
  // kept as typed, said to be too long, and not sent.
  const asked = question.trim();
  const tooLong = asked.length > info.maxQuestionChars;

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
        given[name] = typeof value === 'boolean' || properties[name]?.enum !== undefined ? value : Number(value);
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
        <textarea
          id="question"
          dir="auto"
          rows="3"
          required
          aria-invalid=${tooLong}
          value=${question}
          onInput=${(e: Event) => setQuestion((e.target as HTMLTextAreaElement).value)}
        ></textarea>
        ${
          tooLong &&
          html`<div class="error" role="alert" data-testid="question-too-long">
            The question is ${asked.length.toLocaleString('en-US')} characters; at most ${info.maxQuestionChars.toLocaleString('en-US')} are accepted: shorten it.
          </div>`
        }
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
            if (p.enum !== undefined) {
              // A choice is chosen, not typed: the schema's values, the default first as "default (…)".
              return html`<div>
                <label for=${`opt-${name}`}>${name}</label>
                <select id=${`opt-${name}`} value=${options[name] ?? ''} onChange=${(e: Event) => setOptions({ ...options, [name]: (e.target as HTMLSelectElement).value })}>
                  <option value="">${fallback === undefined ? 'default' : `default (${String(fallback)})`}</option>
                  ${p.enum.map((v) => html`<option value=${String(v)}>${String(v)}</option>`)}
                </select>
                <span class="hint">${OPTION_HINTS[name] ?? ''}</span>
              </div>`;
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
      <button type="submit" disabled=${busy || corpus === '' || asked === '' || tooLong}>${busy ? 'Starting…' : 'Ask'}</button>
    </form>
  `;
}
