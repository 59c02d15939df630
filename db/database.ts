import { Kysely, Migrator, PostgresDialect, type Migration, type MigrationProvider } from 'kysely';
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

/**
 * A Kysely instance over a pg pool. `lockTimeoutMs` is set on every connection at start-up (a
 * conversation's row lock is never waited for longer), which costs nothing per query.
 */
export function createDb(databaseUrl: string, maxConnections = 10, { lockTimeoutMs }: { lockTimeoutMs?: number } = {}): Db {
  const pool = new pg.Pool({
    connectionString: withUser(databaseUrl).toString(),
    max: maxConnections,
    connectionTimeoutMillis: 5000,
    ...(lockTimeoutMs === undefined ? {} : { options: `-c lock_timeout=${Math.max(1, Math.round(lockTimeoutMs))}` }),
  });
  // A client that loses its connection (server restart) emits 'error', idle or checked out; the query
  // in flight fails with the same error (a 503), and the pool replaces the client. Unheard, it would crash the process.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

/** The pool under each Db createDb made, for executePrepared. */
const pools = new WeakMap<Db, pg.Pool>();

/**
 * Runs `text` as a named prepared statement: each connection has PostgreSQL parse and plan it once,
 * not at every call, and the statement skips Kysely's building and compiling. Only for the hottest
 * statements, whose text never changes (a new conversation's first run, run-commit.repository.ts):
 * at one call at a time it took a first run's commit from 0.87 to 0.32 ms p50 here. Through PgBouncer
 * in transaction mode it needs PgBouncer 1.21 or later with `max_prepared_statements` set.
 */
export async function executePrepared(db: Db, name: string, text: string, values: readonly unknown[]): Promise<void> {
  const pool = pools.get(db);
  if (!pool) throw new Error('executePrepared takes a Db made by createDb');
  await pool.query({ name, text, values: [...values] });
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
    // Two processes starting together may race to create it.
    if ((err as { code?: string }).code !== '42P04') throw err;
  } finally {
    await client.end();
  }
}

/** Applies pending migrations; returns the names applied. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
