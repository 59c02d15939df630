import { AgentexecError, errorOfEvent, networkError, type ErrorBody } from './errors.js';
import { backoff, describe, postForResponse, type Transport } from './http.js';
import { createEventStreamParser, type ServerSentEvent } from '../../../shared/server-sent-events.js';
import type { RunEvent } from './types.js';

export interface StreamRequest {
  path: string;
  body: Record<string, unknown>;
  /**
   * Sent with every attempt: a retry with the same key joins the run the first attempt started, and
   * its `Last-Event-ID` makes the server send only the events after it. Without one (an endpoint
   * that cannot join a run), a dropped stream is not re-attached.
   */
  idempotencyKey: string | undefined;
  signal: AbortSignal | undefined;
}

const knownEvents = new Set(['start', 'part', 'delta', 'trace', 'end', 'error']);

/**
 * The events of a streamed call, in order, each once. When the connection drops before `end`, the
 * call is sent again with its Idempotency-Key and the id of the last event received, after a
 * backoff; events the server sends again anyway (an id already seen) are skipped. Gives up with a
 * NetworkError after `maxRetries` attempts in a row without a new event. Events of names this client
 * does not know are skipped (the API may add some). An `error` event (a call refused after its stream
 * started) is yielded, then thrown as its AgentexecError. Errors carry the X-Request-Id of the
 * response they came with.
 */
export async function* streamRunEvents(transport: Transport, request: StreamRequest): AsyncGenerator<RunEvent, void, undefined> {
  let lastId = 0;
  let failures = 0;
  let requestId: string | undefined;
  for (;;) {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (request.idempotencyKey) headers['idempotency-key'] = request.idempotencyKey;
    if (lastId > 0) headers['last-event-id'] = String(lastId);
    let dropped: unknown;
    let refusal: AgentexecError | undefined;
    try {
      const response = await postForResponse(transport, request.path, request.body, { headers, signal: request.signal });
      requestId = response.headers.get('x-request-id') ?? undefined;
      if (!response.body || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        throw networkError(`${request.path} did not answer with an event stream (HTTP ${response.status})`, undefined, requestId);
      }
      for await (const event of readEvents(response.body)) {
        const id = Number(event.id);
        if (Number.isInteger(id) && id > 0) {
          if (id <= lastId) continue;
          lastId = id;
        }
        failures = 0;
        if (!knownEvents.has(event.event)) continue;
        const data: unknown = JSON.parse(event.data);
        yield { event: event.event, id, data } as RunEvent;
        if (event.event === 'end') return;
        // A call refused once its stream had started (a conversation busy too long) ends with an `error`
        // event: thrown below, out of the reach of the re-attaching (an `unavailable` there is no drop).
        if (event.event === 'error') {
          refusal = errorOfEvent((data as { error: ErrorBody }).error, requestId);
          break;
        }
      }
      dropped = new Error('the stream ended before its end event');
    } catch (err) {
      if (request.signal?.aborted) throw request.signal.reason;
      if (!isDrop(err)) throw err;
      dropped = err;
    }
    if (refusal) throw refusal;
    if (!request.idempotencyKey || failures >= transport.maxRetries) {
      throw networkError(`the stream of ${request.path} was cut before its end: ${describe(dropped)}`, dropped, requestId);
    }
    await backoff(failures++, request.signal);
  }
}

/**
 * A connection problem worth re-attaching for: no answer or a cut body (fetch throws a TypeError for
 * both), or the service briefly unavailable. An answer of the API (a refusal) is not.
 */
function isDrop(err: unknown): boolean {
  if (err instanceof TypeError) return true;
  if (err instanceof AgentexecError) return err.status === 0 || err.status === 502 || err.status === 503 || err.status === 504;
  return false;
}

/** The server-sent events of a body as they arrive; stopping early cancels the body. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = createEventStreamParser();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        yield* parser.push(decoder.decode());
        return;
      }
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
  }
}
