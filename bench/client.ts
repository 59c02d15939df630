import http from 'node:http';
import { createSseParser, type SseEvent } from './sse.js';
import { withTimeout } from './stats.js';

/**
 * The bench's HTTP client: raw `http.request` over a keep-alive Agent. It shares the 2 cores with the
 * server, and per call it costs less CPU than the global fetch (see the client-cost scenario).
 */
export interface ApiClient {
  get(path: string): Promise<HttpAnswer>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpAnswer>;
  /** A POST answered as `text/event-stream`, parsed as it arrives. */
  stream(path: string, body: unknown): SseCall;
  close(): void;
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export interface SseCall {
  /** Status and headers, once they arrive. */
  response: Promise<{ status: number; headers: http.IncomingHttpHeaders }>;
  /** The events received so far, in order. */
  events: SseEvent[];
  /** The first event with this name, received already or still to come. */
  next(name: string, timeoutMs: number): Promise<SseEvent>;
  /** Resolves with every event when the server ends the answer; rejects on a non-SSE answer or a broken connection. */
  done: Promise<SseEvent[]>;
  abort(): void;
}

export interface ClientOptions {
  bearerKey: string;
  maxSockets?: number;
}

export function createClient(baseUrl: string, { bearerKey, maxSockets = 256 }: ClientOptions): ApiClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const origin = new URL(baseUrl);
  const options = (method: string, path: string, body?: string, extra: Record<string, string> = {}): http.RequestOptions => ({
    agent,
    method,
    host: origin.hostname,
    port: origin.port,
    path,
    headers: {
      Authorization: `Bearer ${bearerKey}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }),
      ...extra,
    },
  });
  return {
    get: (path) => send(options('GET', path)),
    post(path, body, headers) {
      const json = JSON.stringify(body);
      return send(options('POST', path, json, headers), json);
    },
    stream(path, body) {
      const json = JSON.stringify(body);
      return openSse(options('POST', path, json), json);
    },
    close: () => agent.destroy(),
  };
}

/** Parses an answer's JSON body, naming the status and body when it is not JSON. */
export function jsonOf<T>(answer: HttpAnswer): T {
  try {
    return JSON.parse(answer.text) as T;
  } catch {
    throw new Error(`HTTP ${answer.status}, not JSON: ${answer.text.slice(0, 200)}`);
  }
}

function send(options: http.RequestOptions, body?: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(options, (res) => {
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Waiter {
  name: string;
  resolve(event: SseEvent): void;
  reject(err: Error): void;
}

function openSse(options: http.RequestOptions, body: string): SseCall {
  const events: SseEvent[] = [];
  let waiters: Waiter[] = [];
  let ended: Error | undefined;
  const parser = createSseParser((event) => {
    events.push(event);
    for (const waiter of waiters.filter((w) => w.name === event.event)) waiter.resolve(event);
    waiters = waiters.filter((w) => w.name !== event.event);
  });
  const req = http.request(options);
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  const done = response.then(
    (res) =>
      new Promise<SseEvent[]>((resolve, reject) => {
        res.setEncoding('utf8');
        const isSse = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
        let text = '';
        res.on('data', (chunk: string) => (isSse ? parser.push(chunk) : (text += chunk)));
        res.on('end', () => (isSse ? resolve(events) : reject(new Error(`HTTP ${res.statusCode}, not a stream: ${text.slice(0, 300)}`))));
        res.on('error', reject);
        res.on('close', () => res.complete || reject(new Error('the stream was cut before its end')));
      }),
  );
  req.end(body);
  void done.then(
    () => endWaiters(new Error('the stream ended first')),
    (err: Error) => endWaiters(err),
  );
  function endWaiters(err: Error) {
    ended = err;
    for (const waiter of waiters) waiter.reject(new Error(`no ${waiter.name} event: ${err.message}`));
    waiters = [];
  }
  const head = response.then((res) => ({ status: res.statusCode ?? 0, headers: res.headers }));
  // Callers that only wait for events must not turn a broken stream into an unhandled rejection.
  head.catch(() => undefined);
  done.catch(() => undefined);
  return {
    response: head,
    events,
    next(name, timeoutMs) {
      const seen = events.find((e) => e.event === name);
      if (seen) return Promise.resolve(seen);
      if (ended) return Promise.reject(new Error(`no ${name} event: ${ended.message}`));
      const waiting = new Promise<SseEvent>((resolve, reject) => waiters.push({ name, resolve, reject }));
      return withTimeout(waiting, timeoutMs, `waiting for the ${name} event`);
    },
    done,
    abort: () => req.destroy(),
  };
}
