import type { Kysely } from 'kysely';

/**
 * The console's list of runs (DESIGN §18) reads execution records newest first, by (started_at, id),
 * unfiltered or filtered by agent, account or result code, a page at a time from a keyset cursor. Each
 * of those reads is one index range scan that stops after a page: without these indexes each page would
 * sort every matching record. The cost is four index inserts in each run's commit.
 */
const indexes: ReadonlyArray<readonly [name: string, columns: string[]]> = [
  ['executions_started_idx', ['started_at desc', 'id desc']],
  ['executions_agent_started_idx', ['agent_name', 'started_at desc', 'id desc']],
  ['executions_principal_started_idx', ['principal_kind', 'principal_id', 'started_at desc', 'id desc']],
  ['executions_result_started_idx', ['result_code', 'started_at desc', 'id desc']],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of indexes) await db.schema.createIndex(name).ifNotExists().on('executions').columns(columns).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name] of indexes) await db.schema.dropIndex(name).ifExists().execute();
}
