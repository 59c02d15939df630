import { sql } from 'kysely';
import type { ExecutionResponse } from '../shared/api.js';
import type { Db } from './database.js';

/** Sets (or replaces) an account's webhook endpoint. */
export async function upsertWebhook(db: Db, serviceAccountId: string, url: string, sealedSecret: string): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({ service_account_id: serviceAccountId, url, sealed_secret: sealedSecret })
    .onConflict((oc) => oc.column('service_account_id').doUpdateSet({ url, sealed_secret: sealedSecret, created_at: sql`now()` }))
    .execute();
}

export async function deleteWebhook(db: Db, serviceAccountId: string): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where('service_account_id', '=', serviceAccountId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A delivery still to make, with what it sends and where (the account's endpoint now). */
export interface PendingDelivery {
  id: string;
  /** The service account whose run it is. */
  accountId: string;
  attempts: number;
  url: string;
  sealedSecret: string;
  runId: string;
  convid: string;
  agentName: string;
  response: ExecutionResponse;
}

/** The pending delivery of a run's end; undefined when there is none (delivered, or no webhook). */
export async function findPendingDelivery(db: Db, runId: string): Promise<PendingDelivery | undefined> {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.service_account_id', 'd.service_account_id')
    .innerJoin('executions as e', 'e.id', 'd.run_id')
    .select(['d.id', 'd.service_account_id as accountId', 'd.attempts', 'w.url', 'w.sealed_secret as sealedSecret', 'e.id as runId', 'e.convid', 'e.agent_name as agentName', 'e.response'])
    .where('d.run_id', '=', runId)
    .where('d.status', '=', 'pending')
    .executeTakeFirst() as Promise<PendingDelivery | undefined>;
}

/** Logs one attempt and counts it; a success marks the delivery delivered. */
export async function recordAttempt(db: Db, delivery: PendingDelivery, outcome: { status: number | null; error: string | null; delivered: boolean }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('webhook_attempts')
      .values({ delivery_id: delivery.id, attempt: delivery.attempts + 1, url: delivery.url, status: outcome.status, error: outcome.error })
      .execute();
    await trx
      .updateTable('webhook_deliveries')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), ...(outcome.delivered ? { status: 'delivered' as const, delivered_at: new Date() } : {}) }))
      .where('id', '=', delivery.id)
      .execute();
  });
}

/** Gives up on a delivery (its retries ran out). */
export async function markDeliveryFailed(db: Db, deliveryId: string): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ status: 'failed' }).where('id', '=', deliveryId).where('status', '=', 'pending').execute();
}

/** Runs whose delivery is pending, older than `olderThan`, and still has an endpoint to go to: their job may have been lost. */
export async function findStalledDeliveries(db: Db, olderThan: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.service_account_id', 'd.service_account_id')
    .select('d.run_id')
    .where('d.status', '=', 'pending')
    .where('d.created_at', '<', olderThan)
    .orderBy('d.created_at')
    .limit(limit)
    .execute();
  return rows.map((row) => row.run_id);
}

/**
 * An account's latest delivery attempts, newest first. `status` and `error` are the attempt's (its
 * HTTP status, null when none came back); `delivery` is its delivery's status now, not the attempt's.
 */
export async function findRecentAttempts(db: Db, serviceAccountId: string, limit: number) {
  return db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .select(['d.id as webhookId', 'd.run_id as runId', 'd.status as delivery', 'a.attempt', 'a.at', 'a.url', 'a.status', 'a.error'])
    .where('d.service_account_id', '=', serviceAccountId)
    .orderBy('a.at', 'desc')
    .orderBy('a.attempt', 'desc')
    .limit(limit)
    .execute();
}
