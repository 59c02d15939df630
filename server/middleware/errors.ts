import type { Middleware } from 'koa';
import { AppError, invalidRequest, isUnavailableError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';

/**
 * Renders every failure as `{error:{code,message,details?}}` (DESIGN §2). Unknown errors are logged and
 * become a bare 500: no stack, no SQL, no secrets reach the caller.
 */
export function renderErrors(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const appError = toAppError(err);
      if (appError.code === 'internal') logger.error({ err, requestId: ctx.state.requestId }, 'request failed');
      else if (appError.code === 'unavailable') logger.warn({ err: String(err), requestId: ctx.state.requestId }, 'dependency unavailable');
      ctx.status = appError.status;
      if (appError.code === 'unavailable') ctx.set('Retry-After', '1');
      const retryAfter = appError.details?.retryAfterSeconds;
      if (typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
      if (appError.headers) ctx.set(appError.headers);
      ctx.body = { error: { code: appError.code, message: appError.message, ...(appError.details ? { details: appError.details } : {}) } };
    }
  };
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isUnavailableError(err)) return new AppError('unavailable', 'A service the server depends on is unavailable; try again shortly.');
  // Client errors of the libraries under us (http-errors): the router's 404/405, and a 400 such as a path
  // that does not decode. Errors reading the body are turned into AppErrors where it is read (json-body.ts).
  const status = (err as { status?: unknown }).status;
  if (status === 400) return invalidRequest({ '(request)': 'is not valid' }, 'The request is not valid.');
  if (status === 404 || status === 405) return new AppError('notFound', 'No such endpoint.');
  return new AppError('internal', 'An internal error occurred.');
}

