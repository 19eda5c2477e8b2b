/**
 * The page's client of `extagents serve`: the bearer token (kept in sessionStorage for the tab),
 * JSON requests with typed errors, uploads with progress, and the run event stream
 * (`GET /v1/runs/{runId}/events`) read with fetch so that it can send the Authorization header
 * (the browser's EventSource cannot), with `Last-Event-ID` on reconnect.
 */

const TOKEN_KEY = 'extagents.token';

/** The token of this tab, if any. */
export function getToken(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

/** Keep (or, with undefined, forget) the token for this tab. */
export function setToken(token: string | undefined): void {
  if (token === undefined) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** The token of a login URL (`/#token=<token>` as `serve` prints it), removed from the address bar. */
export function takeTokenFromUrl(): void {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!match) return;
  setToken(decodeURIComponent(match[1]));
  history.replaceState(null, '', `${location.pathname}${location.search}#/`);
}

/** The server refused the token (401): the page asks for it again. */
export class UnauthorizedError extends Error {
  override readonly name = 'UnauthorizedError';
}

/** The server answered with an error (problem+json `detail` as the message). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** The server could not be reached (stopped, or the network failed). */
export class ServerUnreachableError extends Error {
  override readonly name = 'ServerUnreachableError';
}

/** Listeners told when a request is refused with 401 (the app shows the login). */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

function authHeaders(): Record<string, string> {
  const token = getToken();
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

async function errorOf(response: Response): Promise<Error> {
  let detail = `${response.status} ${response.statusText}`;
  try {
    const problem = (await response.json()) as { detail?: string; title?: string };
    detail = problem.detail ?? problem.title ?? detail;
  } catch {
    // not JSON
  }
  if (response.status === 401) {
    for (const listener of unauthorizedListeners) listener();
    return new UnauthorizedError(detail);
  }
  return new ApiError(detail, response.status);
}

/**
 * A JSON request to the server.
 * @throws UnauthorizedError (401), ApiError (other error statuses), ServerUnreachableError.
 */
export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: { ...authHeaders(), ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new ServerUnreachableError(
      `The server at ${location.host} does not answer (${error instanceof Error ? error.message : String(error)}): is \`extagents serve\` still running?`,
    );
  }
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

/** PUT a file to an upload URL, reporting bytes sent (XMLHttpRequest: fetch has no upload progress). */
export function uploadFile(url: string, method: string, headers: Record<string, string>, file: Blob, onProgress: (sent: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [name, value] of Object.entries(headers)) {
      // The browser sets Content-Length itself and refuses to be told.
      if (name.toLowerCase() !== 'content-length') xhr.setRequestHeader(name, value);
    }
    xhr.upload.onprogress = (event) => onProgress(event.loaded);
    xhr.onload = () =>
      xhr.status >= 200 && xhr.status < 300
        ? resolve()
        : reject(new ApiError(`Upload of ${url.split('?')[0].split('/').pop() ?? 'file'} failed: ${xhr.status} ${xhr.responseText.slice(0, 300)}`, xhr.status));
    xhr.onerror = () => reject(new ServerUnreachableError('The upload could not reach the server'));
    xhr.send(file);
  });
}

/** One event of the run stream. */
export interface StreamEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/**
 * Follow `GET /v1/runs/{runId}/events` until the `end` event or until the stream drops.
 * @returns how it stopped: `ended` after `end`, `dropped` otherwise (then poll, or call again with
 *   the last id), `aborted` by `signal`.
 * @throws UnauthorizedError / ApiError when the stream is refused before it starts.
 */
export async function followEvents(
  runId: string,
  lastEventId: string | undefined,
  onEvent: (event: StreamEvent) => void,
  signal: AbortSignal,
): Promise<'ended' | 'dropped' | 'aborted'> {
  let response: Response;
  try {
    response = await fetch(`/v1/runs/${encodeURIComponent(runId)}/events`, {
      headers: { ...authHeaders(), accept: 'text/event-stream', ...(lastEventId !== undefined && { 'last-event-id': lastEventId }) },
      signal,
    });
  } catch {
    return signal.aborted ? 'aborted' : 'dropped';
  }
  if (!response.ok) throw await errorOf(response);
  if (!response.body) return 'dropped';
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let ended = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          if (colon < 0) continue;
          fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
        }
        if (fields.event === undefined || fields.data === undefined) continue;
        const event = { id: fields.id ?? '', type: fields.event, data: JSON.parse(fields.data) as Record<string, unknown> };
        if (event.type === 'end') ended = true;
        onEvent(event);
      }
    }
  } catch {
    return signal.aborted ? 'aborted' : 'dropped';
  }
  return ended ? 'ended' : signal.aborted ? 'aborted' : 'dropped';
}
