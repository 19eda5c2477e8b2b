/**
 * Routing of the web page: the view is chosen by the URL fragment (`#/` ask, `#/runs` the runs,
 * `#/runs/<runId>` one run, `#/surveys` and `#/surveys/<key>` the surveys), so a reload shows the
 * same view and the browser's back button goes back to the previous one.
 */
import { useEffect, useState } from 'preact/hooks';

/** A view of the page and what it shows. */
export type Route = { view: 'ask' } | { view: 'runs' } | { view: 'run'; runId: string } | { view: 'surveys'; key?: string };

/** The route of a URL fragment (`location.hash`); an unknown one is the ask view. */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const run = /^\/runs\/([A-Za-z0-9._-]+)$/.exec(path);
  if (run) return { view: 'run', runId: run[1] };
  if (path === '/runs') return { view: 'runs' };
  const survey = /^\/surveys(?:\/(.+))?$/.exec(path);
  if (survey) return { view: 'surveys', ...(survey[1] !== undefined && { key: decodeURIComponent(survey[1]) }) };
  return { view: 'ask' };
}

/** The current route, following the URL fragment (`hashchange`). */
export function useRoute(): Route {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  return route;
}
