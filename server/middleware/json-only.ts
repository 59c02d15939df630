import type { Middleware } from 'koa';
import { AppError } from '../../shared/errors.js';

/** A POST must carry a JSON body (DESIGN §2): anything else is 415 before the body is read. */
export function requireJson(): Middleware {
  return async (ctx, next) => {
    if (ctx.method === 'POST' && !ctx.is('application/json')) {
      throw new AppError('unsupportedMediaType', 'Send the body as JSON with Content-Type: application/json.');
    }
    await next();
  };
}
