import type { Kysely } from 'kysely';

/**
 * A child run of sys.call (DESIGN §19) names its parent: getRun and the console's Run page show it,
 * a link from the child to the run that called it. Null for every other run, and for children recorded
 * before. No index: nothing looks runs up by their parent.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('parent_run_id', 'uuid').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('parent_run_id').execute();
}
