import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError } from '../../clients/typescript/src/index.js';

/** The client's verifyWebhook against signatures made by the reference Standard Webhooks package. */
describe('verifyWebhook (TypeScript client)', () => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const body = JSON.stringify({ type: 'run.ended', timestamp: new Date().toISOString(), data: { runId: 'r', convid: 'c', agentName: 'a', response: { resultCode: 'success' } } });
  const signed = (id: string, at: Date, payload = body) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, payload),
  });

  it('accepts a delivery the reference implementation signed, from a Headers object or a plain record', async () => {
    const headers = signed('msg_1', new Date());
    assert.equal((await verifyWebhook(headers, body, secret)).type, 'run.ended');
    assert.equal((await verifyWebhook(new Headers(headers), new TextEncoder().encode(body), secret)).data.runId, 'r');
    // Several signatures (a rotated secret): one valid is enough.
    const rotated = { ...headers, 'webhook-signature': `v1,${randomBytes(32).toString('base64')} ${headers['webhook-signature']}` };
    assert.equal((await verifyWebhook(rotated, body, secret)).type, 'run.ended');
  });

  it('refuses a changed body, another secret, a missing header and a stale timestamp', async () => {
    const headers = signed('msg_2', new Date());
    const refused = async (promise: Promise<unknown>) => assert.rejects(promise, WebhookVerificationError);
    await refused(verifyWebhook(headers, body.replace('success', 'failure'), secret));
    await refused(verifyWebhook(headers, body, `whsec_${randomBytes(24).toString('base64')}`));
    await refused(verifyWebhook({ ...headers, 'webhook-id': 'msg_other' }, body, secret));
    const { 'webhook-signature': _signature, ...unsigned } = headers;
    await refused(verifyWebhook(unsigned, body, secret));
    await refused(verifyWebhook(signed('msg_3', new Date(Date.now() - 10 * 60_000)), body, secret));
  });
});
