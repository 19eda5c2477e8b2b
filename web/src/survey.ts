/**
 * Surveys on the page: the surveys in the server's bucket (`surveys/…`, written by the survey
 * workflow) and a survey file opened from disk (`survey.md` and its `survey.json`, as
 * `extagents survey` writes them): the outline (sections with scope and citation counts), the
 * sections' text, and each citation linked to its entry in the source list.
 */
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';

const html = htm.bind(h);

type RequestFn = <T>(method: string, path: string, body?: unknown) => Promise<T>;

interface SurveyMeta {
  title?: string;
  topic?: string;
  model?: string;
  extractive?: boolean;
  createdAt?: string;
  words?: number;
  sections?: Array<{ heading: string; scope: string; words: number; citations: number }>;
  warnings?: string[];
}

interface Loaded {
  name: string;
  meta?: SurveyMeta;
  markdown?: string;
}

/** Markdown blocks the survey uses: headings, list items, paragraphs (consecutive plain lines). */
function blocks(markdown: string): Array<{ kind: 'h1' | 'h2' | 'h3' | 'li' | 'p'; text: string }> {
  const out: Array<{ kind: 'h1' | 'h2' | 'h3' | 'li' | 'p'; text: string }> = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) out.push({ kind: 'p', text: paragraph.join(' ') });
    paragraph = [];
  };
  for (const raw of markdown.split('\n')) {
    const line = raw.trim();
    const heading = /^(#{1,3}) (.*)$/.exec(line);
    if (line === '') flush();
    else if (heading) {
      flush();
      out.push({ kind: `h${heading[1].length}` as 'h1' | 'h2' | 'h3', text: heading[2] });
    } else if (/^([-*]|\d+\.) /.test(line)) {
      flush();
      out.push({ kind: 'li', text: line.replace(/^([-*]|\d+\.) /, '') });
    } else paragraph.push(line);
  }
  flush();
  return out;
}

/** Text with `[id]` citations as links to `#src-<id>` where a source list entry names that id. */
function withCitations(raw: string, sourceIds: Set<string>) {
  const text = raw.replace(/\*([^*\s][^*]*)\*/g, '$1').replace(/^_(.+)_$/, '$1');
  const parts = text.split(/(\[[^\]\s]{1,80}\])/g);
  return parts.map((p) => {
    const id = /^\[([^\]\s]{1,80})\]$/.exec(p)?.[1];
    return id !== undefined && sourceIds.has(id) ? html`<a class="cite-link" href=${`#src-${id}`} onClick=${(e: Event) => jump(e, id)}>${p}</a>` : p;
  });
}

function jump(event: Event, id: string): void {
  event.preventDefault(); // the fragment routes the page: scroll instead
  document.getElementById(`src-${id}`)?.scrollIntoView({ block: 'center' });
  document.getElementById(`src-${id}`)?.focus();
}

/** A reference line `[id] Authors (year). *Title*. <link>`: emphasis marks dropped, the link a link. */
function sourceEntry(text: string) {
  const link = /<(https?:\/\/[^>\s]+)>/.exec(text);
  const plain = text
    .replace(/<https?:\/\/[^>\s]+>/, '')
    .replace(/\*([^*]+)\*/g, '$1')
    .trim();
  return link ? html`${plain} <a href=${link[1]} rel="noreferrer noopener" target="_blank">${link[1]}</a>` : plain;
}

/** The survey list and one survey. */
export function SurveysView({ surveyKey, request }: { surveyKey?: string; request: RequestFn }) {
  const [list, setList] = useState<Array<{ key: string; size: number }>>([]);
  const [loaded, setLoaded] = useState<Loaded | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    request<{ surveys: Array<{ key: string; size: number }> }>('GET', '/_web/surveys').then(
      (r) => setList(r.surveys),
      (e: unknown) => setError(String((e as Error).message)),
    );
  }, []);
  useEffect(() => {
    if (surveyKey === undefined) return;
    request<{ metadata: SurveyMeta; markdown: string | null }>('GET', `/_web/survey?key=${encodeURIComponent(surveyKey)}`).then(
      (r) => setLoaded({ name: surveyKey, meta: r.metadata, ...(r.markdown !== null && { markdown: r.markdown }) }),
      (e: unknown) => setError(String((e as Error).message)),
    );
  }, [surveyKey]);

  const openFiles = async (files: FileList | null) => {
    if (!files) return;
    const next: Loaded = { name: [...files].map((f) => f.name).join(' + ') };
    for (const file of files) {
      const text = await file.text();
      if (!file.name.endsWith('.json')) {
        next.markdown = text;
        continue;
      }
      try {
        next.meta = JSON.parse(text) as SurveyMeta;
      } catch (e) {
        setError(`${file.name} is not a survey.json that extagents survey wrote: ${(e as Error).message}`);
        return;
      }
    }
    setError(undefined);
    setLoaded(next);
  };

  return html`
    <h1>Surveys</h1>
    ${error && html`<div class="error" role="alert">${error}</div>`}
    <div class="row">
      <label class="button secondary" for="survey-files">Open a survey (survey.md and survey.json)…</label>
      <input id="survey-files" class="visually-hidden" type="file" multiple accept=".md,.json" onChange=${(e: Event) => void openFiles((e.target as HTMLInputElement).files)} />
    </div>
    ${
      list.length > 0 &&
      html`<h2>In this server's bucket</h2>
      <ul>
        ${list.map((s) => html`<li><a href=${`#/surveys/${encodeURIComponent(s.key)}`}>${s.key}</a></li>`)}
      </ul>`
    }
    ${loaded && html`<${SurveyDocument} loaded=${loaded} />`}
  `;
}

function SurveyDocument({ loaded }: { loaded: Loaded }) {
  const parsed = loaded.markdown ? blocks(loaded.markdown) : [];
  // Source list entries: list items that start with `[id]`.
  const sourceIds = new Set(
    parsed
      .filter((b) => b.kind === 'li')
      .map((b) => /^\[([^\]\s]{1,80})\]/.exec(b.text)?.[1])
      .filter((id): id is string => id !== undefined),
  );
  const meta = loaded.meta;
  return html`<article class="survey" data-testid="survey">
    <p class="meta">${loaded.name}${meta?.model ? ` · model ${meta.model}` : ''}${meta?.createdAt ? ` · ${meta.createdAt}` : ''}${meta?.words ? ` · ${meta.words} words` : ''}</p>
    ${
      meta?.sections &&
      html`<section aria-labelledby="outline-h">
      <h2 id="outline-h">Outline${meta.title ? `: ${meta.title}` : ''}</h2>
      <ol data-testid="outline">
        ${meta.sections.map((s) => html`<li><strong>${s.heading}</strong> — ${s.scope} <span class="meta">(${s.words} words, ${s.citations} citations)</span></li>`)}
      </ol>
    </section>`
    }
    ${parsed.map((b) => {
      const id = b.kind === 'li' ? /^\[([^\]\s]{1,80})\]/.exec(b.text)?.[1] : undefined;
      if (id !== undefined && sourceIds.has(id)) return html`<p class="source" id=${`src-${id}`} tabindex="-1" data-testid="source">${sourceEntry(b.text)}</p>`;
      if (b.kind === 'li') return html`<p class="li">• ${withCitations(b.text, sourceIds)}</p>`;
      return h(b.kind, null, withCitations(b.text, sourceIds));
    })}
    ${meta?.warnings && meta.warnings.length > 0 && html`<h3>Warnings</h3><ul>${meta.warnings.map((w) => html`<li>${w}</li>`)}</ul>`}
  </article>`;
}
