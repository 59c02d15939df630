import { randomBytes } from 'node:crypto';
import type { Role } from '../../shared/api.js';
import { AppError } from '../../shared/errors.js';
import { hashPassword, verifyPassword } from '../../shared/password-hash.js';
import { passwordLength } from '../../shared/password-rules.js';
import { sessionMaxAgeSeconds } from '../../shared/session-lifetime.js';
import { deleteSessionByTokenHash, insertSession } from '../../db/sessions.repository.js';
import { clearFailedLogins, findUserByEmail, recordFailedLogin } from '../../db/users.repository.js';
import type { User } from '../../db/schema.js';
import type { WebDeps } from '../deps.js';
import { checkLogin, clearLoginFailures, recordLoginFailure } from './sign-in-limits.js';
import { hashSessionToken, newSessionToken, readSessionJwt, signSessionJwt } from './session-token.js';

/** Failed logins in a row after which the password stops working until it is reset (NIST SP 800-63B). */
export const maxFailedLogins = 100;

export interface LoginAttempt {
  email: string;
  password: string;
  ip: string;
  /** The cookie the browser still sent, if any: its session ends (a new session at every login). */
  previousCookie?: string;
}

export interface SignedIn {
  user: { id: string; email: string; callName: string; role: Role };
  cookie: string;
}

const refused = () => new AppError('invalidCredentials', 'The email or password is not correct.');

/**
 * A hash of a random password with the real parameters: checked when the address has no user or no
 * password, so every login costs one full hash and unknown addresses cannot be told by timing.
 */
let decoyHash: Promise<string> | undefined;
export function prepareDecoyHash(): Promise<string> {
  decoyHash ??= hashPassword(randomBytes(24).toString('base64url'));
  return decoyHash;
}

/**
 * Checks the password and starts a new session. Unknown address, no password yet, wrong password and a
 * password disabled after too many failures all answer the same 401; each failure is counted against
 * the address (growing delay) and the client address (429 over its limit).
 */
export async function login(deps: WebDeps, attempt: LoginAttempt): Promise<SignedIn> {
  const now = deps.clock.now();
  const source = { prefix: deps.config.queuePrefix, email: attempt.email, ip: attempt.ip, now };
  const throttle = await checkLogin(deps.redis, source, deps.config.loginIpMaxFailures);
  if (!throttle.allowed) {
    logLogin(deps, attempt, 'failure', 'throttled');
    throw new AppError('rateLimited', 'Too many failed sign-ins; wait before trying again.', { retryAfterSeconds: throttle.retryAfterSeconds });
  }
  const user = await findUserByEmail(deps.db, attempt.email);
  const failure = await passwordFailure(attempt.password, user);
  if (failure) {
    // The growing delay counts from the failure, not from the attempt's start: the hash before it takes
    // a while, more on a busy machine, and a delay of 1 s could all but pass before it was recorded.
    await recordLoginFailure(deps.redis, { ...source, now: deps.clock.now() }, deps.config.loginIpMaxFailures);
    const failures = user ? await recordFailedLogin(deps.db, user.id) : 0;
    logLogin(deps, attempt, 'failure', failure, user?.id, failures);
    throw refused();
  }
  const signedInUser = user!;
  const token = newSessionToken();
  const previous = attempt.previousCookie && readSessionJwt(deps.secrets.sessionSecret, attempt.previousCookie, now);
  if (previous) await deleteSessionByTokenHash(deps.db, hashSessionToken(previous));
  await insertSession(deps.db, { tokenHash: token.hash, userId: signedInUser.id, now });
  await Promise.all([clearFailedLogins(deps.db, signedInUser.id), clearLoginFailures(deps.redis, deps.config.queuePrefix, attempt.email)]);
  logLogin(deps, attempt, 'success', undefined, signedInUser.id);
  return {
    user: { id: signedInUser.id, email: signedInUser.email, callName: signedInUser.call_name, role: signedInUser.role },
    cookie: signSessionJwt(deps.secrets.sessionSecret, token.token, now, sessionMaxAgeSeconds(deps.config)),
  };
}

/** Why the password does not sign this user in, or undefined when it does. Always costs one hash, except for an over-long password. */
async function passwordFailure(password: string, user: User | undefined): Promise<string | undefined> {
  // Refused before hashing: a password this long was never accepted.
  if (password.length > 4 * passwordLength.max || [...password].length > passwordLength.max) return 'passwordTooLong';
  const matches = await verifyPassword(password, user?.password_hash ?? (await prepareDecoyHash()));
  if (!user) return 'unknownEmail';
  if (!user.password_hash) return 'noPassword';
  if (!matches) return 'wrongPassword';
  if (user.failed_logins >= maxFailedLogins) return 'passwordDisabled';
  return undefined;
}

function logLogin(deps: WebDeps, attempt: LoginAttempt, outcome: 'success' | 'failure', reason?: string, userId?: string, failures?: number): void {
  const line = { event: 'login', outcome, reason, email: attempt.email, userId, ip: attempt.ip, failures };
  if (outcome === 'success') deps.logger.info(line, 'sign-in succeeded');
  else deps.logger.warn(line, 'sign-in failed');
}
