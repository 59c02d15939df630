import type { RedisClient } from './redis-connection.js';

/**
 * A Lua script sent as a plain EVAL: unlike a MULTI it rides the connection's auto-pipelining, so the
 * scripts of every run that ends in the same turn of the event loop go out in one socket write, and
 * each still runs atomically. (Redis keeps the compiled script by its hash; the text costs a few hundred
 * bytes a call. ioredis's defineCommand is not used: defined on a connection whose auto-pipeline of the
 * current turn already exists, its replies go to the wrong callers, ioredis issue #1931.)
 */
export function scriptCommand<Args extends (string | number)[]>(numberOfKeys: number, lua: string) {
  return (redis: RedisClient, ...args: Args): Promise<unknown> => redis.eval(lua, numberOfKeys, ...args);
}
