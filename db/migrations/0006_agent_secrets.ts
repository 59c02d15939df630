import { sql, type Kysely } from 'kysely';

/** Agent secrets (DESIGN §13): values granted to an agent name, sealed with SECRETS_KEY. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_secrets')
    .addColumn('agent_name', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('agent_secrets_pkey', ['agent_name', 'key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('agent_secrets').ifExists().execute();
}
