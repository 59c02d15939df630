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

/** The account whose key has this public id (the row is the truth: no cache, so rotation is immediate). */
export async function findServiceAccountByKeyId(db: Db, keyId: string): Promise<ServiceAccount | undefined> {
  return db.selectFrom('service_accounts').selectAll().where('key_id', '=', keyId).executeTakeFirst();
}

export async function findServiceAccountByName(db: Db, name: string): Promise<ServiceAccount | undefined> {
  return db.selectFrom('service_accounts').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Replaces the key of the named account; returns undefined when there is none. */
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

/** Deletes the named account; returns whether there was one. */
export async function deleteServiceAccount(db: Db, name: string): Promise<boolean> {
  const result = await db.deleteFrom('service_accounts').where('name', '=', name).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function findServiceAccountById(db: Db, id: string): Promise<ServiceAccount | undefined> {
  return db.selectFrom('service_accounts').selectAll().where('id', '=', id).executeTakeFirst();
}
