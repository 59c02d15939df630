import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection.js';

/**
 * A Lua script called by its hash (EVALSHA), sent whole (EVAL) only when the Redis node answering
 * does not know it yet (a new or restarted node, a failover, another cluster node): Redis then keeps
 * it, so each later call sends a few bytes instead of the script and Redis looks it up without hashing
 * it again. Both are plain commands: they ride the connection's auto-pipelining, so the scripts of
 * every run that ends in the same turn of the event loop go out in one socket write, and each still
 * runs atomically. (ioredis's defineCommand is not used: defined on a connection whose auto-pipeline
 * of the current turn already exists, its replies go to the wrong callers, ioredis issue #1931.)
 */
export function scriptCommand<Args extends (string | number)[]>(numberOfKeys: number, lua: string) {
  const script = luaScript(lua);
  return (redis: RedisClient, ...args: Args): Promise<unknown> => script(redis, numberOfKeys, ...args);
}

/** As scriptCommand, for a script whose number of keys changes from call to call. */
export function luaScript(lua: string) {
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (redis: RedisClient, numberOfKeys: number, ...args: (string | number)[]): Promise<unknown> => {
    try {
      return await redis.evalsha(sha, numberOfKeys, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return redis.eval(lua, numberOfKeys, ...args);
    }
  };
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}
