import { sql, type Kysely } from 'kysely';

/**
 * Drafts (DESIGN §5): an agent's source being developed, shared by the developers and admins, with
 * who saved it last (null from the command line), its compiled code (null when it does not compile)
 * and the compile errors. A pause made by a draft
 * run names the draft and the revision that made it, so only that revision resumes it; executions of
 * draft runs name the draft so reports can tell them apart.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('drafts')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('saved_by_kind', 'text')
    .addColumn('saved_by_id', 'uuid')
    .addColumn('agent_name', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('validation_query', 'text', (c) => c.notNull())
    .addColumn('code', 'text')
    .addColumn('source_map', 'text')
    .addColumn('compile_errors', 'jsonb', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('drafts_updated_at_idx').on('drafts').column('updated_at').execute();
  await db.schema.alterTable('paused_asks').addColumn('draft_id', 'uuid').execute();
  await db.schema.alterTable('executions').addColumn('draft_id', 'uuid').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('draft_id').execute();
  await db.schema.alterTable('paused_asks').dropColumn('draft_id').execute();
  await db.schema.dropTable('drafts').ifExists().execute();
}
