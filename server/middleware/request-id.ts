import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives every request an id: the caller's `X-Request-Id` when it is sane, else a new one; echoed back. */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id');
    const id = acceptable.test(given) ? given : randomUUID();
    ctx.state.requestId = id;
    ctx.state.requestIdGiven = id === given;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
