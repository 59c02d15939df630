import { sql, type Kysely } from 'kysely';

/**
 * Webhooks (DESIGN §14): one endpoint per service account; an outbox of run.ended deliveries, one per
 * background run of an account that has one, written by the same statement as the run's execution
 * record (a trigger on its insert, so no path that records a run can forget it, and a crash loses
 * none); and the log of delivery attempts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('background', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await db.schema
    .createTable('webhooks')
    .addColumn('service_account_id', 'uuid', (c) => c.primaryKey().references('service_accounts.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('sealed_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('run_id', 'uuid', (c) => c.notNull().unique())
    .addColumn('service_account_id', 'uuid', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('delivered_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('webhook_deliveries_pending_idx').on('webhook_deliveries').column('created_at').where(sql.ref('status'), '=', 'pending').execute();
  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_id', 'uuid', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pkey', ['delivery_id', 'attempt'])
    .execute();
  await sql`
    create function queue_webhook_delivery() returns trigger language plpgsql as $$
    begin
      insert into webhook_deliveries (run_id, service_account_id)
        select new.id, w.service_account_id from webhooks w where w.service_account_id = new.principal_id
        on conflict (run_id) do nothing;
      return new;
    end $$`.execute(db);
  await sql`
    create trigger executions_queue_webhook after insert on executions
      for each row when (new.background and new.principal_kind = 'serviceAccount')
      execute function queue_webhook_delivery()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists executions_queue_webhook on executions`.execute(db);
  await sql`drop function if exists queue_webhook_delivery()`.execute(db);
  await db.schema.dropTable('webhook_attempts').ifExists().execute();
  await db.schema.dropTable('webhook_deliveries').ifExists().execute();
  await db.schema.dropTable('webhooks').ifExists().execute();
  await db.schema.alterTable('executions').dropColumn('background').execute();
}
