import { sql, type Kysely } from 'kysely';

/** The usage report: one row per call made with a bearer key (DESIGN §7). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('usage_records')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // No foreign key: a deleted account's usage stays reportable, under the name it had.
    .addColumn('service_account_id', 'uuid', (c) => c.notNull())
    .addColumn('account_name', 'text', (c) => c.notNull())
    // The account's role at the time of the call, not its current one.
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('agent_name', 'text')
    .addColumn('result_code', 'text')
    .addColumn('http_status', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('usage_records_at_idx').on('usage_records').column('at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_records').ifExists().execute();
}
