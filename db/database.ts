import { CompiledQuery, Kysely, Migrator, PostgresAdapter, PostgresDialect, sql, type Migration, type MigrationProvider } from 'kysely';
import { createHash } from 'node:crypto';
import { userInfo } from 'node:os';
import pg from 'pg';
import type { Database } from './schema.js';
import * as initial from './migrations/0001_initial.js';
import * as signIn from './migrations/0002_sign_in.js';
import * as usage from './migrations/0003_usage.js';
import * as drafts from './migrations/0004_drafts.js';
import * as conversationVersion from './migrations/0005_conversation_version.js';
import * as agentSecrets from './migrations/0006_agent_secrets.js';
import * as runRecords from './migrations/0007_run_records.js';
import * as webhooks from './migrations/0008_webhooks.js';
import * as lz4Compression from './migrations/0009_lz4_compression.js';
import * as oneConversationIndex from './migrations/0010_one_conversation_index_on_executions.js';
import * as draftSecrets from './migrations/0011_draft_secrets.js';
import * as callerLimits from './migrations/0012_caller_limits.js';
import * as runListIndexes from './migrations/0013_run_list_indexes.js';
import * as schedules from './migrations/0014_schedules.js';
import * as idempotencyKeys from './migrations/0015_idempotency_keys.js';
import * as runTimeline from './migrations/0016_run_timeline.js';
import * as webhookDeliveryLog from './migrations/0017_webhook_delivery_log.js';
import * as runListAgentResultIndex from './migrations/0018_run_list_agent_result_index.js';
import * as runParent from './migrations/0019_run_parent.js';

export type Db = Kysely<Database>;

/** Migrations in order; listed here so the build needs no file-system discovery. */
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_sign_in': signIn,
  '0003_usage': usage,
  '0004_drafts': drafts,
  '0005_conversation_version': conversationVersion,
  '0006_agent_secrets': agentSecrets,
  '0007_run_records': runRecords,
  '0008_webhooks': webhooks,
  '0009_lz4_compression': lz4Compression,
  '0010_one_conversation_index_on_executions': oneConversationIndex,
  '0011_draft_secrets': draftSecrets,
  '0012_caller_limits': callerLimits,
  '0013_run_list_indexes': runListIndexes,
  '0014_schedules': schedules,
  '0015_idempotency_keys': idempotencyKeys,
  '0016_run_timeline': runTimeline,
  '0017_webhook_delivery_log': webhookDeliveryLog,
  '0018_run_list_agent_result_index': runListAgentResultIndex,
  '0019_run_parent': runParent,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * The URL with a user name: like libpq, a URL without one connects as the operating-system user
 * (pg itself would rely on $USER, which services often lack).
 */
function withUser(databaseUrl: string): URL {
  const url = new URL(databaseUrl);
  if (!url.username) url.username = userInfo().username;
  return url;
}

/** How a Db talks to PostgreSQL, beyond its URL and pool size (DESIGN §17). */
export interface DbOptions {
  /**
   * The longest a statement that writes a conversation's row waits for that row's lock (CONV_WAIT_MS);
   * unset, the server's `lock_timeout` applies. Set per transaction, never per connection: see withLockTimeout.
   */
  lockTimeoutMs?: number;
  /** Run the hottest statements as named prepared statements (executePrepared): DATABASE_PREPARED_STATEMENTS, `auto` by default. */
  preparedStatements?: boolean | 'auto';
}

/**
 * A Kysely instance over a pg pool. It keeps no state in its connections (no startup `options`, no
 * session `SET`, no session advisory lock, no `LISTEN`), so it runs through PgBouncer in transaction
 * mode: two statements of one process may reach PostgreSQL on different server connections.
 */
export function createDb(databaseUrl: string, maxConnections = 10, options: DbOptions = {}): Db {
  const pool = new pg.Pool({ connectionString: withUser(databaseUrl).toString(), max: maxConnections, connectionTimeoutMillis: 5000 });
  // A client that loses its connection (server restart) emits 'error', idle or checked out; the query
  // in flight fails with the same error (a 503), and the pool replaces the client. Unheard, it would crash the process.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  settings.set(db, { pool, preparedStatements: options.preparedStatements ?? 'auto', lockTimeout: lockTimeoutValue(options.lockTimeoutMs) });
  return db;
}

/** What createDb knew of each Db it made: its pool, for executePrepared, and its options. */
const settings = new WeakMap<Db, { pool: pg.Pool; preparedStatements: boolean | 'auto'; lockTimeout: string | null }>();

function settingsOf(db: Db) {
  const found = settings.get(db);
  if (!found) throw new Error('executePrepared and migrateToLatest take a Db made by createDb');
  return found;
}

/** `lock_timeout`'s value for a timeout in milliseconds (0 is "none" to PostgreSQL: at least 1 ms). */
function lockTimeoutValue(ms: number | undefined): string | null {
  return ms === undefined ? null : `${Math.max(1, Math.round(ms))}ms`;
}

/**
 * The Db's lock timeout, as the value of a statement parameter for withLockTimeout: null when it has
 * none (or `db` is a transaction, which createDb did not make): the setting is then left as it is.
 */
export function lockTimeoutOf(db: Db): string | null {
  return settings.get(db)?.lockTimeout ?? null;
}

