import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('call_name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('user','developer','admin')`))
    .addColumn('plan', 'text', (c) => c.notNull().check(sql`plan in ('free','paid')`))
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('service_accounts')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('user','developer','admin')`))
    .addColumn('plan', 'text', (c) => c.notNull().check(sql`plan in ('free','paid')`))
    .addColumn('key_id', 'text', (c) => c.notNull().unique())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('key_rotated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('agents')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('latest_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('agent_versions')
    .addColumn('agent_name', 'text', (c) => c.notNull().references('agents.name').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('source_map', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('agent_versions_pk', ['agent_name', 'version'])
    .execute();

  await db.schema
    .createTable('conversations')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('owner_kind', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'uuid', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('agent_vars', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('conv_vars', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('history', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('pinned', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('conversations_owner_idx')
    .on('conversations')
    .columns(['owner_kind', 'owner_id', 'last_used_at'])
    .execute();
  await db.schema.createIndex('conversations_last_used_idx').on('conversations').column('last_used_at').execute();

  await db.schema
    .createTable('paused_asks')
    .addColumn('convid', 'uuid', (c) => c.primaryKey().references('conversations.id').onDelete('cascade'))
    .addColumn('agent_name', 'text', (c) => c.notNull())
    .addColumn('agent_version', 'integer', (c) => c.notNull())
    .addColumn('ask', 'jsonb', (c) => c.notNull())
    .addColumn('journal', 'jsonb', (c) => c.notNull())
    .addColumn('start_state', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('executions')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('convid', 'uuid', (c) => c.notNull())
    .addColumn('agent_name', 'text', (c) => c.notNull())
    .addColumn('agent_version', 'integer')
    .addColumn('principal_kind', 'text', (c) => c.notNull())
    .addColumn('principal_id', 'uuid', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('result_code', 'text', (c) => c.notNull())
    .addColumn('error_message', 'text')
    .addColumn('response', 'jsonb', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('executions_convid_idx').on('executions').columns(['convid', 'finished_at']).execute();
  await db.schema.createIndex('executions_finished_idx').on('executions').columns(['finished_at']).execute();

  await db.schema
    .createTable('instance_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['instance_secrets', 'executions', 'paused_asks', 'conversations', 'agent_versions', 'agents', 'service_accounts', 'users']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
