import type { Shards } from '../shared/shards.js';
import type { RedisClient } from './redis-connection.js';
import { stopRun, type StopRunDeps } from './stop-run.js';

/**
 * The queued children of each run that waits on sys.call (DESIGN §19), in Redis on the parent's shard.
 * A parent ended by its own worker stops its children there (its sandbox aborts their calls); a parent
 * whose worker died is ended by another worker, which finds its children here and stops them, so no
 * child runs on orphaned. A child run in its parent's worker needs no entry: it dies with it.
 */
export function runChildrenKey(shards: Shards, parentRunId: string): string {
  return `${shards.prefixOf(parentRunId)}:children:${parentRunId}`;
}

/** Notes that `childRunId` is a child of `parentRunId`; kept `lifetimeMs`, past the parent's longest possible run. */
export async function noteRunChild(redis: RedisClient, shards: Shards, parentRunId: string, childRunId: string, lifetimeMs: number): Promise<void> {
  const key = runChildrenKey(shards, parentRunId);
  await Promise.all([redis.sadd(key, childRunId), redis.pexpire(key, lifetimeMs)]);
}

/** Forgets the children of a parent that ended where it ran (they were stopped, or had ended, there). */
export async function forgetRunChildren(redis: RedisClient, shards: Shards, parentRunId: string): Promise<void> {
  await redis.del(runChildrenKey(shards, parentRunId));
}

/** Stops every child of `parentRunId` still queued or running (stop-run.ts), then forgets them; how many were stopped. */
export async function stopRunChildren(deps: StopRunDeps, shards: Shards, parentRunId: string): Promise<number> {
  const key = runChildrenKey(shards, parentRunId);
  const children = await deps.redis.smembers(key);
  const stopped = await Promise.all(children.map((childRunId) => stopRun(deps, childRunId)));
  await deps.redis.del(key);
  return stopped.filter(Boolean).length;
}
