/**
 * `GET /v1/runs/{runId}/events` of `extagents serve` (local/services/run-events.ts): server-sent events
 * of a real run of the local workflow (extractive reader): the order of the events, the stream
 * closing after `end`, a reconnect with `Last-Event-ID` that gets only the later events, the bearer
 * token, an unknown run; and the page's `/_web/` endpoints (document window, run list, info).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, type LocalApiServer } from '../../local/services/serve';
import { buildOpenApiDocument } from '../../shared/api/openapi';

jest.setTimeout(120_000);

const TOKEN = 'events-test-token-0123456789abcdef';
const NEEDLE =
  'A part of the Cherokees, known by the name of Chickamaugas, inhabiting five villages on the Tennessee River, have long been in the practice of committing depredations.';
const QUESTION = 'By what name was the part of the Cherokees living in five villages on the Tennessee River known?';

let dir: string;
let server: LocalApiServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-events-'));
  server = await startServer({ stateDir: path.join(dir, 'state'), port: 0, token: TOKEN, retryIntervalMs: 1 });
  const filler = (i: number): string =>
    `Report ${i}. The harvest of the year was abundant and the treasury received its customary revenues. ` +
    `Roads were repaired in several districts and the postal service extended its routes to new towns.`;
  for (let i = 0; i < 8; i++) {
    const text = [filler(i), i === 3 ? NEEDLE : 'A delegation of the Cherokees visited the seat of government.', filler(i + 100)].join('\n\n');
    await server.stack.blobs.put(`corpora/events/address-${i}.txt`, text);
  }
  // Many chunks, so that a run lasts several polls of the event hub.
  for (let i = 0; i < 60; i++)
    await server.stack.blobs.put(`corpora/many/doc-${String(i).padStart(3, '0')}.txt`, `${filler(i)}\n\n${i === 41 ? NEEDLE : filler(i + 1000)}`);
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Sse {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

/** Read a whole event stream (until the server closes it); `lastEventId` as the header. */
async function readStream(runId: string, lastEventId?: string): Promise<{ status: number; contentType: string | null; events: Sse[]; retry?: number }> {
  const response = await fetch(`${server.url}/v1/runs/${runId}/events`, {
    headers: { authorization: `Bearer ${TOKEN}`, ...(lastEventId !== undefined && { 'last-event-id': lastEventId }) },
  });
  const text = await response.text(); // resolves only when the server ends the stream
  const events: Sse[] = [];
  let retry: number | undefined;
  for (const block of text.split('\n\n')) {
    const fields = new Map<string, string>();
    for (const line of block.split('\n')) {
      const m = /^([a-z]+): ?(.*)$/.exec(line);
      if (m) fields.set(m[1], m[2]);
    }
    if (fields.has('retry')) retry = Number(fields.get('retry'));
    if (fields.has('event'))
      events.push({ id: fields.get('id'), event: fields.get('event') ?? '', data: JSON.parse(fields.get('data') ?? '{}') as Record<string, unknown> });
  }
  return { status: response.status, contentType: response.headers.get('content-type'), events, retry };
}

type JsonObject = Record<string, unknown>;

/**
 * How the event no. `index` of a stream breaks docs/openapi.yaml's schema of one event (the `schema` of
 * the events route's `text/event-stream`, read per event as schemathesis reads it): its fields, then
 * the members its `data` must have for its event type (`contentSchema.required` of the matching
 * `oneOf` branch). Empty when it conforms.
 */
