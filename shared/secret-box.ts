import { createCipheriv, createDecipheriv, createHash, randomFillSync } from 'node:crypto';

/** Encrypts small secrets at rest (password answers of a paused ask) with AES-256-GCM under SECRETS_KEY. */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

const version = 'v1';

const ivBytes = 12;
/**
 * Random IVs, drawn from a pool refilled 256 at a time. Every call's inputs are sealed into its job, and
 * one `randomBytes(12)` per seal was 4.5 % of a web process's busy time at 64 clients. The IV is
 * consumed before seal returns, so its bytes may be drawn over afterwards.
 */
const ivPool = Buffer.alloc(ivBytes * 256);
let ivTaken = ivPool.length;

function nextIv(): Buffer {
  if (ivTaken === ivPool.length) {
    randomFillSync(ivPool);
    ivTaken = 0;
  }
  ivTaken += ivBytes;
  return ivPool.subarray(ivTaken - ivBytes, ivTaken);
}

export function createSecretBox(secretsKey: string): SecretBox {
  const key = createHash('sha256').update(`agentexec secret box\0${secretsKey}`).digest();
  return {
    seal(plain) {
      const iv = nextIv();
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [version, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
    },
    open(sealed) {
      const [v, iv, tag, data] = sealed.split('.');
      if (v !== version || !iv || !tag || data === undefined) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
