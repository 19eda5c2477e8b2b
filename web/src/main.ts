/**
 * The web page of `extagents serve`: ask a question over a corpus, watch the run live (seeking per
 * round, synchronization, each KAR step), and inspect why it answered (citations opened in their
 * documents, the scored message pool per round and which messages each KAR step read, skipped
 * documents, failed chunks, usage, warnings); the runs of the server; surveys.
 *
 * Preact + htm (tagged templates, no JSX transform), bundled by esbuild (web/build.mjs) into
 * web/dist/, which `serve` answers at `/`. Views are chosen by the URL fragment (`#/`, `#/runs`,
 * `#/runs/<runId>`, `#/surveys`), so a reload shows the same run.
 *
 * This file is the entry: it takes a token given in the page's URL, keeps the API's expected
 * rejections (a refused token, a server gone) from being reported as unhandled, and mounts the page
 * (app.ts: the login and the frame). Routing is router.ts; the views are views/ (ask, runs, run,
 * inspect, document, login) and survey.ts; the live state of a run is live.ts; what the views share
 * is ui.ts; the server's API is api.ts, its types types.ts.
 */
import { render } from 'preact';
import { ServerUnreachableError, takeTokenFromUrl, UnauthorizedError } from './api';
import { App } from './app';
import { html } from './ui';

takeTokenFromUrl();
addEventListener('unhandledrejection', (event) => {
  if (event.reason instanceof UnauthorizedError || event.reason instanceof ServerUnreachableError) event.preventDefault();
});
render(html`<${App} />`, document.getElementById('app') as HTMLElement);
