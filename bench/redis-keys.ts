import { Redis } from 'ioredis';

/** Deletes every Redis key that starts with `prefix`; returns how many. */
export async function deleteKeysWithPrefix(redisUrl: string, prefix: string): Promise<number> {
  if (!/^[A-Za-z0-9_.{}-]+$/.test(prefix)) throw new Error(`refusing to match keys with prefix ${prefix}`);
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}
