import type { ServiceAccount } from '../../db/schema.js';

/**
 * The service accounts a web process has read, by the public id of their key, so a bearer call needs
 * no database read (the "short runs" performance issue). Only what the database returned is kept:
 * unknown key ids are never cached. The secret is still checked on every call, against the cached
 * hash. Staleness is bounded by the change messages (server/auth/bearer-keys.ts) and, should one be
 * missed, by the maximum age.
 */

/** Keys cached per web process at most; the least recently used goes first. */
export const bearerKeyCacheMaxEntries = 10_000;

/** A cached account is read again after this long, in case a change message was missed. */
export const bearerKeyCacheMaxAgeMs = 60_000;

export interface BearerKeyCache {
  /** The account cached for this key id; undefined when there is none or it is past its maximum age. */
  get(keyId: string): ServiceAccount | undefined;
  /**
   * Caches an account read for `keyId`, unless something was dropped since `generation` was taken: the
   * read may have started before the change that dropped it, and would put the old row back.
   */
  set(keyId: string, account: ServiceAccount, generation: number): void;
  /** Drops every key cached for this account. */
  dropAccount(accountId: string): void;
  clear(): void;
  /** Changes on every drop and clear; take it before reading the database, pass it to `set`. */
  readonly generation: number;
  readonly size: number;
}

interface Entry {
  account: ServiceAccount;
  cachedAt: number;
}

export function createBearerKeyCache(
  options: { maxEntries?: number; maxAgeMs?: number; now?: () => number } = {},
): BearerKeyCache {
  const maxEntries = options.maxEntries ?? bearerKeyCacheMaxEntries;
  const maxAgeMs = options.maxAgeMs ?? bearerKeyCacheMaxAgeMs;
  const now = options.now ?? Date.now;
  // A Map iterates in insertion order: re-inserting on each hit keeps the least recently used first.
  const entries = new Map<string, Entry>();
  // An account has one key, but its old key id can still be cached next to the new one.
  const keysOfAccount = new Map<string, Set<string>>();
  let generation = 0;

  const remove = (keyId: string) => {
    const entry = entries.get(keyId);
    if (!entry) return;
    entries.delete(keyId);
    const keys = keysOfAccount.get(entry.account.id);
    keys?.delete(keyId);
    if (keys?.size === 0) keysOfAccount.delete(entry.account.id);
  };

  return {
    get(keyId) {
      const entry = entries.get(keyId);
      if (!entry) return undefined;
      if (now() - entry.cachedAt >= maxAgeMs) {
        remove(keyId);
        return undefined;
      }
      entries.delete(keyId);
      entries.set(keyId, entry);
      return entry.account;
    },
    set(keyId, account, readGeneration) {
      if (readGeneration !== generation) return;
      remove(keyId);
      entries.set(keyId, { account, cachedAt: now() });
      let keys = keysOfAccount.get(account.id);
      if (!keys) keysOfAccount.set(account.id, (keys = new Set()));
      keys.add(keyId);
      while (entries.size > maxEntries) remove(entries.keys().next().value!);
    },
    dropAccount(accountId) {
      generation++;
      for (const keyId of [...(keysOfAccount.get(accountId) ?? [])]) remove(keyId);
    },
    clear() {
      generation++;
      entries.clear();
      keysOfAccount.clear();
    },
    get generation() {
      return generation;
    },
    get size() {
      return entries.size;
    },
  };
}
