import type { Plan, Role } from '../shared/api.js';
import type { SessionCutoffs } from '../shared/session-lifetime.js';
import type { Db } from './database.js';

/** A live session and the user it belongs to. */
export interface SessionUser {
  sessionId: string;
  userId: string;
  role: Role;
  plan: Plan;
}

export async function insertSession(db: Db, session: { tokenHash: string; userId: string; now: Date }): Promise<string> {
  const row = await db
    .insertInto('sessions')
    .values({ token_hash: session.tokenHash, user_id: session.userId, created_at: session.now, last_seen_at: session.now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * The live session with this token hash, its last activity moved to `now` in the same statement;
 * undefined when there is none, or it has been idle too long or lived too long.
 */
export async function useSession(db: Db, tokenHash: string, now: Date, cutoffs: SessionCutoffs): Promise<SessionUser | undefined> {
  return db
    .with('s', (qb) =>
      qb
        .updateTable('sessions')
        .set({ last_seen_at: now })
        .where('token_hash', '=', tokenHash)
        .where('last_seen_at', '>', cutoffs.idleSince)
        .where('created_at', '>', cutoffs.createdSince)
        .returning(['id', 'user_id']),
    )
    .selectFrom('s')
    .innerJoin('users', 'users.id', 's.user_id')
    .select(['s.id as sessionId', 'users.id as userId', 'users.role', 'users.plan'])
    .executeTakeFirst();
}

/** Of `sessionIds`, those still live: one query for every run a worker watches. */
export async function findLiveSessionIds(db: Db, sessionIds: readonly string[], cutoffs: SessionCutoffs): Promise<Set<string>> {
  if (sessionIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('sessions')
    .select('id')
    .where('id', 'in', sessionIds)
    .where('last_seen_at', '>', cutoffs.idleSince)
    .where('created_at', '>', cutoffs.createdSince)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Ends every session of a user (password reset). */
export async function deleteUserSessions(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
}

/** Ends the session with this token hash, if there is one; returns its id. */
export async function deleteSessionByTokenHash(db: Db, tokenHash: string): Promise<string | undefined> {
  const row = await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).returning('id').executeTakeFirst();
  return row?.id;
}

/** Removes every session that has timed out (the retention sweep). */
export async function deleteTimedOutSessions(db: Db, cutoffs: SessionCutoffs): Promise<number> {
  const result = await db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('last_seen_at', '<=', cutoffs.idleSince), eb('created_at', '<=', cutoffs.createdSince)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
