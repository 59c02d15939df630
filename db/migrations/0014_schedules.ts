import { sql, type Kysely } from 'kysely';

/**
 * Schedules (DESIGN §19): what an admin set, by name. The source of truth for what runs and as whom;
 * BullMQ's job scheduler of the same id only says when (workers/schedules/). A schedule is a service
 * account's (its runs are that account's background runs, its webhook included) and goes with it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('agent_name', 'text', (c) => c.notNull())
    .addColumn('service_account_id', 'uuid', (c) => c.notNull().references('service_accounts.id').onDelete('cascade'))
    .addColumn('cron', 'text', (c) => c.notNull())
    .addColumn('tz', 'text', (c) => c.notNull())
    .addColumn('inputs', 'jsonb', (c) => c.notNull())
    .addColumn('convid', 'uuid')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('schedules').ifExists().execute();
}
