import { createEventStreamParser, type ServerSentEvent } from '../../shared/server-sent-events.js';
import { AgentTypeError } from './error-codes.js';
import { fetchPoolKey } from '../outbound-http/fetch-agents.js';
import { releaseFetchSlot, takeFetchSlot } from '../outbound-http/fetch-slots.js';
import { FetchFailure, fetchFailure, httpFetchStream, refuseUnsendable, type FetchRequest } from '../outbound-http/http-fetch.js';
import type { OpenFetchStream } from './fetch-streams.js';
import { chargeJournal, recordEntry, takeReplayed, type EntryOf } from './journal.js';
import { hasEnded, type Session } from './session.js';
import { noteFetch } from './fetch-timeline.js';

/**
 * sys.fetch with `stream: true` (DESIGN §13) on the host. The fetch answers at the headers with a
 * stream number; the isolate then reads the body with `fetchRead` and may stop with `fetchClose`.
 * `events()` reads with `events: true`: the host parses the server-sent events and hands over those
 * the text completed, so the parser runs once per worker, warm, instead of once per context, and a
 * chunk that completes no event costs no crossing.
 * Every chunk the agent reads is journaled in the fetch's entry, so a resumed run reads the same
 * chunks, in the same order, without a request. A stream still open when the run paused at an ask
 * cannot be read further after the resume: its connection closed with the run.
 *
 * `relay()` reads with the `fetchRelay` op: the host writes each piece of the body to the caller as it
 * arrives, as sys.write would, without entering the isolate per piece, and answers once with all it
 * wrote. That is the token path of an LLM agent: a token crosses no thread on its way out.
 *
 * A live stream holds one of the run's fetch slots (DESIGN §12) until its body ends, fails or is
 * closed; the run's end aborts the slot, which closes the connection at once.
 */

export interface StreamHead {
  status: number;
  headers: Record<string, string>;
  stream: number;
}

export async function callFetchStream(session: Session, request: FetchRequest, timeoutMs: number): Promise<StreamHead> {
  // The journal records the URL with the run's secrets masked, and compares it so.
  const url = session.mask(request.url);
  const differs = (e: EntryOf<'fetch'>) =>
    e.method === request.method && e.url === url && e.stream !== undefined
      ? null
      : `recorded ${e.method} ${e.url}${e.stream ? ' (streamed)' : ''}, now ${request.method} ${url} (streamed)`;
  const replayed = takeReplayed(session.journal, 'fetch', differs);
  if (replayed) {
    if (!replayed.result || !replayed.stream) throw new FetchFailure(replayed.error ?? fetchFailure(request, 'no response was recorded').message);
    return openStream(session, { entry: replayed as OpenFetchStream['entry'], request, read: 0, live: null, events: null }, replayed.result);
  }
  const entry = recordEntry<OpenFetchStream['entry']>(session.journal, { op: 'fetch', method: request.method, url, stream: { chunks: [] } });
  const called = noteFetch(session, entry);
  const refused = refuseUnsendable(request);
  if (refused) {
    entry.error = session.mask(refused.message);
    called();
    throw refused;
  }
  const slots = session.fetchSlots;
  const slot = await takeFetchSlot(slots);
  try {
    const ownTimeoutMs = timeoutMs < session.deadline - Date.now() ? timeoutMs : null;
    const pool = fetchPoolKey(session.run.caller, session.run.httpAllow);
    const response = await httpFetchStream(request, { allow: session.allow, timeoutMs: ownTimeoutMs, abort: slot, pool });
    entry.result = { status: response.status, headers: response.headers, text: '' };
    called();
    chargeJournal(session.journal, JSON.stringify(response.headers).length);
    const live = { body: response.body, release: () => releaseFetchSlot(slots, slot) };
    return openStream(session, { entry, request, read: 0, live, events: null }, entry.result);
  } catch (err) {
    releaseFetchSlot(slots, slot);
    entry.error = session.mask(err instanceof Error ? err.message : String(err));
    called();
    throw err;
  }
}

type ChunkRead = { chunk: string } | { done: true };

/**
 * The `fetchRead` op: `{chunk}` with the next text of the body, or `{done: true}`. With `events: true`
 * (`restart: true` on an `events()`'s first read): `{events}` with the events the next text completed
 * (at least one: it reads on until then), or `{done: true}`.
 */
export async function callFetchRead(session: Session, payload: Record<string, unknown>): Promise<ChunkRead | { events: ServerSentEvent[] }> {
  const open = openStreamOf(session, payload);
  if (payload.events !== true) return readChunk(session, open);
  if (payload.restart === true || !open.events) open.events = createEventStreamParser();
  const parser = open.events;
  for (;;) {
    const read = await readChunk(session, open);
    if ('done' in read) return read;
    const events = parser.push(read.chunk);
    if (events.length > 0) return { events };
  }
}

