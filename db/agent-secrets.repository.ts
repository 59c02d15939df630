import { sql } from 'kysely';
import type { Db } from './database.js';

/** Sets one secret of an agent name, replacing its value if it has one. */
export async function upsertAgentSecret(db: Db, agentName: string, key: string, sealed: string): Promise<void> {
  await db
    .insertInto('agent_secrets')
    .values({ agent_name: agentName, key, sealed })
    .onConflict((oc) => oc.columns(['agent_name', 'key']).doUpdateSet({ sealed, updated_at: sql`now()` }))
    .execute();
}

/** Removes one secret; answers whether there was one. */
export async function deleteAgentSecret(db: Db, agentName: string, key: string): Promise<boolean> {
  const result = await db.deleteFrom('agent_secrets').where('agent_name', '=', agentName).where('key', '=', key).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The names of an agent name's secrets, sorted. */
export async function listAgentSecretKeys(db: Db, agentName: string): Promise<string[]> {
  const rows = await db.selectFrom('agent_secrets').select('key').where('agent_name', '=', agentName).orderBy('key').execute();
  return rows.map((row) => row.key);
}

/** An agent name's secrets as stored (sealed). */
export function findAgentSecrets(db: Db, agentName: string): Promise<{ key: string; sealed: string }[]> {
  return db.selectFrom('agent_secrets').select(['key', 'sealed']).where('agent_name', '=', agentName).execute();
}
