import { errorFor, networkError, type ErrorBody } from './errors.js';

/** How the client reaches the API: its origin, credential and fetch, and how hard it retries. */
export interface Transport {
  baseUrl: string;
  apiKey: string | undefined;
  fetch: typeof fetch;
  headers: Record<string, string>;
  maxRetries: number;
}

export interface PostOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** Retry when no answer came or the API was unavailable (the call must be safe to repeat). */
  retry?: boolean;
}

/** Statuses worth a retry: the service or a proxy in front of it was briefly unavailable. */
const retriedStatuses = new Set([502, 503, 504]);

/** The longest Retry-After of a 429 the client waits out by itself; a longer one is the caller's to handle. */
export const maxRateLimitWaitSeconds = 60;

/**
 * POSTs a JSON body and answers the response once its status is a success; an error status becomes
 * the AgentexecError of its code. With `retry`, a failed connection or a 502/503/504 is tried again
 * after a backoff, up to `maxRetries` times. A call that starts a run (it carries an Idempotency-Key,
 * so sending it again never starts a second run) refused 429 `rateLimited` by a limit per caller is
 * sent again after its Retry-After (DESIGN §16), also up to `maxRetries` times.
 */
export async function postForResponse(transport: Transport, path: string, body: unknown, options: PostOptions = {}): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await transport.fetch(`${transport.baseUrl}${path}`, {
        method: 'POST',
        headers: requestHeaders(transport, options.headers),
        body: JSON.stringify(body),
        signal: options.signal ?? null,
        credentials: transport.apiKey ? 'omit' : 'same-origin',
      });
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (!options.retry || attempt >= transport.maxRetries) throw networkError(`no answer from ${path}: ${describe(err)}`, err);
      await backoff(attempt, options.signal);
      continue;
    }
    if (response.ok) return response;
    const rateLimitWait = response.status === 429 && attempt < transport.maxRetries ? rateLimitWaitMs(response, options) : undefined;
    if (rateLimitWait !== undefined) {
      await response.body?.cancel().catch(() => undefined);
      await sleep(rateLimitWait, options.signal);
      continue;
    }
    if (options.retry && retriedStatuses.has(response.status) && attempt < transport.maxRetries) {
      await response.body?.cancel().catch(() => undefined);
      await backoff(attempt, options.signal);
      continue;
    }
    throw await errorOfResponse(response);
  }
}

/** POSTs and parses the JSON answer. */
export async function postJson<T>(transport: Transport, path: string, body: unknown, options: PostOptions = {}): Promise<T> {
  const response = await postForResponse(transport, path, body, options);
  return (await response.json()) as T;
}

export async function errorOfResponse(response: Response): Promise<Error> {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  let body: ErrorBody = { code: statusCode(response.status), message: `HTTP ${response.status}` };
  try {
    const parsed = (await response.json()) as { error?: ErrorBody };
    if (parsed?.error && typeof parsed.error.code === 'string') body = parsed.error;
  } catch {
    // not the API's JSON (a proxy's page): keep the status
  }
  return errorFor(body, response.status, requestId, response.headers.get('retry-after'));
}

function statusCode(status: number): string {
  if (status === 404) return 'notFound';
  if (status === 503 || status === 502 || status === 504) return 'unavailable';
  return status >= 500 ? 'internal' : 'invalidRequest';
}

function requestHeaders(transport: Transport, extra: Record<string, string> | undefined): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(transport.apiKey ? { authorization: `Bearer ${transport.apiKey}` } : {}),
    ...transport.headers,
    ...extra,
  };
}

/** How long to wait before sending a rate-limited call again, or undefined: do not (no key, no usable Retry-After). */
function rateLimitWaitMs(response: Response, options: PostOptions): number | undefined {
  if (!options.headers?.['idempotency-key']) return undefined;
  const seconds = Number(response.headers.get('retry-after'));
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > maxRateLimitWaitSeconds) return undefined;
  // A little jitter, so callers refused together do not all come back in the same instant.
  return seconds * 1000 + Math.random() * 250;
}

/** Waits before retry `attempt` (0-based): about 250 ms, doubling up to 5 s, with jitter; an abort ends the wait. */
export function backoff(attempt: number, signal?: AbortSignal): Promise<void> {
  return sleep(Math.min(5000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2), signal);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function describe(err: unknown): string {
  if (err instanceof Error) return err.cause instanceof Error ? `${err.message} (${err.cause.message})` : err.message;
  return String(err);
}
