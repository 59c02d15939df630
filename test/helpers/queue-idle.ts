import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Config } from '../../shared/config.js';
import { waitFor } from './wait.js';

/**
 * Waits until a queue holds no job waiting, running or waiting for a retry (its job schedulers' next
 * runs, `repeat:…`, do not count). A job adds the jobs it leads to (a code's mail, say) before it
 * completes, and one script reads every state at once, so once this returns everything the calls
 * answered so far set off on this queue has finished: what has not happened by then will not.
 */
export async function waitForQueueIdle(config: Pick<Config, 'redisUrl' | 'queuePrefix'>, queueName: string, timeoutMs = 10_000): Promise<void> {
  const connection = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(queueName, { connection, prefix: config.queuePrefix });
  try {
    const busy = async () => (await queue.getRanges(['waiting', 'prioritized', 'active', 'delayed'], 0, -1)).filter((id) => !id.startsWith('repeat:'));
    await waitFor(async () => (await busy()).length === 0, timeoutMs, `the ${queueName} queue to have no job left`);
  } finally {
    await queue.close();
    connection.disconnect();
  }
}
