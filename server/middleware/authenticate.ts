import type { Middleware } from 'koa';
import type { Principal } from '../../shared/api.js';
import { AppError } from '../../shared/errors.js';
import { keySecretMatches, parseServiceAccountKey } from '../../shared/service-account-key.js';
import { findServiceAccountByKeyId } from '../../db/service-accounts.repository.js';
import type { WebDeps } from '../deps.js';

export const sessionCookieName = 'agentexec_session';

/**
 * Establishes who calls: exactly one credential, the session cookie or a bearer key (DESIGN §3).
 * The key is checked against the database on every call, so a rotated or deleted key is refused at
 * once on every web process.
 */
export function authenticate(deps: WebDeps): Middleware {
  return async (ctx, next) => {
    const authorization = ctx.get('Authorization');
    const cookie = ctx.cookies.get(sessionCookieName);
    if (authorization && cookie) throw new AppError('invalidRequest', 'Send either a session cookie or a bearer key, not both.');
    if (!authorization) {
      throw new AppError('unauthenticated', cookie ? 'The session is not valid; sign in again.' : 'Sign in or send a bearer key.');
    }
    ctx.state.principal = await principalForBearer(deps, authorization);
    await next();
  };
}

async function principalForBearer(deps: WebDeps, authorization: string): Promise<Principal> {
  const refused = new AppError('unauthenticated', 'The bearer key is not valid.');
  const match = /^Bearer +(\S+)$/i.exec(authorization);
  const parsed = match && parseServiceAccountKey(match[1]!);
  if (!parsed) throw refused;
  const account = await findServiceAccountByKeyId(deps.db, parsed.keyId);
  if (!account || !keySecretMatches(parsed.secret, account.key_hash)) throw refused;
  return { kind: 'serviceAccount', id: account.id, role: account.role, plan: account.plan };
}
