import type { Principal } from '../shared/api.js';
import { callerName } from '../shared/channels.js';
import type { Db } from './database.js';
import type { CallerLimitsRow } from './schema.js';

type Account = Pick<Principal, 'kind' | 'id'>;

/** The limit columns an admin sets; null puts one back to the default from config. */
export interface CallerLimitsChange {
  runs_per_minute?: number | null;
  runs_in_flight?: number | null;
  weight?: number | null;
}

/** The limits an admin set for the account, or undefined when none were ever set. */
export async function findCallerLimits(db: Db, account: Account): Promise<CallerLimitsRow | undefined> {
  return db.selectFrom('caller_limits').selectAll().where('principal_kind', '=', account.kind).where('principal_id', '=', account.id).executeTakeFirst();
}

/** Writes the given columns of the account's row (made if missing), leaving the others as they were; returns the row. */
export async function upsertCallerLimits(db: Db, account: Account, change: CallerLimitsChange): Promise<CallerLimitsRow> {
  return db
    .insertInto('caller_limits')
    .values({ principal_kind: account.kind, principal_id: account.id, runs_per_minute: null, runs_in_flight: null, weight: null, ...change })
    .onConflict((oc) => oc.columns(['principal_kind', 'principal_id']).doUpdateSet({ ...change, updated_at: new Date() }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The name of each service account and the email of each user among `accounts`, by callerName. */
export async function findAccountLabels(db: Db, accounts: readonly Account[]): Promise<Map<string, string>> {
  const ids = (kind: Account['kind']) => accounts.filter((a) => a.kind === kind).map((a) => a.id);
  const [services, users] = await Promise.all([
    ids('serviceAccount').length ? db.selectFrom('service_accounts').select(['id', 'name']).where('id', 'in', ids('serviceAccount')).execute() : [],
    ids('user').length ? db.selectFrom('users').select(['id', 'email']).where('id', 'in', ids('user')).execute() : [],
  ]);
  return new Map([
    ...services.map((s) => [callerName({ kind: 'serviceAccount', id: s.id }), s.name] as const),
    ...users.map((u) => [callerName({ kind: 'user', id: u.id }), u.email] as const),
  ]);
}
