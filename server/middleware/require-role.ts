import type { Middleware } from 'koa';
import type { Principal, Role } from '../../shared/api.js';
import { AppError } from '../../shared/errors.js';

/** After authenticate: lets through only callers with one of `roles`; anyone else gets 403 with `message`. */
export function requireRole(roles: readonly Role[], message: string): Middleware {
  return async (ctx, next) => {
    if (!roles.includes((ctx.state.principal as Principal).role)) throw new AppError('forbidden', message);
    await next();
  };
}
