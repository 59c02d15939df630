/** Error codes of DESIGN §2, each with its HTTP status. The one table the error middleware uses. */
export const errorStatus = {
  invalidRequest: 400,
  invalidCode: 400,
  passwordRules: 400,
  invalidCredentials: 401,
  unauthenticated: 401,
  forbidden: 403,
  notFound: 404,
  agentNotFound: 404,
  draftNotFound: 404,
  conversationBusy: 409,
  payloadTooLarge: 413,
  unsupportedMediaType: 415,
  rateLimited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** Field name → what is wrong with it. */
export type FieldErrors = Record<string, string>;

/**
 * An error the API reports to its caller as `{error:{code,message,details}}`.
 * Services throw it; only the HTTP edge turns it into a status.
 */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Response headers that go with it (a 429's RateLimit fields). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

/** A 400 naming the fields that are wrong. */
export function invalidRequest(fields: FieldErrors, message = 'The request is not valid.'): AppError {
  return new AppError('invalidRequest', message, { fields });
}

// Network errors, and PostgreSQL's admin/crash shutdown, starting up, and connection failures (class 08).
const unavailableCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006']);

/**
 * True for errors that mean PostgreSQL or Redis cannot be reached right now (connection refused or lost,
 * server shutting down, Redis offline with no offline queue, a Redis Cluster slot without a reachable
 * master during a failover). Such failures become 503 `unavailable`.
 */
export function isUnavailableError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && unavailableCodes.has(code)) return true;
  const message = err.message;
  return (
    err.name === 'MaxRetriesPerRequestError' ||
    message.includes("enableOfflineQueue options is false") ||
    message.includes('Connection is closed') ||
    message.includes('Connection terminated') ||
    message.includes('not queryable') ||
    message.includes('connect ECONNREFUSED') ||
    /^(CLUSTERDOWN|TRYAGAIN|READONLY|MASTERDOWN|LOADING) /.test(message) ||
    message.startsWith('Too many Cluster redirections') ||
    message.includes('None of startup nodes is available') ||
    message.includes('timeout exceeded when trying to connect')
  );
}