function documentedEventProblems(event: Sse, index: number): string[] {
  const paths = buildOpenApiDocument().paths as Record<string, { get: { responses: Record<string, { content: Record<string, { schema: JsonObject }> }> } }>;
  const schema = paths['/v1/runs/{runId}/events'].get.responses['200'].content['text/event-stream'].schema;
  if (schema.type !== 'object') return [`the document declares an event as ${JSON.stringify(schema)}, not an object of SSE fields`];
  const properties = schema.properties as Record<string, JsonObject>;
  const problems: string[] = [];
  if (event.id === undefined || !new RegExp(properties.id.pattern as string).test(event.id)) problems.push(`#${index}: id ${String(event.id)}`);
  if (!(properties.event.enum as string[]).includes(event.event)) problems.push(`#${index}: event ${event.event}`);
  const branch = (schema.oneOf as Array<{ properties: { event: { const: string }; data: { contentSchema: { required: string[] } } } }>).filter(
    (b) => b.properties.event.const === event.event,
  );
  if (branch.length !== 1) problems.push(`#${index}: ${branch.length} oneOf branches for ${event.event}`);
  for (const member of branch[0]?.properties.data.contentSchema.required ?? [])
    if (!(member in event.data)) problems.push(`#${index} (${event.event}): data has no ${member}`);
  return problems;
}

async function startRun(options: Record<string, unknown> = {}, corpus = 'events'): Promise<string> {
  const response = await fetch(`${server.url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ question: QUESTION, corpus: { id: corpus }, options: { chunkTokens: 100, concurrency: 1, ...options } }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { runId: string }).runId;
}

test('a run streams status, seeking per round, synchronization, KAR steps and end, in order, then the stream closes', async () => {
  const runId = await startRun();
  const stream = await readStream(runId);
  expect(stream.status).toBe(200);
  expect(stream.contentType).toBe('text/event-stream; charset=utf-8');
  expect(stream.retry).toBe(1000);
  const types = stream.events.map((e) => e.event);
  // every event is one docs/openapi.yaml describes (it once said `type: string`, which no event is)
  expect(stream.events.flatMap(documentedEventProblems)).toEqual([]);
  expect(types[0]).toBe('status');
  expect(types.at(-1)).toBe('end');
  expect(types.filter((t) => t === 'end')).toHaveLength(1);
  // ids are `<epoch>.<run>.<n>`, n counting from 1 without a gap
  const numbers = stream.events.map((e) => Number(e.id?.split('.')[2]));
  expect(numbers).toEqual(numbers.map((_, i) => i + 1));
  const seeks = stream.events
    .filter((e) => e.event === 'seek')
    .map((e) => e.data as { round: number; done: number; total: number; failed: number; messages: number });
  expect(seeks.length).toBeGreaterThan(0);
  // each round's counts only grow, and round 1 ends with every chunk sought
  const round1 = seeks.filter((s) => s.round === 1);
  for (let i = 1; i < round1.length; i++) expect(round1[i].done).toBeGreaterThanOrEqual(round1[i - 1].done);
  expect(round1.at(-1)?.done).toBe(round1.at(-1)?.total);
  expect(round1.at(-1)?.failed).toBe(0);
  expect(round1.at(-1)?.messages).toBeGreaterThan(0);
  // synchronization of round 1 comes before any event of round 2
  const sync = types.indexOf('sync');
  const firstRound2 = stream.events.findIndex((e) => e.event === 'seek' && e.data.round === 2);
  if (firstRound2 >= 0) expect(sync).toBeGreaterThanOrEqual(0);
  if (firstRound2 >= 0) expect(sync).toBeLessThan(firstRound2);
  const kar = stream.events.filter((e) => e.event === 'kar');
  expect(kar.length).toBeGreaterThan(0);
  expect(kar.map((e) => e.data.seq)).toEqual(kar.map((e) => e.data.seq as number).sort((a, b) => a - b));
  const end = stream.events.at(-1)?.data as { status: string; answer: string; answerable: boolean };
  expect(end.status).toBe('SUCCEEDED');
  expect(end.answer).toMatch(/Chickamauga/);
  // the same state the polling API reports
  const polled = (await (await fetch(`${server.url}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as {
    result: { trace: unknown[] };
  };
  expect(kar).toHaveLength(polled.result.trace.length);

  // Reconnect with Last-Event-ID: only the events after it
  const cut = 2;
  const resumed = await readStream(runId, stream.events[cut - 1].id);
  expect(resumed.events.map((e) => e.id)).toEqual(stream.events.slice(cut).map((e) => e.id));
  // after the last one (`end`), the stream still ends with `end`, never an empty 200 (an EventSource would reconnect for ever)
  const afterEnd = await readStream(runId, stream.events.at(-1)?.id);
  expect(afterEnd.status).toBe(200);
  expect(afterEnd.events.map((e) => e.event)).toEqual(['end']);
  // an id of another server process (another epoch) replays the whole log
  const otherEpoch = await readStream(runId, `000000000000${stream.events[4].id?.slice(12)}`);
  expect(otherEpoch.events.map((e) => e.event)).toEqual(types);
});

