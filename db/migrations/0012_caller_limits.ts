import { sql, type Kysely } from 'kysely';

/**
 * Limits per caller (DESIGN §16) an admin set for one account; a null column means "the default from
 * config". The account is a user or a service account (two tables), so no foreign key: the row of a
 * deleted account is never read again (ids are never reused).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('caller_limits')
    .addColumn('principal_kind', 'text', (c) => c.notNull())
    .addColumn('principal_id', 'uuid', (c) => c.notNull())
    .addColumn('runs_per_minute', 'integer')
    .addColumn('runs_in_flight', 'integer')
    .addColumn('weight', 'integer')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('caller_limits_pkey', ['principal_kind', 'principal_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('caller_limits').ifExists().execute();
}
