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
