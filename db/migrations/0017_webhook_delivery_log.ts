import { type Kysely } from 'kysely';

/**
 * The console's webhook delivery log (DESIGN §18) reads deliveries newest first by (created_at, id),
 * all of them or one account's, a page at a time from a keyset cursor: one index range scan per page.
 * `requeued_at`: when an admin last asked to deliver one again; the attempts after it are a new round
 * of retries on the schedule of DESIGN §14, which is how the log tells when the next one comes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('requeued_at', 'timestamptz').execute();
  await db.schema.createIndex('webhook_deliveries_created_idx').ifNotExists().on('webhook_deliveries').columns(['created_at desc', 'id desc']).execute();
  await db.schema
    .createIndex('webhook_deliveries_account_created_idx')
    .ifNotExists()
    .on('webhook_deliveries')
    .columns(['service_account_id', 'created_at desc', 'id desc'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_account_created_idx').ifExists().execute();
  await db.schema.dropIndex('webhook_deliveries_created_idx').ifExists().execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('requeued_at').execute();
}
