import type { Kysely } from 'kysely';

/**
 * Execution records were indexed twice by conversation: (convid, finished_at) from the start and
 * (convid, started_at) since conversations are read back by their turns (0007). Every lookup by
 * conversation is served by the second (reading turns in order, deleting a conversation's records), so
 * the first only cost an index insert in every run's commit.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('executions_convid_idx').ifExists().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('executions_convid_idx').ifNotExists().on('executions').columns(['convid', 'finished_at']).execute();
}
