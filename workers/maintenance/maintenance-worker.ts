import { Queue, Worker } from 'bullmq';
import { openRedis } from '../../runs/redis-connection.js';
import { maintenanceQueueName } from '../../shared/channels.js';
import type { Runtime } from '../../db/runtime.js';
import { sweepCallerLeftovers } from '../../runs/run-slots.js';
import { shardsOf } from '../../shared/shards.js';
import { keepJobScheduler } from '../keep-job-scheduler.js';
import { sweepExpired } from './retention-sweep.js';

/** Every worker process upserts the same scheduler on the maintenance queue (idempotent). */
const sweepEveryMs = 10 * 60_000;

export interface MaintenanceWorker {
  close(): Promise<void>;
}

/**
 * Runs the retention sweep and drops the callers' leftover places (runs/run-slots.ts) every ten
 * minutes, on one worker process at a time (a BullMQ job scheduler).
 */
export async function startMaintenanceWorker(runtime: Runtime): Promise<MaintenanceWorker> {
  const { config, logger } = runtime;
  const connection = openRedis(config, { maxRetriesPerRequest: null });
  connection.on('error', (err) => logger.warn({ err: String(err) }, 'maintenance connection error'));
  const queue = new Queue(maintenanceQueueName, { connection, prefix: config.queuePrefix });
  queue.on('error', (err) => logger.warn({ err: String(err) }, 'maintenance queue error'));
  const blocking = openRedis(config, { maxRetriesPerRequest: null });
  const sweep = async () => {
    await sweepExpired(runtime);
    await sweepCallerLeftovers(connection, shardsOf(config));
  };
  const worker = new Worker(maintenanceQueueName, sweep, {
    connection: blocking,
    prefix: config.queuePrefix,
    concurrency: 1,
  });
  worker.on('error', (err) => logger.error({ err }, 'maintenance worker error'));
  await worker.waitUntilReady();
  const upsert = () => queue.upsertJobScheduler('retention-sweep', { every: sweepEveryMs }, { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: true } });
  await keepJobScheduler(connection, 'retention-sweep', upsert, logger);
  return {
    async close() {
      await worker.close();
      await queue.close();
      blocking.disconnect();
      connection.disconnect();
    },
  };
}
