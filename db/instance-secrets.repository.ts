import type { Db } from './database.js';

/**
 * Returns the stored secret of that name, storing `candidate` first when there is none, so every
 * process of one development set-up agrees on the same generated value.
 */
export async function getOrCreateInstanceSecret(db: Db, name: string, candidate: string): Promise<string> {
  await db.insertInto('instance_secrets').values({ name, value: candidate }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('instance_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}
