import type { Principal } from '../../shared/api.js';
import { sessionCutoffs } from '../../shared/session-lifetime.js';
import { deleteSessionByTokenHash, useSession } from '../../db/sessions.repository.js';
import type { WebDeps } from '../deps.js';
import { hashSessionToken, readSessionJwt } from './session-token.js';

export interface SessionCaller {
  principal: Principal;
  sessionId: string;
}

/**
 * The user a session cookie signs in, when its JWT is ours and its session row still lives (not
 * ended, not idle too long, not past its maximum lifetime). Using it counts as activity.
 */
export async function callerOfSession(deps: WebDeps, cookie: string): Promise<SessionCaller | undefined> {
  const now = deps.clock.now();
  const token = readSessionJwt(deps.secrets.sessionSecret, cookie, now);
  if (!token) return undefined;
  const found = await useSession(deps.db, hashSessionToken(token), now, sessionCutoffs(deps.config, now));
  if (!found) return undefined;
  return { principal: { kind: 'user', id: found.userId, role: found.role, plan: found.plan }, sessionId: found.sessionId };
}

/** Ends the session the cookie names (logout); a cookie that names none ends nothing. Returns the ended session's id. */
export async function endSession(deps: WebDeps, cookie: string): Promise<string | undefined> {
  const token = readSessionJwt(deps.secrets.sessionSecret, cookie, deps.clock.now());
  return token ? deleteSessionByTokenHash(deps.db, hashSessionToken(token)) : undefined;
}