test('a Last-Event-ID of another run, or past the end of this one, replays the run from the start and ends with `end`', async () => {
  const first = await startRun({ rounds: 1 });
  const second = await startRun({ rounds: 1 });
  const a = await readStream(first);
  const b = await readStream(second);
  expect(a.events.length).toBeGreaterThan(2);
  expect(b.events.at(-1)?.event).toBe('end');
  // ids name their run: no id of one run is an id of the other
  const idsOfA = new Set(a.events.map((e) => e.id));
  expect(b.events.filter((e) => idsOfA.has(e.id))).toEqual([]);
  // an id of the other run (its n within this run's log) replays this run whole
  const foreign = await readStream(second, a.events[1].id);
  expect(foreign.events.map((e) => e.id)).toEqual(b.events.map((e) => e.id));
  // an id past the end of this run's log is impossible: replayed whole, closed by `end`
  const last = b.events.at(-1)?.id ?? '';
  const past = await readStream(
    second,
    last.replace(/\d+$/, (n) => String(Number(n) + 5)),
  );
  expect(past.events.map((e) => e.id)).toEqual(b.events.map((e) => e.id));
  expect(past.events.at(-1)?.event).toBe('end');
  // a malformed id too
  const malformed = await readStream(second, 'not-an-id');
  expect(malformed.events.map((e) => e.id)).toEqual(b.events.map((e) => e.id));
});

test('events are live: the first seek event arrives before the run ends', async () => {
  const runId = await startRun({ rounds: 1, chunkTokens: 64 }, 'many');
  const response = await fetch(`${server.url}/v1/runs/${runId}/events`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const seen: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    for (const m of text.matchAll(/event: (\w+)\ndata: (.*)\n/g)) seen.push(`${m[1]} ${m[2]}`);
    text = text.slice(text.lastIndexOf('\n\n') + 2);
  }
  const seeks = seen.filter((s) => s.startsWith('seek '));
  // several distinct progress states of round 1 were sent, not only the final one
  expect(new Set(seeks).size).toBeGreaterThan(1);
  expect(seen.at(-1)).toMatch(/^end /);
});

