import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A service account key `ak_<keyId>_<secret>`: keyId finds the row, only a hash of secret is stored. */
export interface ServiceAccountKey {
  key: string;
  keyId: string;
  secretHash: string;
}

const keyPattern = /^ak_([a-z0-9]{16})_([A-Za-z0-9_-]{43})$/;

/** Makes a new key: 80-bit public id, 256-bit secret. */
export function generateServiceAccountKey(): ServiceAccountKey {
  const keyId = randomBytes(10).toString('hex').slice(0, 16);
  const secret = randomBytes(32).toString('base64url');
  return { key: `ak_${keyId}_${secret}`, keyId, secretHash: hashKeySecret(secret) };
}

/** Splits a presented key; undefined when it is not shaped like one of ours. */
export function parseServiceAccountKey(key: string): { keyId: string; secret: string } | undefined {
  const match = keyPattern.exec(key);
  return match ? { keyId: match[1]!, secret: match[2]! } : undefined;
}

export function hashKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of a presented secret with the stored hash. */
export function keySecretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashKeySecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
