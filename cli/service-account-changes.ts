import { openRedis } from '../runs/redis-connection.js';
import { serviceAccountsChannel } from '../shared/channels.js';
import type { Config } from '../shared/config.js';
import { bearerKeyCacheMaxAgeMs } from '../server/auth/bearer-key-cache.js';

/** How long the command waits for Redis before it gives up on telling the web processes. */
const redisTimeoutMs = 3000;

/**
 * Tells every web process that a service account changed (its key rotated, or it was deleted), so each
 * drops the keys it cached for it (server/auth/bearer-keys.ts). Call it after the change is committed.
 * Connects to Redis only for this one message, which carries the account id alone. Returns a warning
 * when Redis could not be reached: the change stands, but web processes may accept the old key until
 * their cached copy is past its maximum age.
 */
export async function announceServiceAccountChange(
  config: Pick<Config, 'redisUrl' | 'redisCluster' | 'queuePrefix'>,
  accountId: string,
): Promise<string | undefined> {
  const failure = await publishOnce(config, serviceAccountsChannel(config.queuePrefix), accountId);
  const seconds = bearerKeyCacheMaxAgeMs / 1000;
  return failure && `could not tell the web processes through Redis (${failure}); they may accept the old key for up to ${seconds} s`;
}

/** Publishes one message over a connection of its own; answers why it could not, or undefined. */
export async function publishOnce(config: Pick<Config, 'redisUrl' | 'redisCluster'>, channel: string, message: string): Promise<string | undefined> {
  const redis = openRedis(config, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    once: true,
    connectTimeout: redisTimeoutMs,
    commandTimeout: redisTimeoutMs,
  });
  // Failures are reported once, as the warning below.
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.publish(channel, message);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    redis.disconnect();
  }
}
