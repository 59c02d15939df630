import { signWebhook } from '../../shared/webhook-signature.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { Db } from '../../db/database.js';
import { findPendingDelivery, recordAttempt, type PendingDelivery } from '../../db/webhooks.repository.js';
import type { AllowRule } from '../outbound-http/destination-guard.js';
import type { AccountSlots } from './account-slots.js';
import { httpFetch } from '../outbound-http/http-fetch.js';
import { createFetchAbort } from '../outbound-http/fetch-abort.js';
import { inDeliverySpan } from '../tracing/delivery-span.js';

/** A receiver has this long to answer. */
export const deliveryTimeoutMs = 10_000;

export interface WebhookDeliveryDeps {
  db: Db;
  box: SecretBox;
  allow: readonly AllowRule[];
  /** Attempts under way per account (fair delivery); none given: no bound. */
  slots?: AccountSlots;
  /** The time the signature carries (Unix seconds). */
  now?: () => number;
}

/** A failed attempt: the job is tried again after its backoff. */
export class DeliveryFailed extends Error {
  override name = 'DeliveryFailed';
}

/**
 * Sends a run's end to its account's endpoint, signed (Standard Webhooks), the destination checked at
 * this attempt against WEBHOOK_ALLOW, as a sys.fetch's is against AGENT_HTTP_ALLOW. A 2xx within 10 s
 * delivers it; anything else is logged and thrown, for BullMQ to retry. Nothing pending: nothing to do.
 * `deferred` when the account's deliveries hold all its slots here: nothing was sent or counted.
 */
export async function deliverWebhook(deps: WebhookDeliveryDeps, runId: string, traceparent?: string): Promise<'done' | 'deferred'> {
  const delivery = await findPendingDelivery(deps.db, runId);
  if (!delivery) return 'done';
  const release = deps.slots ? await deps.slots.take(delivery.accountId) : () => undefined;
  if (!release) return 'deferred';
  try {
    await inDeliverySpan(traceparent, delivery.url, () => attempt(deps, delivery));
  } finally {
    release();
  }
  return 'done';
}

async function attempt(deps: WebhookDeliveryDeps, delivery: PendingDelivery): Promise<void> {
  const timestamp = Math.floor((deps.now?.() ?? Date.now()) / 1000);
  const body = JSON.stringify(eventOf(delivery, timestamp));
  const secret = deps.box.open(delivery.sealedSecret);
  let status: number | null = null;
  let error: string | null = null;
  try {
    const answer = await httpFetch(
      {
        url: delivery.url,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(secret, delivery.id, timestamp, body),
          'user-agent': 'agentexec-webhooks',
        },
        body,
      },
      { allow: deps.allow, allowSetting: 'WEBHOOK_ALLOW', timeoutMs: deliveryTimeoutMs, abort: createFetchAbort(), pool: 'webhooks' },
    );
    status = answer.status;
    if (status < 200 || status > 299) error = `the receiver answered ${status}`;
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  await recordAttempt(deps.db, delivery, { status, error, delivered: error === null });
  if (error !== null) throw new DeliveryFailed(error);
}

function eventOf(delivery: PendingDelivery, timestamp: number) {
  return {
    type: 'run.ended',
    timestamp: new Date(timestamp * 1000).toISOString(),
    data: { runId: delivery.runId, convid: delivery.convid, agentName: delivery.agentName, response: delivery.response },
  };
}
