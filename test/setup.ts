import { Redis } from 'ioredis';
import pg from 'pg';
import { createDb, ensureDatabase, migrateToLatest } from '../db/database.js';
import { testEnv } from './helpers/test-env.js';
import { lostIsolateCount } from '../workers/sandbox/sandbox-isolate.js';

// An isolate lost to an out-of-memory in this process parks a thread that the exit would wait for
// for ever (workers/sandbox/process-exit.ts): fail loudly instead of hanging the run.
process.on('exit', () => {
  if (lostIsolateCount() === 0) return;
  process.stderr.write('an isolate was lost to an out-of-memory in the test process itself: try such agents on a product process of their own\n');
  process.kill(process.pid, 'SIGKILL');
});

/** Root hooks: create and migrate this run's database before all tests; drop it and its Redis keys after. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await ensureDatabase(testEnv.DATABASE_URL!);
    const db = createDb(testEnv.DATABASE_URL!, 1);
    await migrateToLatest(db);
    await db.destroy();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await deleteRedisKeys(testEnv.REDIS_URL!, `${testEnv.QUEUE_PREFIX}*`);
    const url = new URL(testEnv.DATABASE_URL!);
    const name = url.pathname.slice(1);
    url.pathname = '/postgres';
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    await client.end();
  },
};

/** Deletes this run's keys only: other runs may share the Redis server. */
export async function deleteRedisKeys(redisUrl: string, pattern: string): Promise<number> {
  const redis = new Redis(redisUrl);
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}
