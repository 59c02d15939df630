import type { Principal } from '../shared/api.js';
import type { Config } from '../shared/config.js';
import { AppError, invalidRequest } from '../shared/errors.js';
import type { Db } from '../db/database.js';
import { findCallerLimits, upsertCallerLimits, type CallerLimitsChange } from '../db/caller-limits.repository.js';
import type { CallerLimitsRow } from '../db/schema.js';
import { findServiceAccountByName } from '../db/service-accounts.repository.js';
import { findUserByEmail } from '../db/users.repository.js';

/**
 * Limits per caller (DESIGN §16): defaults from config, overridden per account by an admin, for the
 * admin endpoints and the command line alike. Enforced by the web process (server/exec/run-admission.ts)
 * against the counts in Redis (runs/run-slots.ts).
 */
export interface CallerLimits {
  /** Runs started per minute; 0 = no limit. */
  runsPerMinute: number;
  /** Runs queued or running at once; 0 = no limit. */
  runsInFlight: number;
  /** Share of the workers when others wait too (the fair scheduler's, stored here). */
  weight: number;
}

export type LimitName = keyof CallerLimits;
export const limitNames: readonly LimitName[] = ['runsPerMinute', 'runsInFlight', 'weight'];

/** The largest value any limit takes (a Postgres integer, and more than any installation needs). */
export const maxLimit = 1_000_000_000;

/** An account as an admin names it: a service account by name, or a user by email. */
export type AccountName = { name: string } | { email: string };

/** An account found by its name: the principal the limits belong to, and how to show it. */
export interface NamedAccount {
  kind: Principal['kind'];
  id: string;
  /** The service account's name or the user's email. */
  label: string;
}

/** The limits that hold for an account, and which of them are the defaults from config. */
export interface EffectiveLimits {
  limits: CallerLimits;
  defaults: LimitName[];
}

/** An account and its limits as the admin endpoints answer them and `limits:get --json` prints them. */
export function limitsView(account: NamedAccount, { limits, defaults }: EffectiveLimits) {
  return { account: { kind: account.kind, id: account.id, ...accountLabel(account.kind, account.label) }, limits, defaults };
}

/** The label of an account as its field: a service account's `name`, a user's `email`; none when unknown. */
export function accountLabel(kind: Principal['kind'], label: string | undefined): { name?: string; email?: string } {
  if (label === undefined) return {};
  return kind === 'serviceAccount' ? { name: label } : { email: label };
}

/** The account named, or 404 notFound. */
export async function findNamedAccount(db: Db, named: AccountName): Promise<NamedAccount> {
  if ('name' in named) {
    const account = await findServiceAccountByName(db, named.name);
    if (!account) throw new AppError('notFound', `No service account named ${named.name}.`);
    return { kind: 'serviceAccount', id: account.id, label: account.name };
  }
  const user = await findUserByEmail(db, named.email);
  if (!user) throw new AppError('notFound', `No user with the email ${named.email}.`);
  return { kind: 'user', id: user.id, label: user.email };
}

/** Merges the account's row (if any) over the defaults from config. */
export function effectiveLimits(config: Pick<Config, 'runsPerMinute' | 'runsInFlight'>, row: CallerLimitsRow | undefined): EffectiveLimits {
  const set = { runsPerMinute: row?.runs_per_minute ?? null, runsInFlight: row?.runs_in_flight ?? null, weight: row?.weight ?? null };
  const fallback: CallerLimits = { runsPerMinute: config.runsPerMinute, runsInFlight: config.runsInFlight, weight: 1 };
  const limits = { ...fallback };
  const defaults: LimitName[] = [];
  for (const name of limitNames) {
    const value = set[name];
    if (value === null) defaults.push(name);
    else limits[name] = value;
  }
  return { limits, defaults };
}

export async function readCallerLimits(db: Db, config: Pick<Config, 'runsPerMinute' | 'runsInFlight'>, account: Pick<Principal, 'kind' | 'id'>): Promise<EffectiveLimits> {
  return effectiveLimits(config, await findCallerLimits(db, account));
}

/** A change an admin asks for: a value per limit, or null for "back to the default". */
export type LimitsChange = Partial<Record<LimitName, number | null>>;

/**
 * Checks every given limit (whole numbers; 0 = none for the two counts, weight at least 1) and writes
 * them; nothing is written when any is wrong (400 naming each field).
 */
export async function setCallerLimits(db: Db, config: Pick<Config, 'runsPerMinute' | 'runsInFlight'>, account: NamedAccount, change: LimitsChange): Promise<EffectiveLimits> {
  checkLimitsChange(change);
  const columns: CallerLimitsChange = {
    ...(change.runsPerMinute !== undefined ? { runs_per_minute: change.runsPerMinute } : {}),
    ...(change.runsInFlight !== undefined ? { runs_in_flight: change.runsInFlight } : {}),
    ...(change.weight !== undefined ? { weight: change.weight } : {}),
  };
  return effectiveLimits(config, await upsertCallerLimits(db, account, columns));
}

/** Throws 400 invalidRequest naming each limit that is not a whole number in its range. */
export function checkLimitsChange(change: LimitsChange): void {
  const fields: Record<string, string> = {};
  for (const name of limitNames) {
    const value = change[name];
    if (value === undefined || value === null) continue;
    const min = name === 'weight' ? 1 : 0;
    if (!Number.isInteger(value) || value < min || value > maxLimit) fields[name] = limitRule(name);
  }
  if (Object.keys(fields).length) throw invalidRequest(fields);
}

/** What a limit must be, as the error for a bad value says it. */
export function limitRule(name: LimitName): string {
  return name === 'weight' ? `must be a whole number from 1 to ${maxLimit}` : `must be a whole number from 0 (no limit) to ${maxLimit}`;
}
