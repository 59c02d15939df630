import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { generateServiceAccountKey, parseServiceAccountKey } from '../../shared/service-account-key.js';
import { serviceAccountsChannel } from '../../shared/channels.js';
import { createLogger } from '../../shared/logger.js';
import { createDb } from '../../db/database.js';
import { replaceServiceAccountKey } from '../../db/service-accounts.repository.js';
import { createBearerKeyCache } from '../../server/auth/bearer-key-cache.js';
import { openBearerKeys, type BearerKeys } from '../../server/auth/bearer-keys.js';
import { createAccount } from '../helpers/fixtures.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/** The cache is used only while its change subscription is in place; the database is the truth otherwise. */
describe('bearer keys while the change subscription is down', () => {
  const db = createDb(testEnv.DATABASE_URL!, 2);
  const prefix = `${testEnv.QUEUE_PREFIX}-bearer-keys`;
  const cache = createBearerKeyCache();
  const publisher = new Redis(testEnv.REDIS_URL!);
  let proxy: TcpProxy;
  let bearerKeys: BearerKeys;

  before(async () => {
    const target = new URL(testEnv.REDIS_URL!);
    proxy = await startTcpProxy(target.hostname, Number(target.port));
    const proxied = new URL(target);
    proxied.port = String(proxy.port);
    bearerKeys = await openBearerKeys({ redisUrl: proxied.toString(), redisCluster: false, prefix, db, logger: createLogger('silent'), cache });
  });
  after(async () => {
    await bearerKeys.close();
    await proxy.close();
    publisher.disconnect();
    await db.destroy();
  });

  const keyIdOf = (key: string) => parseServiceAccountKey(key)!.keyId;

  it('serves a cached account until a message names it, and never caches an unknown key id', async () => {
    assert.ok(bearerKeys.isCaching(), 'subscribed once open');
    const account = await createAccount(db);
    assert.equal((await bearerKeys.findAccount(keyIdOf(account.key)))?.id, account.id);
    assert.equal(await bearerKeys.findAccount('0000000000000000'), undefined);
    assert.equal(cache.size, 1, 'only the account that exists is cached');
    const rotated = generateServiceAccountKey();
    await replaceServiceAccountKey(db, account.name, rotated.keyId, rotated.secretHash);
    assert.equal((await bearerKeys.findAccount(keyIdOf(account.key)))?.id, account.id, 'unannounced: still cached');
    await publisher.publish(serviceAccountsChannel(prefix), account.id);
    await waitFor(async () => (await bearerKeys.findAccount(keyIdOf(account.key))) === undefined, 2000, 'the message to drop the old key');
    assert.equal((await bearerKeys.findAccount(rotated.keyId))?.id, account.id);
  });

  it('reads every key from PostgreSQL while the subscription is down, and starts with an empty cache when it is back', async () => {
    const account = await createAccount(db);
    assert.equal((await bearerKeys.findAccount(keyIdOf(account.key)))?.id, account.id);
    assert.ok(cache.size > 0);

    await proxy.cut();
    await waitFor(() => !bearerKeys.isCaching(), 5000, 'the subscription to drop');
    assert.equal(cache.size, 0, 'emptied when the subscription went away');
    const rotated = generateServiceAccountKey();
    // Announced on Redis, but this process cannot hear it: only the database can tell.
    await replaceServiceAccountKey(db, account.name, rotated.keyId, rotated.secretHash);
    await publisher.publish(serviceAccountsChannel(prefix), account.id);
    assert.equal(await bearerKeys.findAccount(keyIdOf(account.key)), undefined, 'the rotated key is refused');
    assert.equal((await bearerKeys.findAccount(rotated.keyId))?.id, account.id);
    assert.equal(cache.size, 0, 'nothing is cached while no change can be heard');

    await proxy.restore();
    await waitFor(() => bearerKeys.isCaching(), 15_000, 'the subscription to come back');
    assert.equal(cache.size, 0, 'subscribed again with an empty cache');
    assert.equal((await bearerKeys.findAccount(rotated.keyId))?.id, account.id);
    assert.equal(cache.size, 1, 'caching again');
  });

  it('empties the cache when it subscribes again after losing the connection', async () => {
    const account = await createAccount(db);
    await bearerKeys.findAccount(keyIdOf(account.key));
    assert.ok(cache.size > 0);
    const generation = cache.generation;
    await proxy.cut();
    await proxy.restore();
    await waitFor(() => bearerKeys.isCaching() && cache.generation >= generation + 2, 15_000, 'a new subscription');
    assert.equal(cache.size, 0);
  });
});

/** Calls arriving together with a key not cached yet share one read (server/auth/bearer-keys.ts). */
describe('bearer keys read once for a burst', () => {
  // One connection: a held connection keeps a read in flight as long as the test needs.
  const db = createDb(testEnv.DATABASE_URL!, 1);
  const prefix = `${testEnv.QUEUE_PREFIX}-bearer-burst`;
  const cache = createBearerKeyCache();
  let reads = 0;
  const counted = db.withPlugin({
    transformQuery: (args) => {
      reads += 1;
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  let bearerKeys: BearerKeys;

  before(async () => {
    bearerKeys = await openBearerKeys({ redisUrl: testEnv.REDIS_URL!, redisCluster: false, prefix, db: counted, logger: createLogger('silent'), cache });
  });
  after(async () => {
    await bearerKeys.close();
    await db.destroy();
  });
  beforeEach(() => {
    reads = 0;
  });

  /** Runs `during` while the pool's only connection is taken, so every read started meanwhile waits. */
  const withPoolHeld = async <T>(during: () => Promise<T>): Promise<T> => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let taken!: () => void;
    const connectionTaken = new Promise<void>((resolve) => (taken = resolve));
    const holding = db.connection().execute(async () => {
      taken();
      await held;
    });
    await connectionTaken;
    try {
      return await during();
    } finally {
      release();
      await holding;
    }
  };

  it('makes one read for many calls with the same uncached key, and answers each', async () => {
    const account = await createAccount(db);
    const { keyId } = parseServiceAccountKey(account.key)!;
    const unknown = '0000000000000001';
    const calls = await withPoolHeld(async () => ({
      known: Array.from({ length: 50 }, () => bearerKeys.findAccount(keyId)),
      unknown: Array.from({ length: 50 }, () => bearerKeys.findAccount(unknown)),
    }));
    const found = await Promise.all(calls.known);
    const missing = await Promise.all(calls.unknown);
    assert.deepEqual(new Set(found.map((a) => a?.id)), new Set([account.id]), 'every call got the account');
    assert.ok(missing.every((a) => a === undefined), 'every call with the unknown key got none');
    assert.equal(reads, 2, 'one read per key id');
    await bearerKeys.findAccount(keyId);
    assert.equal(reads, 2, 'then served from the cache');
  });

  it('does not give a call made after a drop the read begun before it', async () => {
    const account = await createAccount(db);
    const { keyId } = parseServiceAccountKey(account.key)!;
    const pending = await withPoolHeld(async () => {
      const before = bearerKeys.findAccount(keyId);
      cache.dropAccount(account.id);
      const after = bearerKeys.findAccount(keyId);
      const joined = bearerKeys.findAccount(keyId);
      return [before, after, joined];
    });
    const answers = await Promise.all(pending);
    assert.ok(answers.every((a) => a?.id === account.id));
    assert.equal(reads, 2, 'a read before the drop, and one after it that the next call joined');
    await bearerKeys.findAccount(keyId);
    assert.equal(reads, 2, 'the read after the drop was cached');
  });
});