/**
 * A condition that is always true and, evaluated, sets `lock_timeout` to `param` (a statement
 * parameter: lockTimeoutOf's value, or null to leave it as it is) for the rest of the statement's
 * transaction: `set_config(…, true)` is `SET LOCAL` as a function. Put in the WHERE of a statement that
 * locks a conversation's row (an update, a `FOR UPDATE`): it refers to none of the row's columns, so
 * PostgreSQL evaluates it once, before the scan, thus before the first lock is waited for; and the
 * statement stays one round trip, with nothing left on the connection after its transaction.
 */
export function withLockTimeout(param: string): string {
  return `(select set_config('lock_timeout', coalesce(${param}::text, current_setting('lock_timeout')), true)) is not null`;
}

/** withLockTimeout for a statement Kysely builds, `lockTimeout` lockTimeoutOf's value. */
export function lockTimeoutCondition(lockTimeout: string | null) {
  return sql<boolean>`(select set_config('lock_timeout', coalesce(${lockTimeout}::text, current_setting('lock_timeout')), true)) is not null`;
}

/**
 * Runs `text` as a named prepared statement, so each connection has PostgreSQL parse and plan it once,
 * not at every call: unnamed, the run commits cost PostgreSQL several times the CPU of the rest of a
 * call (bench/README.md). Through PgBouncer in transaction mode before 1.21, a name prepared on one
 * server connection is unknown on the next (26000) or already there on another (42P05): with
 * `preparedStatements: 'auto'` (the default) the first such error makes this Db run its statements
 * unnamed from then on, and the statement that met it runs again unnamed (it ran nowhere: PostgreSQL
 * refused its parse or bind). `false` never names one; `true` never stops. The name carries a hash of
 * the text, so processes of two releases that share server connections never run each other's text.
 * Only for the hottest statements, whose text never changes (run-commit.repository.ts); they skip
 * Kysely's building and compiling either way.
 */
export async function executePrepared(db: Db, name: string, text: string, values: readonly unknown[]): Promise<void> {
  const found = settingsOf(db);
  const mode = found.preparedStatements;
  if (mode === false) {
    await found.pool.query({ text, values: [...values] });
    return;
  }
  try {
    await found.pool.query({ name: preparedName(name, text), text, values: [...values] });
  } catch (err) {
    // Statements sent named before the first loss was seen meet it too: each runs again unnamed.
    if (mode !== 'auto' || !isLostPreparedStatement(err)) throw err;
    found.preparedStatements = false;
    await found.pool.query({ text, values: [...values] });
  }
}

/** Whether executePrepared still names its statements (a Db in `auto` stops at a pooler that cannot keep them). */
export function namesPreparedStatements(db: Db): boolean {
  return settingsOf(db).preparedStatements !== false;
}

const preparedNames = new Map<string, string>();

function preparedName(name: string, text: string): string {
  let named = preparedNames.get(text);
  if (!named) preparedNames.set(text, (named = `${name}-${createHash('sha256').update(text).digest('hex').slice(0, 12)}`));
  return named;
}

/** PostgreSQL's "prepared statement … does not exist" (26000) or "… already exists" (42P05). */
function isLostPreparedStatement(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '26000' || code === '42P05';
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = withUser(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name) throw new Error('DATABASE_URL names no database');
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount) return;
    await client.query(`create database ${pg.escapeIdentifier(name)}`);
  } catch (err) {
    // Two processes starting together may race to create it: the loser gets duplicate_database, or
    // the unique violation of pg_database's name index when both were creating it at once.
    const { code, constraint } = err as { code?: string; constraint?: string };
    if (code !== '42P04' && !(code === '23505' && constraint === 'pg_database_datname_index')) throw err;
  } finally {
    await client.end();
  }
}

/**
 * Applies pending migrations; returns the names applied. Processes starting together migrate one at a
 * time under Kysely's migration lock, taken here in the migration's own transaction
 * (`pg_advisory_xact_lock`, on the key of Kysely's session lock, so processes of an earlier version
 * are still kept out): a session lock taken and released in statements of their own could, through
 * PgBouncer in transaction mode, be released on another server connection than the one holding it,
 * and stay held there.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  // On db's pool, which db.destroy() ends: this instance is not destroyed.
  const migrating = new Kysely<Database>({ dialect: new TransactionLockedMigrations({ pool: settingsOf(db).pool }) });
  const migrator = new Migrator({ db: migrating, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Kysely's migration lock key (kysely/dist/esm/dialect/postgres/postgres-adapter.js). */
const migrationLockKey = '3853314791062309107';

/** PostgreSQL for the Migrator, which runs the migrations in one transaction: its lock is taken as that transaction begins. */
class TransactionLockedMigrations extends PostgresDialect {
  override createAdapter() {
    return new (class extends PostgresAdapter {
      // Taken in beginTransaction below, released by the transaction's end.
      override async acquireMigrationLock(): Promise<void> {}
      override async releaseMigrationLock(): Promise<void> {}
    })();
  }

  override createDriver() {
    const driver = super.createDriver();
    const begin = driver.beginTransaction.bind(driver);
    driver.beginTransaction = async (connection, transaction) => {
      await begin(connection, transaction);
      await connection.executeQuery(CompiledQuery.raw(`select pg_advisory_xact_lock(${migrationLockKey})`));
    };
    return driver;
  }
}
