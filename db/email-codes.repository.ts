import { sql } from 'kysely';
import type { Db } from './database.js';

/** Wrong tries allowed on one code, and on all of an account's codes in the last hour. */
export const codeTriesAllowed = { perCode: 5, perAccountPerHour: 10 } as const;

export interface NewEmailCode {
  userId: string;
  email: string;
  codeHash: string;
  now: Date;
  expiresAt: Date;
}

/** Stores a user's new code; it replaces the older one (newest wins), whose wrong tries go with it. */
export async function replaceEmailCode(db: Db, code: NewEmailCode): Promise<void> {
  const values = { email: code.email, code_hash: code.codeHash, created_at: code.now, expires_at: code.expiresAt, wrong_tries: 0, used_at: null };
  await db
    .insertInto('email_codes')
    .values({ user_id: code.userId, ...values })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(values))
    .execute();
}

/**
 * Uses the code when it is the user's live one for this address: unused, unexpired, under its wrong
 * tries, and the account under its hourly wrong tries. One statement, so of any number of concurrent
 * submissions exactly one succeeds. It costs the same for an id no user has.
 */
export async function useEmailCode(db: Db, attempt: { userId: string; email: string; codeHash: string; now: Date }): Promise<boolean> {
  const hourAgo = new Date(attempt.now.getTime() - 3_600_000);
  const row = await db
    .updateTable('email_codes')
    .set({ used_at: attempt.now })
    .where('user_id', '=', attempt.userId)
    .where('email', '=', attempt.email)
    .where('code_hash', '=', attempt.codeHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', attempt.now)
    .where('wrong_tries', '<', codeTriesAllowed.perCode)
    .where(
      (eb) =>
        eb
          // Counts no further than the limit: the cost stays the same however many wrong tries were made.
          .selectFrom((qb) =>
            qb
              .selectFrom('email_code_failures')
              .select('email_code_failures.at')
              .where('email_code_failures.user_id', '=', attempt.userId)
              .where('email_code_failures.at', '>', hourAgo)
              .limit(codeTriesAllowed.perAccountPerHour)
              .as('f'),
          )
          .select(sql<number>`count(*)::int`.as('n')),
      '<',
      codeTriesAllowed.perAccountPerHour,
    )
    .returning('user_id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Counts a wrong code against the user's live code and the account's hour. A submission of the right
 * code that lost a race (the code is already used) is not a wrong try.
 *
 * Committed without waiting for the WAL flush: otherwise a wrong code for an address with a live code
 * (anyone can have one mailed to any address) takes a disk flush longer than one for an unknown
 * address, which writes nothing, and the time of the answer tells that the address has an account.
 * The count is seen by every other session at once; a database crash may forget the last few.
 */
export async function recordWrongCode(db: Db, attempt: { userId: string; codeHash: string; now: Date }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`set local synchronous_commit = off`.execute(trx);
    await trx
      .with('c', (qb) =>
        qb
          .updateTable('email_codes')
          .set((eb) => ({ wrong_tries: eb('wrong_tries', '+', 1) }))
          .where('user_id', '=', attempt.userId)
          .where('used_at', 'is', null)
          .where('code_hash', '<>', attempt.codeHash)
          .returning('user_id'),
      )
      .insertInto('email_code_failures')
      .columns(['user_id', 'at'])
      .expression((eb) => eb.selectFrom('c').select(['c.user_id', sql<Date>`${attempt.now}::timestamptz`.as('at')]))
      .execute();
  });
}

/** Forgets an account's wrong tries older than an hour (they no longer count). */
export async function forgetOldCodeFailures(db: Db, userId: string, now: Date): Promise<void> {
  await db
    .deleteFrom('email_code_failures')
    .where('user_id', '=', userId)
    .where('at', '<=', new Date(now.getTime() - 3_600_000))
    .execute();
}
