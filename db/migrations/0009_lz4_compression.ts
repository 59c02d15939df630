import { sql, type Kysely } from 'kysely';

/**
 * The large JSON columns are compressed with lz4 instead of PostgreSQL's default pglz. A run rewrites
 * its conversation's history (up to 500 entries, ~20 KB compressed) at every commit; on this kind of
 * machine pglz cost 2.4–2.7 ms of PostgreSQL CPU for such an update and lz4 0.9–1.4 ms, at the same size.
 * Only values written from now on are compressed with lz4; old ones are read as they are. A PostgreSQL
 * built without lz4 keeps pglz: the migration then changes nothing.
 */
const columns: [table: string, column: string][] = [
  ['conversations', 'history'],
  ['conversations', 'agent_vars'],
  ['conversations', 'conv_vars'],
  ['paused_asks', 'journal'],
  ['paused_asks', 'start_state'],
  ['executions', 'response'],
];

async function setCompression(db: Kysely<unknown>, method: 'lz4' | 'pglz'): Promise<void> {
  const statements = columns.map(([table, column]) => `alter table ${table} alter column ${column} set compression ${method};`).join('\n');
  await sql
    .raw(
      `do $$ begin
        ${statements}
      exception when feature_not_supported then
        raise notice 'lz4 compression is not supported by this PostgreSQL; the columns keep pglz';
      end $$`,
    )
    .execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await setCompression(db, 'lz4');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await setCompression(db, 'pglz');
}
