import { createHash, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';

/**
 * A session's token: 256 random bits, carried in the cookie inside a signed JWT. The database keeps
 * only its SHA-256 (a stolen table opens no session).
 */
export function newSessionToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashSessionToken(token) };
}

export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** The cookie's value: an HS256 JWT naming the session, expiring with the session's maximum lifetime. */
export function signSessionJwt(secret: string, token: string, now: Date, maxAgeSeconds: number): string {
  const iat = Math.floor(now.getTime() / 1000);
  return jwt.sign({ sid: token, iat, exp: iat + maxAgeSeconds }, secret, { algorithm: 'HS256' });
}

/** The session token in a cookie value, when its signature is ours and it has not expired. */
export function readSessionJwt(secret: string, value: string, now: Date): string | undefined {
  try {
    const payload = jwt.verify(value, secret, { algorithms: ['HS256'], clockTimestamp: Math.floor(now.getTime() / 1000) });
    const sid = typeof payload === 'object' ? payload.sid : undefined;
    return typeof sid === 'string' && /^[A-Za-z0-9_-]{43}$/.test(sid) ? sid : undefined;
  } catch {
    return undefined;
  }
}
