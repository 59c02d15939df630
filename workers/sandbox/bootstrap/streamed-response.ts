import { createEventStreamParser, type ServerSentEvent } from '../../../clients/typescript/src/server-sent-events.js';
import { callAsync, callSync, type Run } from './host.js';
import { parseJson } from './intrinsics.js';

/** What the host's fetch answers for `stream: true` (StreamHead in streamed-fetch.ts). */
export interface StreamHead {
  status: number;
  headers: Record<string, string>;
  stream: number;
}

type ReadReply = { chunk: string; done?: undefined } | { done: true };

/**
 * The response of sys.fetch with `stream: true` (agents/sys.d.ts StreamedFetchResponse): `body` yields
 * the text as it arrives, `events()` the server-sent events parsed from it, `text()` / `json()` read
 * the rest. All of them read one body, in turn: reads are queued, so chunks come in order however the
 * agent interleaves them. Leaving a `for await` early closes the connection.
 */
export function makeStreamedResponse(run: Run, head: StreamHead) {
  let finished = false;
  let queue: Promise<unknown> = Promise.resolve();

  const readOnce = async (): Promise<string | null> => {
    if (finished) return null;
    const reply = (await callAsync(run, 'fetchRead', { stream: head.stream })) as ReadReply;
    if (reply.done) {
      finished = true;
      return null;
    }
    return reply.chunk;
  };
  const read = (): Promise<string | null> => {
    const next = queue.then(readOnce);
    queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  };
  const close = (): void => {
    if (finished) return;
    finished = true;
    callSync(run, 'fetchClose', { stream: head.stream });
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
      const parser = createEventStreamParser();
      try {
        for (let chunk = await read(); chunk !== null; chunk = await read()) yield* parser.push(chunk);
      } finally {
        close();
      }
    },
    text: readRest,
    async json(): Promise<unknown> {
      return parseJson(await readRest());
    },
  };
}
