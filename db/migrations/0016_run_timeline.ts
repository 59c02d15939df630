import type { Kysely } from 'kysely';

/**
 * The console's Run page (DESIGN §18) shows what a run did: each fetch with its status and duration,
 * its asks and log lines (shared/run-timeline.ts), and the id of its trace. Nothing else keeps them
 * past the run (run events live minutes in Redis, traces only where a collector runs), so the execution
 * record does, written in the same statement. Null for runs that fetched, asked and logged nothing, and
 * for those recorded before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('timeline', 'jsonb').addColumn('trace_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('trace_id').dropColumn('timeline').execute();
}
