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
 * it. Waits for a concurrent claim or commit of the same key to end, as any unique insert does.
 */
export async function claimIdempotencyKey(db: Db, record: NewIdempotencyKey): Promise<boolean> {
  const expiredBefore = new Date(record.created_at!.getTime() - idempotencyKeepMs);
  const { principal_kind: _kind, principal_id: _id, key: _key, ...replacing } = record;
  const claimed = await db
    .insertInto('idempotency_keys')
    .values(record)
    .onConflict((oc) => oc.columns(['principal_kind', 'principal_id', 'key']).doUpdateSet(replacing).where('idempotency_keys.created_at', '<', expiredBefore))
    .returning('run_id')
    .executeTakeFirst();
  return claimed !== undefined;
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
