import { sql } from 'kysely';
import type { Db } from './database.js';

/** The console's view of webhooks (DESIGN §18): endpoints, the delivery log and its attempts. Never a signing secret. */

/** Every service account's endpoint, by account name. */
export async function listWebhookEndpoints(db: Db): Promise<{ accountId: string; name: string; url: string; createdAt: Date }[]> {
  return db
    .selectFrom('webhooks as w')
    .innerJoin('service_accounts as a', 'a.id', 'w.service_account_id')
    .select(['a.id as accountId', 'a.name', 'w.url', 'w.created_at as createdAt'])
    .orderBy('a.name')
    .execute();
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** Where a page of the delivery log starts: after this delivery (created_at to the microsecond, as PostgreSQL keeps it). */
export interface DeliveryLogPosition {
  createdAt: string;
  id: string;
}

export interface DeliveryLogRow {
  id: string;
  runId: string;
  accountId: string;
  /** Absent once the account is deleted (its deliveries stay in the log). */
  accountName: string | null;
  agentName: string | null;
  status: DeliveryStatus;
  createdAt: Date;
  deliveredAt: Date | null;
  requeuedAt: Date | null;
  position: string;
}

/**
 * A page of deliveries, newest first by (created_at, id), of one account or all, of one status or all,
 * after `after`. Ask for one more than a page to know whether there is a next one.
 */
export async function findDeliveryPage(
  db: Db,
  filter: { accountId?: string | undefined; status?: DeliveryStatus | undefined },
  page: { limit: number; after?: DeliveryLogPosition | undefined },
): Promise<DeliveryLogRow[]> {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .leftJoin('service_accounts as a', 'a.id', 'd.service_account_id')
    .leftJoin('executions as e', 'e.id', 'd.run_id')
    .select([
      'd.id',
      'd.run_id as runId',
      'd.service_account_id as accountId',
      'a.name as accountName',
      'e.agent_name as agentName',
      'd.status',
      'd.created_at as createdAt',
      'd.delivered_at as deliveredAt',
      'd.requeued_at as requeuedAt',
      sql<string>`to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('position'),
    ]);
  if (filter.accountId !== undefined) query = query.where('d.service_account_id', '=', filter.accountId);
  if (filter.status !== undefined) query = query.where('d.status', '=', filter.status);
  if (page.after) query = query.where(sql<boolean>`(d.created_at, d.id) < (${page.after.createdAt}::timestamptz, ${page.after.id}::uuid)`);
  return query.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(page.limit).execute();
}

export interface DeliveryAttemptRow {
  deliveryId: string;
  attempt: number;
  at: Date;
  url: string;
  status: number | null;
  error: string | null;
}

/** The attempts of these deliveries, oldest first (at most 13 per round of retries). */
export async function findAttemptsOf(db: Db, deliveryIds: readonly string[]): Promise<DeliveryAttemptRow[]> {
  if (!deliveryIds.length) return [];
  return db
    .selectFrom('webhook_attempts')
    .select(['delivery_id as deliveryId', 'attempt', 'at', 'url', 'status', 'error'])
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt')
    .execute();
}

/** A delivery's account's endpoint now (url null when it has none); undefined for an unknown delivery. */
export async function findDeliveryEndpoint(db: Db, deliveryId: string): Promise<{ url: string | null } | undefined> {
  return db
    .selectFrom('webhook_deliveries as d')
    .leftJoin('webhooks as w', 'w.service_account_id', 'd.service_account_id')
    .select('w.url')
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
}

/**
 * Makes a delivery pending again for another round of retries, unless it is pending already (then it
 * is left as it is). Answers its run id and the status it had, or undefined for an unknown delivery.
 * `requeued_at` is PostgreSQL's time, as the attempts' `at` are, so the two compare without clock skew.
 */
export async function requeueDelivery(db: Db, deliveryId: string): Promise<{ runId: string; was: DeliveryStatus } | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('webhook_deliveries').select(['run_id', 'status']).where('id', '=', deliveryId).forUpdate().executeTakeFirst();
    if (!row) return undefined;
    if (row.status !== 'pending') await trx.updateTable('webhook_deliveries').set({ status: 'pending', requeued_at: sql<Date>`now()` }).where('id', '=', deliveryId).execute();
    return { runId: row.run_id, was: row.status };
  });
}
