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

/**
 * POSTs a JSON body and answers the response once its status is a success; an error status becomes
 * the AgentexecError of its code. With `retry`, a failed connection or a 502/503/504 is tried again
 * after a backoff, up to `maxRetries` times.
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

/** Waits before retry `attempt` (0-based): about 250 ms, doubling up to 5 s, with jitter; an abort ends the wait. */
export function backoff(attempt: number, signal?: AbortSignal): Promise<void> {
  const ms = Math.min(5000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
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
