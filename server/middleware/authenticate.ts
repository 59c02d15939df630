import type { Context, Middleware } from 'koa';
import type { Principal } from '../../shared/api.js';
import { AppError, invalidRequest } from '../../shared/errors.js';
import { keySecretMatches, parseServiceAccountKey } from '../../shared/service-account-key.js';
import type { WebDeps } from '../deps.js';
import { clearSessionCookie, readSessionCookie } from '../auth/session-cookie.js';
import { callerOfSession } from '../auth/sessions.js';
import { assertFromAllowedOrigin, normalizeOrigins } from './same-origin.js';

/**
 * Establishes who calls: exactly one credential, the session cookie or a bearer key in the
 * Authorization header (DESIGN §3); both → 400, neither → 401. Sets `ctx.state.principal`, for a
 * session also `ctx.state.sessionId`, and for a bearer key also `ctx.state.accountName` (usage report).
 * - A bearer key finds its account through `deps.bearerKeys`: a per-process cache while the process hears
 *   account changes on Redis, else the database. A rotated or deleted key is refused on every web
 *   process as soon as the change message arrives (milliseconds); a change no message announced (Redis
 *   unreachable from the CLI, an edit by hand in SQL) shows after the cache's maximum age, 60 s. The
 *   secret is checked against the cached hash on every call.
 * - A cookie call must come from the server's own origin (CSRF) and names a session that must still live.
 */
export function authenticate(deps: WebDeps): Middleware {
  const allowedOrigins = normalizeOrigins(deps.config.allowedOrigins);
  return async (ctx, next) => {
    const authorization = ctx.get('Authorization');
    const cookie = readSessionCookie(ctx, deps.config);
    if (authorization && cookie) {
      const both = 'send either the session cookie or a bearer key, not both';
      throw invalidRequest({ Authorization: both, Cookie: both }, 'Send either a session cookie or a bearer key, not both.');
    }
    if (authorization) {
      const bearer = await principalForBearer(deps, authorization);
      ctx.state.principal = bearer.principal;
      ctx.state.accountName = bearer.accountName;
    } else if (cookie) {
      assertFromAllowedOrigin(ctx, allowedOrigins);
      await identifySession(deps, ctx, cookie);
    } else {
      throw new AppError('unauthenticated', 'Sign in or send a bearer key.');
    }
    await next();
  };
}

/**
 * Sets the caller of the session the cookie names (`principal`, `sessionId`); a session that has ended
 * clears the cookie and is 401 with `details.sessionEnded`. No origin check: that is the caller's part.
 */
export async function identifySession(deps: WebDeps, ctx: Context, cookie: string): Promise<void> {
  const caller = await callerOfSession(deps, cookie);
  if (!caller) {
    clearSessionCookie(ctx, deps.config);
    throw new AppError('unauthenticated', 'Your session has ended; sign in again.', { sessionEnded: true });
  }
  ctx.state.principal = caller.principal;
  ctx.state.sessionId = caller.sessionId;
}

async function principalForBearer(deps: WebDeps, authorization: string): Promise<{ principal: Principal; accountName: string }> {
  const match = /^Bearer +(\S+)$/i.exec(authorization);
  const parsed = match && parseServiceAccountKey(match[1]!);
  if (!parsed) throw keyRefused();
  const account = await deps.bearerKeys.findAccount(parsed.keyId);
  if (!account || !keySecretMatches(parsed.secret, account.key_hash)) throw keyRefused();
  return { principal: { kind: 'serviceAccount', id: account.id, role: account.role, plan: account.plan }, accountName: account.name };
}

// Made only when thrown: an error captures a stack, which a call with a good key should not pay for.
function keyRefused(): AppError {
  return new AppError('unauthenticated', 'The bearer key is not valid.');
}
