import type { ErrorBody } from './types.js';

export type { ErrorBody };

/**
 * An answer of the API that is not a result: `code` as the API names it (`invalidRequest`,
 * `notFound`, …, or `network` when no answer came), `status` the HTTP status (0 for `network`),
 * `details` what the API added (`fields` of a refused request). Subclasses by code let a caller
 * catch one kind: `catch (err) { if (err instanceof NotFoundError) … }`.
 */
export class AgentexecError extends Error {
  override name = 'AgentexecError';
  readonly code: string;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** The X-Request-Id of the answer, to quote to the service's operators. */
  readonly requestId: string | undefined;

  constructor(body: ErrorBody, status: number, requestId?: string, options?: { cause?: unknown }) {
    super(body.message, options);
    this.code = body.code;
    this.status = status;
    this.details = body.details;
    this.requestId = requestId;
  }
}

/** 400 `invalidRequest` and the other refusals of a request's content; `fields` names what is wrong. */
export class InvalidRequestError extends AgentexecError {
  override name = 'InvalidRequestError';
  get fields(): Record<string, string> {
    return (this.details?.fields as Record<string, string> | undefined) ?? {};
  }
}
/** 401: no credential, or one the API does not accept. */
export class UnauthenticatedError extends AgentexecError {
  override name = 'UnauthenticatedError';
}
/** 403: the caller may not do this. */
export class ForbiddenError extends AgentexecError {
  override name = 'ForbiddenError';
}
/** 404 `notFound`, `agentNotFound`, `draftNotFound`. */
export class NotFoundError extends AgentexecError {
  override name = 'NotFoundError';
}
/** 409 `conversationBusy`: the conversation's earlier calls did not leave room in time. */
export class ConversationBusyError extends AgentexecError {
  override name = 'ConversationBusyError';
}
/**
 * 429 `rateLimited`: a limit per caller (DESIGN §16), or too many failed sign-ins. `retryAfter` (also
 * `retryAfterSeconds`): the seconds the Retry-After header said to wait. Calls that start a run are
 * sent again by the client after that wait, up to `maxRetries` times, before this is thrown.
 */
export class RateLimitedError extends AgentexecError {
  override name = 'RateLimitedError';
  retryAfterSeconds: number | undefined;
  get retryAfter(): number | undefined {
    return this.retryAfterSeconds;
  }
}
/** 503 `unavailable`: the service's database or Redis is down; retrying later is safe. */
export class UnavailableError extends AgentexecError {
  override name = 'UnavailableError';
}
/** No answer came (the connection failed or was cut, and retries ran out). */
export class NetworkError extends AgentexecError {
  override name = 'NetworkError';
}

const byCode: Record<string, typeof AgentexecError> = {
  invalidRequest: InvalidRequestError,
  payloadTooLarge: InvalidRequestError,
  unsupportedMediaType: InvalidRequestError,
  unauthenticated: UnauthenticatedError,
  invalidCredentials: UnauthenticatedError,
  forbidden: ForbiddenError,
  notFound: NotFoundError,
  agentNotFound: NotFoundError,
  draftNotFound: NotFoundError,
  conversationBusy: ConversationBusyError,
  rateLimited: RateLimitedError,
  unavailable: UnavailableError,
  network: NetworkError,
};

/** The HTTP status the API answers a code with (for a refusal that came as a stream's `error` event). */
const statusOfCode: Record<string, number> = {
  invalidRequest: 400,
  unauthenticated: 401,
  forbidden: 403,
  notFound: 404,
  agentNotFound: 404,
  draftNotFound: 404,
  conversationBusy: 409,
  rateLimited: 429,
  internal: 500,
  unavailable: 503,
};

/** The error a stream's `error` event carries (a call refused before it ran); `requestId` is the stream response's X-Request-Id. */
export function errorOfEvent(body: ErrorBody, requestId?: string): AgentexecError {
  return errorFor(body, statusOfCode[body.code] ?? 400, requestId);
}

/** The error class for an API error body. */
export function errorFor(body: ErrorBody, status: number, requestId?: string, retryAfter?: string | null): AgentexecError {
  const ErrorClass = byCode[body.code] ?? AgentexecError;
  const error = new ErrorClass(body, status, requestId);
  if (error instanceof RateLimitedError && retryAfter) error.retryAfterSeconds = Number(retryAfter) || undefined;
  return error;
}

export function networkError(message: string, cause?: unknown, requestId?: string): NetworkError {
  return new NetworkError({ code: 'network', message }, 0, requestId, { cause });
}
