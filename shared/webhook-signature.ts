import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (DESIGN §14): a secret `whsec_` + base64 of 24 random bytes; the
 * signature `v1,` + base64 of the HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the secret's
 * decoded bytes. A few lines of node:crypto: the reference package (standardwebhooks) checks them in
 * the tests.
 */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
