/**
 * The frame of the web page: the login until a token is given (and again when the server refuses
 * it), then the header (the views, the server's model, log out) and the view of the current route
 * (router.ts): ask (views/ask.ts), the runs (views/runs.ts), one run (views/run.ts), the surveys
 * (survey.ts).
 */
import { useEffect, useState } from 'preact/hooks';
import { getToken, onUnauthorized, request, setToken, UnauthorizedError } from './api';
import type { ServerInfo } from './types';
import { useRoute } from './router';
import { SurveysView } from './survey';
import { describeError, html } from './ui';
import { AskView } from './views/ask';
import { Login } from './views/login';
import { RunView } from './views/run';
import { RunsView } from './views/runs';

/** The page: the login, or the header and the current view. */
export function App() {
  const route = useRoute();
  const [authed, setAuthed] = useState(getToken() !== undefined);
  const [loginNote, setLoginNote] = useState<string | undefined>();
  const [info, setInfo] = useState<ServerInfo | undefined>();
  const [fatal, setFatal] = useState<string | undefined>();

  // A token the server refuses (401 on any request) brings the login back.
  useEffect(
    () =>
      onUnauthorized(() => {
        setToken(undefined);
        setAuthed(false);
        setLoginNote('The server refused the token (401). Enter the token `extagents serve` printed.');
      }),
    [],
  );

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
