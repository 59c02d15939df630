import { createHmac, hkdfSync, randomInt } from 'node:crypto';

/** A one-time code: 6 digits from a secure random source. */
export function generateEmailCode(): string {
  return randomInt(0, 1_000_000).toString().padStart(6, '0');
}

/**
 * The keyed hash stored in place of a code: HMAC-SHA256 under a key derived from SECRETS_KEY, over the
 * user, the address and the code, so a code is only good for the address it was sent to.
 */
export function hashEmailCode(secretsKey: string, code: { userId: string; email: string; code: string }): string {
  const key = Buffer.from(hkdfSync('sha256', secretsKey, '', 'agentexec email code', 32));
  return createHmac('sha256', key).update(`${code.userId}\n${code.email}\n${code.code}`).digest('base64url');
}
