import { sql, type Kysely } from 'kysely';

/**
 * Idempotency-Key records (DESIGN §4), in PostgreSQL rather than Redis: a short run answered by the web
 * process writes its key's record in its commit's own statement (no round trip of its own, and a retry
 * that loses the race at its commit keeps nothing); a run that goes to the queue claims its key here
 * before it is queued. One record per caller and key; the retention sweep deletes them after 24 h.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('principal_kind', 'text', (c) => c.notNull())
    .addColumn('principal_id', 'uuid', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('run_id', 'uuid', (c) => c.notNull())
    .addColumn('convid', 'uuid', (c) => c.notNull())
    .addColumn('agent_name', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['principal_kind', 'principal_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created_at').on('idempotency_keys').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').ifExists().execute();
}
