import { serviceAccountsChannel } from '../../shared/channels.js';
import type { Logger } from '../../shared/logger.js';
import type { Db } from '../../db/database.js';
import type { ServiceAccount } from '../../db/schema.js';
import { findServiceAccountByKeyId } from '../../db/service-accounts.repository.js';
import { createBearerKeyCache, type BearerKeyCache } from './bearer-key-cache.js';
import { openRedis, type RedisTarget } from '../../runs/redis-connection.js';

/**
 * How a web process finds the service account of a bearer key: from its cache while it listens for
 * account changes, else from PostgreSQL. A change (rotation, deletion; cli/service-account-changes.ts)
 * is published on `serviceAccountsChannel` after it is committed, and every web process drops that
 * account's keys when the message arrives, so a rotated key is refused everywhere within the time a
 * message takes (DESIGN §3).
 *
 * The cache is only as good as the subscription, so it is used only while the channel is subscribed:
 * when the connection drops, every lookup reads the database and nothing is cached; once subscribed
 * again the cache starts empty, as messages may have been missed meanwhile.
 */
export interface BearerKeys {
  /** The account whose key has this public id; undefined when there is none. Concurrent calls share a read. */
  findAccount(keyId: string): Promise<ServiceAccount | undefined>;
  /** True while the change channel is subscribed: the only time the cache is used. */
  isCaching(): boolean;
  close(): Promise<void>;
}

export interface BearerKeysOptions extends RedisTarget {
  prefix: string;
  db: Db;
  logger: Logger;
  /** Given by tests that look inside; a new one of the default size otherwise. */
  cache?: BearerKeyCache;
}

/** Opens the change subscription; resolves once it is subscribed (the cache in use). */
export async function openBearerKeys(options: BearerKeysOptions): Promise<BearerKeys> {
  const { db, logger } = options;
  const cache = options.cache ?? createBearerKeyCache();
  const channel = serviceAccountsChannel(options.prefix);
  // Subscribed by hand on every connection (below), to know when the subscription is in place.
  const subscriber = openRedis(options, { maxRetriesPerRequest: null, autoResubscribe: false });
  let caching = false;
  let wasLost = false;
  let connection = 0;
  let firstSubscribed!: () => void;
  const subscribed = new Promise<void>((resolve) => (firstSubscribed = resolve));

  subscriber.on('message', (from: string, accountId: string) => {
    if (from === channel) cache.dropAccount(accountId);
  });
  subscriber.on('error', (err) => logger.warn({ err: String(err) }, 'service account changes connection error'));
  subscriber.on('ready', () => {
    const current = ++connection;
    subscriber.subscribe(channel).then(
      () => {
        if (current !== connection || subscriber.status !== 'ready') return;
        cache.clear();
        caching = true;
        firstSubscribed();
        if (wasLost) logger.info('service account changes subscribed again: bearer key cache emptied and in use');
      },
      (err) => logger.warn({ err: String(err) }, 'service account changes not subscribed'),
    );
  });
  subscriber.on('close', () => {
    connection++;
    if (caching) logger.warn('service account changes connection lost: bearer keys are read from PostgreSQL until it is back');
    wasLost ||= caching;
    caching = false;
    cache.clear();
  });
  await subscribed;

  // Reads in flight by key id, so a burst of calls with one uncached key (a client's first thousand
  // after a restart or a rotation) makes one read, not one per call queued on the pool. A call joins
  // only a read begun in the same generation: one begun before a drop may return the dropped row.
  const reads = new Map<string, { generation: number; account: Promise<ServiceAccount | undefined> }>();
  const readAndCache = (keyId: string, generation: number) => {
    const account = findServiceAccountByKeyId(db, keyId).then((found) => {
      // A drop or a lost connection meanwhile changed the generation: the read may predate the change.
      if (found && caching) cache.set(keyId, found, generation);
      return found;
    });
    const read = { generation, account };
    reads.set(keyId, read);
    const forget = () => void (reads.get(keyId) === read && reads.delete(keyId));
    account.then(forget, forget);
    return account;
  };

  return {
    async findAccount(keyId) {
      if (!caching) return findServiceAccountByKeyId(db, keyId);
      const cached = cache.get(keyId);
      if (cached) return cached;
      const generation = cache.generation;
      const read = reads.get(keyId);
      return read?.generation === generation ? read.account : readAndCache(keyId, generation);
    },
    isCaching: () => caching,
    async close() {
      subscriber.disconnect();
      caching = false;
      cache.clear();
    },
  };
}
