import type { Principal } from '../shared/api.js';
import { callerName } from '../shared/channels.js';
import type { Config } from '../shared/config.js';
import type { Db } from '../db/database.js';
import { readCallerLimits, type CallerLimits } from './caller-limits.js';

/**
 * Each caller's limits as this process last read them, so a call costs no PostgreSQL read. An
 * admin's change is seen here at once (setLimits drops the entry) and by the other web processes
 * within `maxAgeMs`: a limit is a guard against floods, a few seconds of an old value is harmless.
 */
export interface CallerLimitsCache {
  get(caller: Pick<Principal, 'kind' | 'id'>): Promise<CallerLimits>;
  drop(caller: Pick<Principal, 'kind' | 'id'>): void;
}

export const callerLimitsMaxAgeMs = 5_000;
/** Past this many callers the cache starts again empty (a bound on memory, not an eviction policy). */
const maxEntries = 10_000;

export function createCallerLimitsCache(db: Db, config: Pick<Config, 'runsPerMinute' | 'runsInFlight'>, maxAgeMs = callerLimitsMaxAgeMs): CallerLimitsCache {
  // The read itself is cached, so the first burst of one caller's calls makes one read.
  const entries = new Map<string, { at: number; limits: Promise<CallerLimits> }>();
  return {
    get(caller) {
      const key = callerName(caller);
      const now = Date.now();
      const entry = entries.get(key);
      if (entry && now - entry.at < maxAgeMs) return entry.limits;
      if (entries.size >= maxEntries) entries.clear();
      const limits = readCallerLimits(db, config, caller).then((effective) => effective.limits);
      entries.set(key, { at: now, limits });
      limits.catch(() => entries.delete(key));
      return limits;
    },
    drop(caller) {
      entries.delete(callerName(caller));
    },
  };
}
