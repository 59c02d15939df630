import { sql } from 'kysely';
import type { Principal } from '../shared/api.js';
import type { Db } from './database.js';
import type { NewIdempotencyKey } from './schema.js';

/**
 * Idempotency-Key records (DESIGN §4). A short run's record is written by its commit
 * (run-commit.repository.ts, FirstRun.claim); these are the rest: the claim of a run going to the
 * queue, the look-up of a retry, the release of a call that could not be queued, the sweep.
 */

export type IdempotencyRecord = Pick<NewIdempotencyKey, 'run_id' | 'convid' | 'agent_name' | 'fingerprint'>;

/** A record older than this is no longer the key's: a new call with the key starts a new run. */
export const idempotencyKeepMs = 24 * 60 * 60 * 1000;

/**
 * Claims the key for `record`'s run (an expired record of it is replaced); false when a live record holds
 * it. Waits for a concurrent claim or commit of the same key to end, as any unique insert does. Its
 * commit does not wait for the WAL's flush (synchronous_commit off for its transaction): the run it
 * claims for is queued after it, and that run's commit, flushed, flushes the claim first (the WAL is
 * flushed in order); only a crash of PostgreSQL in between can lose a claim, as a Redis claim could be.
 */
export async function claimIdempotencyKey(db: Db, record: NewIdempotencyKey): Promise<boolean> {
  const createdAt = record.created_at ?? new Date();
  const expiredBefore = new Date(createdAt.getTime() - idempotencyKeepMs);
  const claimed = await sql<{ run_id: string }>`
    insert into idempotency_keys (principal_kind, principal_id, key, run_id, convid, agent_name, fingerprint, created_at)
    select ${record.principal_kind}, ${record.principal_id}::uuid, ${record.key}, ${record.run_id}::uuid, ${record.convid}::uuid, ${record.agent_name}, ${record.fingerprint}, ${createdAt}::timestamptz
    where (select set_config('synchronous_commit', 'off', true)) is not null
    on conflict (principal_kind, principal_id, key) do update
      set run_id = excluded.run_id, convid = excluded.convid, agent_name = excluded.agent_name, fingerprint = excluded.fingerprint, created_at = excluded.created_at
      where idempotency_keys.created_at < ${expiredBefore}
    returning run_id`.execute(db);
  return claimed.rows.length > 0;
}

/** The live record of the caller's key, if any. */
export async function findIdempotencyKey(db: Db, caller: Pick<Principal, 'kind' | 'id'>, key: string, now: Date): Promise<IdempotencyRecord | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select(['run_id', 'convid', 'agent_name', 'fingerprint'])
    .where('principal_kind', '=', caller.kind)
    .where('principal_id', '=', caller.id)
    .where('key', '=', key)
    .where('created_at', '>=', new Date(now.getTime() - idempotencyKeepMs))
    .executeTakeFirst();
}

/** Frees the key a call claimed for `runId` but could not queue, so its retry can run. */
export async function releaseIdempotencyKey(db: Db, caller: Pick<Principal, 'kind' | 'id'>, key: string, runId: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('principal_kind', '=', caller.kind).where('principal_id', '=', caller.id).where('key', '=', key).where('run_id', '=', runId).execute();
}

/** Deletes up to `batch` records older than 24 h at `now`; answers how many. */
export async function deleteExpiredIdempotencyKeys(db: Db, now: Date, batch: number): Promise<number> {
  const cutoff = new Date(now.getTime() - idempotencyKeepMs);
  const deleted = await sql`delete from idempotency_keys where ctid in (select ctid from idempotency_keys where created_at < ${cutoff} limit ${batch})`.execute(db);
  return Number(deleted.numAffectedRows ?? 0);
}
