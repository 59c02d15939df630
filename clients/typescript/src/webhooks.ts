import type { WebhookEvent } from './types.js';

/** A webhook delivery that is not from the service, or too old to trust. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export interface VerifyOptions {
  /** Deliveries signed longer ago (or further ahead) than this are refused: replays. Default 300. */
  toleranceSeconds?: number;
  /** The time to check against (Unix seconds); default now. */
  now?: number;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/**
 * Checks a webhook delivery (Standard Webhooks, DESIGN §14): `webhook-signature` must hold a `v1,`
 * signature that is the HMAC-SHA256, keyed with the secret (`whsec_…`, base64 after the prefix), of
 * `{webhook-id}.{webhook-timestamp}.{body}`, and the timestamp must be within the tolerance. `body`
 * is the raw request body, exactly as received. Answers the parsed event; throws
 * WebhookVerificationError otherwise.
 */
export async function verifyWebhook(headers: HeaderSource, body: string | Uint8Array, secret: string, options: VerifyOptions = {}): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  const sentAt = Number(timestamp);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (!/^\d+$/.test(timestamp) || Math.abs(now - sentAt) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('the webhook-timestamp is not within the tolerance');
  }
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const expected = await sign(secret, `${id}.${timestamp}.${text}`);
  const given = signatures.split(' ').flatMap((entry) => (entry.startsWith('v1,') ? [entry.slice(3)] : []));
  if (!given.some((signature) => constantTimeEqual(signature, expected))) throw new WebhookVerificationError('no valid signature');
  return JSON.parse(text) as WebhookEvent;
}

async function sign(secret: string, content: string): Promise<string> {
  const keyBytes = base64ToBytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(content)));
  let binary = '';
  for (const byte of mac) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(' ') : value;
}
