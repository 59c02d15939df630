import type { Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { AppError, invalidRequest } from '../../shared/errors.js';

/**
 * Reads a JSON body into `ctx.request.body` (koa-bodyparser: strict, JSON only, at most `limitBytes`).
 * Whatever reading the body throws is the request's fault, never a 500: too large → 413, a
 * Content-Encoding it cannot decode → 415, anything else (not JSON, not an object or array, a compressed
 * body that does not decompress, a body cut short) → 400. Errors of the middleware after it pass untouched.
 */
export function readJsonBody(limitBytes: number): Middleware {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: String(limitBytes),
    strict: true,
    // A body is JSON by the same test requireJson applies (Koa's ctx.is). koa-bodyparser's own, older
    // type check refuses spellings such as `application/json;` and then skips the body: the request would
    // go on as if it had sent `{}` (a logout with any body at all signed out).
    detectJSON: (ctx) => Boolean(ctx.is('application/json')),
  });
  return async (ctx, next) => {
    let read = false;
    try {
      await parse(ctx, () => {
        read = true;
        return next();
      });
    } catch (err) {
      throw read ? err : unreadableBody(err);
    }
  };
}

function unreadableBody(err: unknown): AppError {
  const { type, status } = err as { type?: unknown; status?: unknown };
  if (type === 'entity.too.large' || status === 413) return new AppError('payloadTooLarge', 'The request body is too large.');
  // An unknown Content-Encoding: inflation throws a bare 415, raw-body an encoding.unsupported.
  if (type === 'encoding.unsupported' || status === 415) return new AppError('unsupportedMediaType', 'The request body’s Content-Encoding is not supported.');
  return invalidRequest({ '(body)': 'is not a JSON object or array' }, 'The request body is not valid JSON.');
}
