import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { runQueueName } from '../shared/channels.js';
import type { Config } from '../shared/config.js';
import type { Clock } from '../shared/clock.js';
import type { RunJobData } from '../shared/jobs.js';
import type { Logger } from '../shared/logger.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { Db } from '../db/database.js';
import { createAgentCodeCache } from './runs/agent-code-cache.js';
import { createRunAgentProcessor, reportFailedRun, type ProcessorDeps } from './run-agent.processor.js';

export interface WorkerDeps {
  config: Config;
  db: Db;
  logger: Logger;
  box: SecretBox;
  clock: Clock;
}

export interface RunWorker {
  /** Stops taking jobs, lets active runs finish, closes its connections. */
  close(): Promise<void>;
}

/** Starts a BullMQ worker that runs agents, WORKER_CONCURRENCY at a time. */
export async function startRunWorker(deps: WorkerDeps): Promise<RunWorker> {
  const { config, logger } = deps;
  const publisher = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
  const processorDeps: ProcessorDeps = { ...deps, publisher, agents: createAgentCodeCache() };
  const connection = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  const worker = new Worker<RunJobData>(runQueueName, createRunAgentProcessor(processorDeps), {
    connection,
    prefix: config.queuePrefix,
    concurrency: config.workerConcurrency,
    // A run is never started twice: a job whose worker died ends `unexpected` instead.
    maxStalledCount: 0,
  });
  worker.on('failed', (job, err) => {
    if (job) void reportFailedRun(processorDeps, job.data, err.message);
  });
  worker.on('error', (err) => logger.error({ err }, 'worker error'));
  await worker.waitUntilReady();
  return {
    async close() {
      await worker.close();
      connection.disconnect();
      publisher.disconnect();
    },
  };
}
