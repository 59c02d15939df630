/** Every API call: a same-origin JSON POST (the server's CSRF rule), answered with JSON. */

export interface ApiErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** An API answer other than 2xx, with the server's error body (or one made up for a network failure). */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.message);
  }
  get code(): string {
    return this.body.code;
  }
}

type SessionEndedListener = (error: ApiError) => void;
let onSessionEnded: SessionEndedListener = () => undefined;

/** Called with every 401 of a call made while signed in: the app goes back to sign-in. */
export function handleSessionEnded(listener: SessionEndedListener): void {
  onSessionEnded = listener;
}

/** A call made through the client (a streamed run) was answered 401 while signed in. */
export function reportSessionEnded(status: number, body: ApiErrorBody): void {
  onSessionEnded(new ApiError(status, body));
}

export interface PostOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** False for the sign-in calls, whose 401 means wrong credentials, not an ended session. */
  signedIn?: boolean;
}

/** POSTs `body` as JSON and answers the raw response when it is 2xx; throws ApiError otherwise. */
export async function postRaw(path: string, body: unknown, options: PostOptions = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...options.headers },
      body: JSON.stringify(body),
      signal: options.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, { code: 'network', message: 'The server could not be reached. Check your connection and try again.' });
  }
  if (response.ok) return response;
  const error = new ApiError(response.status, await readErrorBody(response));
  if (response.status === 401 && options.signedIn !== false) onSessionEnded(error);
  throw error;
}

/** POSTs `body` as JSON and answers the parsed JSON body. */
export async function postJson<T>(path: string, body: unknown, options: PostOptions = {}): Promise<T> {
  const response = await postRaw(path, body, options);
  return (await response.json()) as T;
}

async function readErrorBody(response: Response): Promise<ApiErrorBody> {
  try {
    const parsed = (await response.json()) as { error?: ApiErrorBody };
    if (parsed.error && typeof parsed.error.code === 'string') return parsed.error;
  } catch {
    // not JSON: fall through
  }
  return { code: response.status >= 500 ? 'internal' : 'unknown', message: `The server answered ${response.status}.` };
}
