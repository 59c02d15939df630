import type { Middleware } from 'koa';
import { AppError, isUnavailableError, type ErrorCode } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';

/** Errors thrown by koa-bodyparser / raw-body, by their `type`. */
const bodyErrors: Record<string, ErrorCode> = {
  'entity.too.large': 'payloadTooLarge',
  'entity.parse.failed': 'invalidRequest',
  'encoding.unsupported': 'unsupportedMediaType',
  'charset.unsupported': 'unsupportedMediaType',
  'request.aborted': 'invalidRequest',
};

const bodyMessages: Partial<Record<ErrorCode, string>> = {
  payloadTooLarge: 'The request body is too large.',
  invalidRequest: 'The request body is not valid JSON.',
  unsupportedMediaType: 'The request body encoding is not supported.',
};

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
      ctx.body = { error: { code: appError.code, message: appError.message, ...(appError.details ? { details: appError.details } : {}) } };
    }
  };
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isUnavailableError(err)) return new AppError('unavailable', 'A service the server depends on is unavailable; try again shortly.');
  const type = (err as { type?: unknown }).type;
  const bodyCode = typeof type === 'string' ? bodyErrors[type] : undefined;
  if (bodyCode) return new AppError(bodyCode, bodyMessages[bodyCode] ?? 'The request body is not acceptable.');
  const status = (err as { status?: unknown }).status;
  // co-body marks a JSON syntax error (or a strict-mode non-object) with status 400 and no type.
  if (status === 400) return new AppError('invalidRequest', bodyMessages.invalidRequest!);
  if (status === 404 || status === 405) return new AppError('notFound', 'No such endpoint.');
  if (status === 413) return new AppError('payloadTooLarge', 'The request body is too large.');
  return new AppError('internal', 'An internal error occurred.');
}