test('the stream needs the bearer token; an unknown run is 404 and a bad id 400, as problem+json', async () => {
  const none = await fetch(`${server.url}/v1/runs/run-20260101T000000-abcdef/events`);
  expect(none.status).toBe(401);
  expect(none.headers.get('www-authenticate')).toBe('Bearer realm="extagents"');
  const wrong = await fetch(`${server.url}/v1/runs/run-20260101T000000-abcdef/events`, { headers: { authorization: 'Bearer wrong-token-0123456789' } });
  expect(wrong.status).toBe(401);
  const unknown = await fetch(`${server.url}/v1/runs/run-20260101T000000-abcdef/events`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(unknown.status).toBe(404);
  expect(unknown.headers.get('content-type')).toBe('application/problem+json');
  const bad = await fetch(`${server.url}/v1/runs/${encodeURIComponent('bad id!')}/events`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(bad.status).toBe(400);
  // docs/openapi.yaml: Last-Event-ID has at most 64 characters; a longer one is 400, before any lookup.
  const long = await fetch(`${server.url}/v1/runs/run-20260101T000000-abcdef/events`, {
    headers: { authorization: `Bearer ${TOKEN}`, 'last-event-id': 'x'.repeat(65) },
  });
  expect(long.status).toBe(400);
  expect(long.headers.get('content-type')).toBe('application/problem+json');
  const longest = await fetch(`${server.url}/v1/runs/run-20260101T000000-abcdef/events`, {
    headers: { authorization: `Bearer ${TOKEN}`, 'last-event-id': 'x'.repeat(64) },
  });
  expect(longest.status).toBe(404);
  const post = await fetch(`${server.url}/v1/runs/run-20260101T000000-abcdef/events`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(post.status).toBe(405);
});

test('the page endpoints: info from the run options schema, the run list, a document window around a citation', async () => {
  const auth = { headers: { authorization: `Bearer ${TOKEN}` } };
  const info = (await (await fetch(`${server.url}/_web/info`, auth)).json()) as {
    model: string;
    runOptionsSchema: { properties: Record<string, { minimum?: number; maximum?: number; default?: unknown }> };
  };
  expect(info.model).toBe('extractive');
  expect(info.runOptionsSchema.properties.rounds).toMatchObject({ minimum: 1, maximum: 10, default: 2 });
  expect((await fetch(`${server.url}/_web/runs`)).status).toBe(401);
  const runs = (await (await fetch(`${server.url}/_web/runs`, auth)).json()) as {
    runs: Array<{ runId: string; question: string; status: string; startedAt: string }>;
  };
  expect(runs.runs.length).toBeGreaterThanOrEqual(2);
  expect(runs.runs[0].question).toBe(QUESTION);
  expect(runs.runs.map((r) => r.startedAt)).toEqual(
    runs.runs
      .map((r) => r.startedAt)
      .sort()
      .reverse(),
  );
  // the first run of this file (corpus `events`), which answered with a citation
  const runId = runs.runs.at(-1)?.runId as string;
  const status = (await (await fetch(`${server.url}/v1/runs/${runId}`, auth)).json()) as {
    result: { citations: Array<{ documentId: string; start: number; end: number; quote: string }> };
  };
  const citation = status.result.citations[0];
  const window = (await (
    await fetch(
      `${server.url}/_web/runs/${runId}/document?id=${encodeURIComponent(citation.documentId)}&start=${citation.start}&end=${citation.end}&context=20`,
      auth,
    )
  ).json()) as {
    text: string;
    windowStart: number;
    windowEnd: number;
    chars: number;
  };
  expect(window.text.slice(citation.start - window.windowStart, citation.end - window.windowStart)).toBe(citation.quote);
  expect(window.windowEnd - window.windowStart).toBeLessThanOrEqual(citation.end - citation.start + 40);
  const missing = await fetch(`${server.url}/_web/runs/${runId}/document?id=nope.txt`, auth);
  expect(missing.status).toBe(404);
  // only corpus objects: not the service's own data, not a path out of the bucket
  const own = await fetch(`${server.url}/_web/runs/${runId}/document?id=${encodeURIComponent(`runs/${runId}/run.json`)}`, auth);
  expect(own.status).toBe(404);
  const escape = await fetch(`${server.url}/_web/runs/${runId}/document?id=${encodeURIComponent('../../upload-secret')}`, auth);
  expect(escape.status).toBe(400);
  // a run's own documents only: not through an unknown run, not any key of the bucket by its full name
  const unknownRun = await fetch(`${server.url}/_web/runs/run-nope/document?id=${encodeURIComponent(citation.documentId)}`, auth);
  expect(unknownRun.status).toBe(404);
  const byKey = await fetch(`${server.url}/_web/runs/${runId}/document?id=${encodeURIComponent(`corpora/events/${citation.documentId}`)}`, auth);
  expect(byKey.status).toBe(404);
  // the range is bounded too: an absurd end gives at most MAX_DOCUMENT_WINDOW characters
  const wide = (await (
    await fetch(`${server.url}/_web/runs/${runId}/document?id=${encodeURIComponent(citation.documentId)}&start=0&end=9999999999&context=0`, auth)
  ).json()) as { end: number };
  expect(wide.end).toBeLessThanOrEqual(200_000);
});
