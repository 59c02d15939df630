import { Worker } from 'bullmq';
import { scheduleQueueName } from '../../shared/channels.js';
import type { ScheduleFiringData } from '../../shared/jobs.js';
import { shardsOf } from '../../shared/shards.js';
import type { Runtime } from '../../db/runtime.js';
import { openRedis } from '../../runs/redis-connection.js';
import { openRunQueues } from '../../runs/run-queues.js';
import { openScheduleQueue, reconcileSchedulers } from '../../runs/schedulers.js';
import { keepJobScheduler } from '../keep-job-scheduler.js';
import { fireSchedule, type FiringDeps } from './fire-schedule.js';

/** Firings taken at once: each only queues a run, in a few milliseconds. */
const firingConcurrency = 8;

export interface ScheduleWorker {
  close(): Promise<void>;
}

/**
 * Takes the schedules' firings (DESIGN §19) and turns each into a background run. Every worker process
 * runs one; BullMQ gives each firing to one of them. At start, and whenever Redis comes back after it
 * was lost, the job schedulers are made to match the schedules in PostgreSQL (runs/schedulers.ts).
 */
export async function startScheduleWorker(runtime: Runtime): Promise<ScheduleWorker> {
  const { config, logger } = runtime;
  const onError = (err: Error) => logger.warn({ err: String(err) }, 'schedule queue error');
  const connection = openRedis(config, { maxRetriesPerRequest: null });
  connection.on('error', onError);
  const queue = openScheduleQueue(connection, config.queuePrefix, onError);
  const redis = openRedis(config, { maxRetriesPerRequest: 1 });
  redis.on('error', onError);
  const runQueues = openRunQueues(shardsOf(config), redis, onError);
  const deps: FiringDeps = { ...runtime, redis, runQueues, queue };
  const blocking = openRedis(config, { maxRetriesPerRequest: null });
  const worker = new Worker<ScheduleFiringData>(scheduleQueueName, (job) => fireSchedule(deps, job), {
    connection: blocking,
    prefix: config.queuePrefix,
    concurrency: firingConcurrency,
    // A firing is never taken twice: one whose worker died is lost rather than run again.
    maxStalledCount: 0,
  });
  worker.on('error', (err) => logger.error({ err }, 'schedule worker error'));
  worker.on('failed', (job, err) => logger.warn({ err: err.message, scheduleId: job?.data.scheduleId }, 'schedule firing failed: no run'));
  await worker.waitUntilReady();
  const reconcile = async () => {
    const { upserted, removed } = await reconcileSchedulers(runtime.db, queue);
    if (upserted || removed) logger.info({ upserted, removed }, 'job schedulers made to match the schedules');
  };
  await keepJobScheduler(connection, 'schedules', reconcile, logger);
  return {
    async close() {
      await worker.close();
      await runQueues.close();
      await queue.close();
      blocking.disconnect();
      redis.disconnect();
      connection.disconnect();
    },
  };
}
