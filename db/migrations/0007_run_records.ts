import type { Kysely } from 'kysely';

/**
 * Background runs and reading a conversation back (DESIGN §14): each run's execution record, already
 * one row appended per run, also keeps the query it was called with (null for an answer to an ask:
 * answers are never kept) and when it was submitted, and is found by conversation in time order, so
 * reading a conversation's turns costs the same however long it is.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('query', 'text').addColumn('submitted_at', 'timestamptz').execute();
  await db.schema.createIndex('executions_convid_started_at_idx').on('executions').columns(['convid', 'started_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('executions_convid_started_at_idx').ifExists().execute();
  await db.schema.alterTable('executions').dropColumn('submitted_at').dropColumn('query').execute();
}
