import type { Plan, Role } from '../shared/api.js';
import type { Db } from './database.js';
import type { ServiceAccount } from './schema.js';

export interface NewServiceAccount {
  name: string;
  role: Role;
  plan: Plan;
  keyId: string;
  keyHash: string;
}

/** Inserts an account; returns undefined when the name is taken. */
export async function insertServiceAccount(db: Db, account: NewServiceAccount): Promise<ServiceAccount | undefined> {
  return db
    .insertInto('service_accounts')
    .values({ name: account.name, role: account.role, plan: account.plan, key_id: account.keyId, key_hash: account.keyHash })
    .onConflict((oc) => oc.column('name').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/**
 * The account whose key has this public id. Web processes cache what it returns
 * (server/auth/bearer-keys.ts): whoever changes or deletes an account announces it on
 * `serviceAccountsChannel` after the commit (cli/service-account-changes.ts).
 */
export async function findServiceAccountByKeyId(db: Db, keyId: string): Promise<ServiceAccount | undefined> {
  return db.selectFrom('service_accounts').selectAll().where('key_id', '=', keyId).executeTakeFirst();
}

export async function findServiceAccountByName(db: Db, name: string): Promise<ServiceAccount | undefined> {
  return db.selectFrom('service_accounts').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Replaces the key of the named account; returns undefined when there is none. Announce the change after it. */
export async function replaceServiceAccountKey(
  db: Db,
  name: string,
  keyId: string,
  keyHash: string,
): Promise<ServiceAccount | undefined> {
  return db
    .updateTable('service_accounts')
    .set({ key_id: keyId, key_hash: keyHash, key_rotated_at: new Date() })
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the named account; returns its id, or undefined when there was none. Announce the change after it. */
export async function deleteServiceAccount(db: Db, name: string): Promise<string | undefined> {
  const deleted = await db.deleteFrom('service_accounts').where('name', '=', name).returning('id').executeTakeFirst();
  return deleted?.id;
}

export async function findServiceAccountById(db: Db, id: string): Promise<ServiceAccount | undefined> {
  return db.selectFrom('service_accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every service account, by name: the console's list (never a key or its hash). */
export async function listServiceAccounts(db: Db): Promise<Pick<ServiceAccount, 'id' | 'name' | 'role' | 'plan' | 'created_at' | 'key_rotated_at'>[]> {
  return db.selectFrom('service_accounts').select(['id', 'name', 'role', 'plan', 'created_at', 'key_rotated_at']).orderBy('name').execute();
}

/** Gives the named account another role; returns undefined when there is none. Announce the change after it. */
export async function updateServiceAccountRole(db: Db, name: string, role: Role): Promise<ServiceAccount | undefined> {
  return db.updateTable('service_accounts').set({ role }).where('name', '=', name).returningAll().executeTakeFirst();
}
