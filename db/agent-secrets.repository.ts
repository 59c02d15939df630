import { sql } from 'kysely';
import type { SecretSet } from '../shared/agent-secrets.js';
import type { Db } from './database.js';

/*
 * Every function names the set it reads or writes (shared/agent-secrets.ts SecretSet): the two sets of
 * an agent name never mix, so a draft's run cannot read a production secret by any path through here.
 */

/** Sets one secret of an agent name's set, replacing its value if it has one. */
export async function upsertAgentSecret(db: Db, agentName: string, set: SecretSet, key: string, sealed: string): Promise<void> {
  await db
    .insertInto('agent_secrets')
    .values({ agent_name: agentName, for_drafts: set === 'drafts', key, sealed })
    .onConflict((oc) => oc.columns(['agent_name', 'for_drafts', 'key']).doUpdateSet({ sealed, updated_at: sql`now()` }))
    .execute();
}

/** Removes one secret of an agent name's set; answers whether there was one. */
export async function deleteAgentSecret(db: Db, agentName: string, set: SecretSet, key: string): Promise<boolean> {
  const result = await db
    .deleteFrom('agent_secrets')
    .where('agent_name', '=', agentName)
    .where('for_drafts', '=', set === 'drafts')
    .where('key', '=', key)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The names of the secrets in an agent name's set, sorted. */
export async function listAgentSecretKeys(db: Db, agentName: string, set: SecretSet): Promise<string[]> {
  const rows = await db
    .selectFrom('agent_secrets')
    .select('key')
    .where('agent_name', '=', agentName)
    .where('for_drafts', '=', set === 'drafts')
    .orderBy('key')
    .execute();
  return rows.map((row) => row.key);
}

/** The secrets in an agent name's set as stored (sealed). */
export function findAgentSecrets(db: Db, agentName: string, set: SecretSet): Promise<{ key: string; sealed: string }[]> {
  return db.selectFrom('agent_secrets').select(['key', 'sealed']).where('agent_name', '=', agentName).where('for_drafts', '=', set === 'drafts').execute();
}

/** The names (never the values) of every agent name's secrets, of both sets, by agent name, set and key. */
export function listAllSecretNames(db: Db): Promise<{ agentName: string; forDrafts: boolean; key: string; updatedAt: Date }[]> {
  return db
    .selectFrom('agent_secrets')
    .select(['agent_name as agentName', 'for_drafts as forDrafts', 'key', 'updated_at as updatedAt'])
    .orderBy('agent_name')
    .orderBy('for_drafts')
    .orderBy('key')
    .execute();
}
