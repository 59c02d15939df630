import { sql, type Kysely } from 'kysely';

/**
 * Agent secrets come in two sets per agent name (DESIGN §13): the production set its published
 * versions read, and the drafts set an admin grants to its drafts' validation runs. Until now a draft
 * read the production set, so a developer could read what only admins may. Every secret stored before
 * this migration stays in the production set; drafts see none until an admin sets them for drafts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('agent_secrets').addColumn('for_drafts', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await db.schema.alterTable('agent_secrets').dropConstraint('agent_secrets_pkey').execute();
  await db.schema.alterTable('agent_secrets').addPrimaryKeyConstraint('agent_secrets_pkey', ['agent_name', 'for_drafts', 'key']).execute();
}

/** The drafts' secrets are deleted: with one set left, they would become production secrets. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from agent_secrets where for_drafts`.execute(db);
  await db.schema.alterTable('agent_secrets').dropConstraint('agent_secrets_pkey').execute();
  await db.schema.alterTable('agent_secrets').addPrimaryKeyConstraint('agent_secrets_pkey', ['agent_name', 'key']).execute();
  await db.schema.alterTable('agent_secrets').dropColumn('for_drafts').execute();
}
