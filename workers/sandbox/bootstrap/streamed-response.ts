import type { ServerSentEvent } from '../../../shared/server-sent-events.js';
import { callAsync, callSync, type Run } from './host.js';
import { parseJson } from './intrinsics.js';

/** What the host's fetch answers for `stream: true` (StreamHead in streamed-fetch.ts). */
export interface StreamHead {
  status: number;
  headers: Record<string, string>;
  stream: number;
}

type ReadReply = { chunk: string; done?: undefined } | { done: true };
type EventsReply = { events: ServerSentEvent[]; done?: undefined } | { done: true };

/**
 * The response of sys.fetch with `stream: true` (agents/sys.d.ts StreamedFetchResponse): `body` yields
 * the text as it arrives, `events()` the server-sent events parsed from it (by the host:
 * streamed-fetch.ts), `relay()` has the host write the rest to the caller, `text()` / `json()` read
 * the rest. All of them read one body, in turn: reads are queued, so chunks come in order however the
 * agent interleaves them. Leaving a `for await` early closes the connection.
 */
export function makeStreamedResponse(run: Run, head: StreamHead) {
  let finished = false;
  let queue: Promise<unknown> = Promise.resolve();

  // One read of the host's at a time, in the order they were asked for; null once the body has ended.
  const queued = <T>(readOnce: () => Promise<T | null>): Promise<T | null> => {
    const next = queue.then(() => (finished ? null : readOnce()));
    queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  };
  const ended = (reply: { done?: true }): boolean => {
    if (reply.done !== true) return false;
    finished = true;
    return true;
  };
  const read = (): Promise<string | null> =>
    queued(async () => {
      const reply = (await callAsync(run, 'fetchRead', { stream: head.stream })) as ReadReply;
      return ended(reply) ? null : (reply as { chunk: string }).chunk;
    });
  const readEvents = (restart: boolean): Promise<ServerSentEvent[] | null> =>
    queued(async () => {
      const reply = (await callAsync(run, 'fetchRead', { stream: head.stream, events: true, restart })) as EventsReply;
      return ended(reply) ? null : (reply as { events: ServerSentEvent[] }).events;
    });
  const close = (): void => {
    if (finished) return;
    finished = true;
    callSync(run, 'fetchClose', { stream: head.stream });
  };
  const relay = async (options?: unknown): Promise<string> => {
    const text = await queued(async () => {
      // The host checks the options (streamed-fetch.ts `callFetchRelay`).
      const reply = (await callAsync(run, 'fetchRelay', { stream: head.stream, options: options ?? null })) as { text: string };
      finished = true;
      return reply.text;
    });
    return text ?? '';
  };
  const readRest = async (): Promise<string> => {
    let text = '';
    for (let chunk = await read(); chunk !== null; chunk = await read()) text += chunk;
    return text;
  };

  return {
    status: head.status,
    ok: head.status >= 200 && head.status <= 299,
    headers: head.headers,
    body: {
      [Symbol.asyncIterator]() {
        return {
          async next(): Promise<IteratorResult<string, undefined>> {
            const chunk = await read();
            return chunk === null ? { done: true, value: undefined } : { done: false, value: chunk };
          },
          async return(): Promise<IteratorResult<string, undefined>> {
            close();
            return { done: true, value: undefined };
          },
        };
      },
    },
    async *events(): AsyncGenerator<ServerSentEvent, void, undefined> {
      try {
        for (let events = await readEvents(true); events !== null; events = await readEvents(false)) yield* events;
      } finally {
        close();
      }
    },
    relay,
    text: readRest,
    async json(): Promise<unknown> {
      return parseJson(await readRest());
    },
  };
}
