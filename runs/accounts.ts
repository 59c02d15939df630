import type { Plan, Role } from '../shared/api.js';
import { generateServiceAccountKey } from '../shared/service-account-key.js';
import { hashPassword } from '../shared/password-hash.js';
import type { Db } from '../db/database.js';
import type { ServiceAccount, User } from '../db/schema.js';
import { deleteServiceAccount, insertServiceAccount, replaceServiceAccountKey, updateServiceAccountRole } from '../db/service-accounts.repository.js';
import { insertUser, updateUserRole } from '../db/users.repository.js';

/**
 * The accounts an admin manages (DESIGN §3, §18), for the command line and the console alike. A key
 * is made here and handed back once; only its hash is stored. Every change to a service account that
 * could leave a web process trusting a cached key (rotation, deletion, a new role) is announced after
 * its commit, so each drops what it cached (server/auth/bearer-keys.ts). Each function answers
 * undefined when the name is taken (create) or unknown (the others): the caller says so its own way.
 */
export interface AccountChanges {
  db: Db;
  /** Tells every web process the account changed; answers a warning when it could not. */
  announce(accountId: string): Promise<string | undefined>;
}

/** A change made and announced; `warning` when the announcement failed (the change stands). */
export interface Announced<T> {
  value: T;
  warning?: string;
}

export async function createServiceAccount(db: Db, account: { name: string; role: Role; plan: Plan }): Promise<{ account: ServiceAccount; key: string } | undefined> {
  const key = generateServiceAccountKey();
  const created = await insertServiceAccount(db, { ...account, keyId: key.keyId, keyHash: key.secretHash });
  return created && { account: created, key: key.key };
}

/** Gives the named account a new key (answered once); the old one stops working. */
export async function rotateServiceAccountKey(changes: AccountChanges, name: string): Promise<Announced<{ account: ServiceAccount; key: string }> | undefined> {
  const key = generateServiceAccountKey();
  const account = await replaceServiceAccountKey(changes.db, name, key.keyId, key.secretHash);
  return account && announced(changes, account.id, { account, key: key.key });
}

/** Deletes the named account (its key stops working); answers its id. */
export async function removeServiceAccount(changes: AccountChanges, name: string): Promise<Announced<string> | undefined> {
  const id = await deleteServiceAccount(changes.db, name);
  return id === undefined ? undefined : announced(changes, id, id);
}

export async function changeServiceAccountRole(changes: AccountChanges, name: string, role: Role): Promise<Announced<ServiceAccount> | undefined> {
  const account = await updateServiceAccountRole(changes.db, name, role);
  return account && announced(changes, account.id, account);
}

/** A user's sessions read the role at each call, so nothing is announced. */
export function changeUserRole(db: Db, email: string, role: Role): Promise<User | undefined> {
  return updateUserRole(db, email, role);
}

/** What the command line and the console check an email address against before creating a user. */
export const emailPattern = /^[^\s@]+@[^\s@]+$/;

/**
 * Creates a user (the email lower-cased; the call name defaults to the part before the @). Without a
 * password the user sets one by email code. The password must already meet the password rules.
 */
export async function createUser(db: Db, user: { email: string; role: Role; plan: Plan; callName?: string; password?: string }): Promise<User | undefined> {
  const email = user.email.toLowerCase();
  return insertUser(db, {
    email,
    callName: user.callName ?? email.split('@')[0]!,
    role: user.role,
    plan: user.plan,
    passwordHash: user.password === undefined ? null : await hashPassword(user.password),
  });
}

async function announced<T>(changes: AccountChanges, accountId: string, value: T): Promise<Announced<T>> {
  const warning = await changes.announce(accountId);
  return warning ? { value, warning } : { value };
}
