import type { Kysely } from 'kysely';

/**
 * The conversation's version (DESIGN §11): a run reads it with the conversation, runs with no
 * connection held, and commits only where it is still the same, raising it by one. A stale writer
 * (a run whose turn was given up, a second commit from the same version) changes nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('conversations').addColumn('version', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
