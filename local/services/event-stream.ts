/**
 * The live event stream of `extagents serve` (local/services/serve.ts): `GET /v1/runs/{runId}/events`
 * answered as server-sent events, written from the run's events of the server's event hub
 * (local/services/run-events.ts), with a comment line every {@link SSE_HEARTBEAT_MS} on an idle
 * stream. Local only: the deployed API has no streaming route.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { plainProblem, problemOf, problemResponse, type ApiResponse } from '../../shared/api/problem';
import { MAX_LAST_EVENT_ID_CHARS } from '../../shared/api/openapi';
import { RunIdSchema } from '../../shared/pipeline/state';
import { formatSse, type RunEventHub } from './run-events';

/** `/v1/runs/{runId}/events` (local only: the deployed API has no streaming route). */
export const EVENTS_PATH = /^\/v1\/runs\/([^/]+)\/events$/;
/** A comment line sent on an idle event stream, ms, so that proxies and clients keep it open. */
const SSE_HEARTBEAT_MS = 15_000;

/**
 * `GET /v1/runs/{runId}/events`: the run's events as server-sent events (local/services/run-events.ts),
 * resumed after `Last-Event-ID`; closes after the `end` event. An unknown run is 404 and a bad run id
 * 400 (problem+json), before the stream begins. Resolves with the status sent when the stream ends.
 */
export async function streamEvents(req: IncomingMessage, res: ServerResponse, url: URL, events: RunEventHub): Promise<number> {
  const send = (response: ApiResponse): number => {
    res.writeHead(response.status, { ...response.headers, 'content-length': String(Buffer.byteLength(response.body)) });
    res.end(response.body);
    return response.status;
  };
  if (req.method !== 'GET')
    return send(problemResponse(plainProblem(405, `${req.method ?? '?'} is not allowed on ${url.pathname} (allowed: GET)`), { allow: 'GET' }));
  let runId: string;
  try {
    runId = RunIdSchema.parse(decodeURIComponent(EVENTS_PATH.exec(url.pathname)?.[1] ?? ''));
  } catch {
    return send(problemResponse(plainProblem(400, 'Invalid request: runId: not a run id')));
  }
  const header = req.headers['last-event-id'];
  const lastEventId = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('lastEventId') ?? undefined;
  if (lastEventId !== undefined && lastEventId.length > MAX_LAST_EVENT_ID_CHARS) {
    return send(problemResponse(plainProblem(400, `Invalid request: Last-Event-ID: at most ${MAX_LAST_EVENT_ID_CHARS} characters`)));
  }
  let heartbeat: NodeJS.Timeout | undefined;
  let stop: (() => void) | undefined;
  const startStream = (): void => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    res.write('retry: 1000\n\n');
    heartbeat = setInterval(() => res.write(': keep-alive\n\n'), SSE_HEARTBEAT_MS);
  };
  const ended = new Promise<void>((resolve) => {
    const finish = (): void => {
      clearInterval(heartbeat);
      stop?.();
      resolve();
    };
    res.once('close', finish);
    void events
      .subscribe(
        runId,
        lastEventId,
        (event) => {
          if (!res.headersSent) startStream();
          res.write(formatSse(event));
        },
        () => {
          if (!res.headersSent) startStream();
          res.end();
        },
      )
      .then(
        (unsubscribe) => {
          stop = unsubscribe;
          if (res.writableEnded || res.destroyed) unsubscribe();
        },
        (error: unknown) => {
          send(problemResponse(problemOf(error)));
          finish();
        },
      );
  });
  await ended;
  return 200;
}
