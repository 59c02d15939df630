import { createEventStreamParser } from '../../shared/server-sent-events.js';

/** One server-sent event as a client sees it. */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: any;
  /** performance.now() when it arrived. */
  at: number;
}

/** A streamed call in progress: events arrive into `events`; `next` waits for one that matches. */
export interface SseStream {
  status: number;
  headers: Headers;
  /** The body when the answer was not a stream (an error). */
  errorBody: any;
  events: SseEvent[];
  /** Raw text received, comments included. */
  text(): string;
  next(match: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves with every event once the server ends the stream. */
  done: Promise<SseEvent[]>;
  abort(): void;
}

/** POSTs to a streaming endpoint and reads its events as they arrive. */
export async function openStream(
  baseUrl: string,
  path: string,
  body: unknown,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<SseStream> {
  const controller = new AbortController();
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers };
  if (options.key) headers.Authorization = `Bearer ${options.key}`;
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal });
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  let raw = '';
  const notify = () => {
    for (const waiter of waiters) waiter();
  };
  let errorBody: any;
  let done: Promise<SseEvent[]>;
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    errorBody = await response.json().catch(() => undefined);
    done = Promise.resolve(events);
  } else {
    done = (async () => {
      const decoder = new TextDecoder();
      const parser = createEventStreamParser();
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          const text = decoder.decode(chunk, { stream: true });
          raw += text;
          const at = performance.now();
          for (const event of parser.push(text)) {
            events.push({ id: event.id === '' ? undefined : event.id, event: event.event, data: JSON.parse(event.data), at });
          }
          notify();
        }
      } catch (err) {
        if (!controller.signal.aborted) throw err;
      }
      notify();
      return events;
    })();
  }
  let ended = false;
  void done.finally(() => (ended = true)).catch(() => undefined);
  return {
    status: response.status,
    headers: response.headers,
    errorBody,
    events,
    text: () => raw,
    done,
    abort: () => controller.abort(),
    next(match, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(match);
          if (found) {
            cleanup();
            resolve(found);
          } else if (ended) {
            cleanup();
            reject(new Error(`stream ended without the event; got ${JSON.stringify(events.map((e) => e.event))}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no matching event in ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.event))}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        void done.then(check, check);
        check();
      });
    },
  };
}