/** The longest `field` path relay() takes, in characters. */
const maxFieldLength = 200;

/**
 * The `fetchRelay` op: writes the rest of the body with `write` as it arrives and answers `{text}`,
 * everything written. With `options.field` (a dot path such as "choices.0.delta.content") the body is
 * read as server-sent events, and the string at that path of each event's JSON data is written; an
 * event whose data is not JSON (`[DONE]`) or has no string there is skipped. Without it the body's
 * text is written as it comes. Chunks are journaled as any read's, so a resumed run relays them again
 * from the journal (its writes then are not sent again: host-calls.ts `emitOutput`).
 */
export async function callFetchRelay(session: Session, payload: Record<string, unknown>, write: (text: string) => void): Promise<{ text: string }> {
  const path = fieldPath(payload.options);
  const open = openStreamOf(session, payload);
  const piecesOf = path ? fieldsOfEvents(path) : (chunk: string) => [chunk];
  let text = '';
  for (;;) {
    if (hasEnded(session)) return { text };
    const read = await readChunk(session, open);
    if ('done' in read) return { text };
    for (const piece of piecesOf(read.chunk)) {
      if (!piece || hasEnded(session)) continue;
      text += piece;
      write(piece);
    }
  }
}

/** The path of relay()'s `{field}` option, split; null without one. */
function fieldPath(options: unknown): string[] | null {
  if (options === undefined || options === null) return null;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new AgentTypeError('relay: options must be an object such as { field: "choices.0.delta.content" }');
  }
  const field = (options as Record<string, unknown>).field;
  if (field === undefined || field === null) return null;
  const path = typeof field === 'string' && field.length <= maxFieldLength ? field.split('.') : undefined;
  if (!path || path.includes('')) {
    throw new AgentTypeError(`relay: field must be a dot path of up to ${maxFieldLength} characters, such as "choices.0.delta.content"`);
  }
  return path;
}

/** Reads chunks as server-sent events (with a parser of its own) and takes the string at `path` of each one's data. */
function fieldsOfEvents(path: string[]): (chunk: string) => Array<string | undefined> {
  const parser = createEventStreamParser();
  return (chunk) => parser.push(chunk).map((event) => fieldOf(event.data, path));
}

/** The string at `path` of `data` parsed as JSON, or undefined. */
function fieldOf(data: string, path: string[]): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === 'string' ? value : undefined;
}

/** The next text of the body: journaled, or replayed from the journal. */
async function readChunk(session: Session, open: OpenFetchStream): Promise<ChunkRead> {
  const { entry } = open;
  const chunks = entry.stream.chunks;
  if (open.read < chunks.length) return { chunk: chunks[open.read++]! };
  const end = entry.stream.end;
  if (end === 'done') return { done: true };
  if (end) throw new FetchFailure(end.error);
  if (!open.live) throw fetchFailure(open.request, 'the stream closed when the run paused for an ask; read it to the end before asking');
  let text: string | null;
  try {
    text = await open.live.body.read();
  } catch (err) {
    const failure = fetchFailure(open.request, err instanceof Error ? err.message : String(err));
    entry.stream.end = { error: session.mask(failure.message) };
    finish(open);
    throw failure;
  }
  if (text === null) {
    entry.stream.end = 'done';
    finish(open);
    return { done: true };
  }
  chargeJournal(session.journal, text.length);
  chunks.push(text);
  open.read += 1;
  return { chunk: text };
}

/** The `fetchClose` op: the agent stopped reading (left a `for await` early): the connection closes. */
export function callFetchClose(session: Session, payload: Record<string, unknown>): null {
  const open = openStreamOf(session, payload);
  open.live?.body.close();
  finish(open);
  session.fetchStreams.open.delete(payload.stream as number);
  return null;
}

function openStream(session: Session, open: OpenFetchStream, result: { status: number; headers: Record<string, string> }): StreamHead {
  const streams = session.fetchStreams;
  const stream = streams.next++;
  streams.open.set(stream, open);
  return { status: result.status, headers: result.headers, stream };
}

function openStreamOf(session: Session, payload: Record<string, unknown>): OpenFetchStream {
  const open = typeof payload.stream === 'number' ? session.fetchStreams.open.get(payload.stream) : undefined;
  if (!open) throw new AgentTypeError('sys.fetch: this response body is closed');
  return open;
}

/** The connection is done with: its slot goes to the next fetch waiting. */
function finish(open: OpenFetchStream): void {
  open.live?.release();
  open.live = null;
}
