import type { Plan, Role } from '../shared/api.js';
import type { Db } from './database.js';
import type { User } from './schema.js';

export interface NewUser {
  email: string;
  callName: string;
  role: Role;
  plan: Plan;
  passwordHash: string | null;
}

/** Inserts a user (email stored lower-case); returns undefined when the email is taken. */
export async function insertUser(db: Db, user: NewUser): Promise<User | undefined> {
  return db
    .insertInto('users')
    .values({
      email: user.email.toLowerCase(),
      call_name: user.callName,
      role: user.role,
      plan: user.plan,
      password_hash: user.passwordHash,
    })
    .onConflict((oc) => oc.column('email').doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findUserById(db: Db, id: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUserByEmail(db: Db, email: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
}

/** Counts a failed login; returns the number of failures since the last success. */
export async function recordFailedLogin(db: Db, userId: string): Promise<number> {
  const row = await db
    .updateTable('users')
    .set((eb) => ({ failed_logins: eb('failed_logins', '+', 1) }))
    .where('id', '=', userId)
    .returning('failed_logins')
    .executeTakeFirst();
  return row?.failed_logins ?? 0;
}

/** A successful login starts the failure count over. */
export async function clearFailedLogins(db: Db, userId: string): Promise<void> {
  await db.updateTable('users').set({ failed_logins: 0 }).where('id', '=', userId).where('failed_logins', '>', 0).execute();
}

/** Sets a new password hash (a reset also lifts a lock after too many failed logins). */
export async function setPasswordHash(db: Db, userId: string, passwordHash: string, now: Date): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash, failed_logins: 0, updated_at: now }).where('id', '=', userId).execute();
}

/** Every user, by email: the console's list (never a password hash). */
export async function listUsers(db: Db): Promise<Pick<User, 'id' | 'email' | 'call_name' | 'role' | 'plan' | 'created_at'>[]> {
  return db.selectFrom('users').select(['id', 'email', 'call_name', 'role', 'plan', 'created_at']).orderBy('email').execute();
}

/** Gives the user another role (their sessions read it at their next call); returns undefined when there is none. */
export async function updateUserRole(db: Db, email: string, role: Role): Promise<User | undefined> {
  return db.updateTable('users').set({ role, updated_at: new Date() }).where('email', '=', email.toLowerCase()).returningAll().executeTakeFirst();
}
