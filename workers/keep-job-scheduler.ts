import type { RedisClient } from '../runs/redis-connection.js';
import type { Logger } from '../shared/logger.js';

/**
 * Upserts a BullMQ job scheduler now, and again each time `connection` comes back after it was lost:
 * a Redis restarted without persistence has forgotten it, and upserting is idempotent.
 */
export async function keepJobScheduler(connection: RedisClient, name: string, upsert: () => Promise<unknown>, logger: Logger): Promise<void> {
  await upsert();
  let lost = false;
  connection.on('close', () => (lost = true));
  connection.on('ready', () => {
    if (!lost) return;
    lost = false;
    upsert().catch((err: unknown) => logger.warn({ err: String(err), scheduler: name }, 'job scheduler not restored'));
  });
}
