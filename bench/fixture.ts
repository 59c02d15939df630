import pg from 'pg';
import { compileAgent } from '../shared/compile-agent.js';
import { generateServiceAccountKey } from '../shared/service-account-key.js';
import { createDb, ensureDatabase, migrateToLatest, type Db } from '../db/database.js';
import { insertAgentVersion } from '../db/agents.repository.js';
import { insertServiceAccount } from '../db/service-accounts.repository.js';

/** The bench's own database, migrated, with its agents published and a service-account key. */

export interface Fixture {
  databaseUrl: string;
  bearerKey: string;
}

/** Creates and migrates the database, publishes `agents` (name → source), makes a key. */
export async function createFixture(databaseUrl: string, agents: Record<string, string>): Promise<Fixture> {
  await ensureDatabase(databaseUrl);
  const db = createDb(databaseUrl, 2);
  try {
    await migrateToLatest(db);
    for (const [name, source] of Object.entries(agents)) await publishAgent(db, name, source);
    return { databaseUrl, bearerKey: (await addServiceAccount(db, 'bench')).key };
  } finally {
    await db.destroy();
  }
}

/** A service account of role `user` named `name`, with its bearer key. */
export async function addServiceAccount(db: Db, name: string): Promise<{ id: string; key: string }> {
  const key = generateServiceAccountKey();
  const row = await insertServiceAccount(db, { name, role: 'user', plan: 'free', keyId: key.keyId, keyHash: key.secretHash });
  return { id: row!.id, key: key.key };
}

async function publishAgent(db: Db, name: string, source: string): Promise<void> {
  const compiled = await compileAgent(source);
  if (!compiled.ok) throw new Error(`bench agent ${name} does not compile: ${JSON.stringify(compiled.errors)}`);
  await insertAgentVersion(db, name, { source, code: compiled.code, sourceMap: compiled.sourceMap });
}

/** Drops the database named in the URL, closing whatever still connects to it. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  } finally {
    await admin.end();
  }
}
