import type { RedisClient } from '../runs/redis-connection.js';
import type { Logger } from '../shared/logger.js';

/** How long a failed upsert waits before the next try, doubling up to the last. */
const retryMs = [1000, 2000, 5000, 10_000, 30_000];

/**
 * Upserts a BullMQ job scheduler now, and again each time `connection` comes back after it was lost:
 * a Redis restarted without persistence has forgotten it, and upserting is idempotent. An upsert Redis
 * refuses is tried again later, logged: a Redis that is down or failing over never stops the process.
 */
export async function keepJobScheduler(connection: RedisClient, name: string, upsert: () => Promise<unknown>, logger: Logger): Promise<void> {
  let retry: NodeJS.Timeout | undefined;
  const attempt = (failures: number) => {
    clearTimeout(retry);
    retry = undefined;
    return upsert().catch((err: unknown) => {
      logger.warn({ err: String(err), scheduler: name }, 'job scheduler not upserted; trying again');
      retry = setTimeout(() => void attempt(failures + 1), retryMs[Math.min(failures, retryMs.length - 1)]).unref();
    });
  };
  await attempt(0);
  let lost = false;
  connection.on('close', () => (lost = true));
  connection.on('end', () => clearTimeout(retry));
  connection.on('ready', () => {
    if (!lost) return;
    lost = false;
    void attempt(0);
  });
}
