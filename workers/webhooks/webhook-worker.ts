import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { openRedis } from '../../runs/redis-connection.js';
import { deliveryAttempts, deliveryJobOptions, retryDelaysMs, webhookQueueName, type WebhookJobData } from '../../shared/webhook-jobs.js';
import type { Runtime } from '../../db/runtime.js';
import { findStalledDeliveries, markDeliveryFailed } from '../../db/webhooks.repository.js';
import { keepJobScheduler } from '../keep-job-scheduler.js';
import { parseAllowList } from '../outbound-http/destination-guard.js';
import { createAccountSlots } from './account-slots.js';
import { deliverWebhook, type WebhookDeliveryDeps } from './deliver-webhook.js';

export interface WebhookWorker {
  close(): Promise<void>;
}

/**
 * Deliveries under way at once in a process (BullMQ's slots), and for one account: attempts at most
 * 10, waiting for one of those at most 20 and for 1 s (account-slots.ts). A hanging receiver so holds
 * at most 30 of the 50 slots for a second, and 10 after; a receiver that answers takes a burst at full speed.
 */
const concurrency = 50;
const slotOptions = { perAccount: 10, waitingPerAccount: 20, waitMs: 1000 };

/**
 * A delivery whose account holds all its slots waits, without counting as an attempt: moved to the
 * delayed set for 0.5 s, doubling with each deferral up to 30 s, and queued again with the number of
 * its deferrals as its priority. BullMQ takes every job without a priority (every fresh delivery, of
 * any account) before one with, so another account's delivery is never behind a hanging receiver's
 * backlog; the doubling keeps a backlog of thousands from cycling through Redis every second.
 */
async function deferDelivery(job: Job<WebhookJobData>, token: string | undefined): Promise<never> {
  const deferrals = job.priority ?? 0;
  await job.changePriority({ priority: deferrals + 1 });
  await job.moveToDelayed(Date.now() + Math.min(30_000, 500 * 2 ** deferrals), token);
  throw new DelayedError();
}

/**
 * Delivers webhooks: a job per run's end (queued by the worker that ran it, after its commit), tried
 * again on the schedule of DESIGN §14; and a sweep every WEBHOOK_SWEEP_SECONDS that queues again the
 * deliveries whose job was lost (a worker killed between its commit and the queueing), so none is lost.
 */
export async function startWebhookWorker(runtime: Runtime): Promise<WebhookWorker> {
  const { config, logger } = runtime;
  const prefix = config.queuePrefix;
  const producer = openRedis(config, { maxRetriesPerRequest: 1 });
  producer.on('error', (err) => logger.warn({ err: String(err) }, 'webhook queue connection error'));
  const queue = new Queue<WebhookJobData>(webhookQueueName, { connection: producer, prefix });
  queue.on('error', (err) => logger.warn({ err: String(err) }, 'webhook queue error'));
  const deps: WebhookDeliveryDeps = { db: runtime.db, box: runtime.box, allow: parseAllowList(config.webhookAllow), slots: createAccountSlots(slotOptions) };
  // A pending delivery without a job this long after its run ended is queued again.
  const sweepEveryMs = config.webhookSweepSeconds * 1000;

  const processJob = async (job: Job<WebhookJobData>, token?: string) => {
    if (job.data.kind === 'deliver') {
      if ((await deliverWebhook(deps, job.data.runId, job.data.traceparent)) === 'deferred') await deferDelivery(job, token);
      return;
    }
    const stalled = await findStalledDeliveries(runtime.db, new Date(Date.now() - sweepEveryMs), 1000);
    for (const runId of stalled) await queue.add('deliver', { kind: 'deliver', runId }, deliveryJobOptions(runId));
  };
  const connection = openRedis(config, { maxRetriesPerRequest: null });
  const worker = new Worker<WebhookJobData>(webhookQueueName, processJob, {
    connection,
    prefix,
    concurrency,
    // A worker that dies mid-delivery leaves its job locked this long; then another worker takes it.
    lockDuration: config.jobLockMs,
    stalledInterval: config.jobLockMs,
    settings: { backoffStrategy: (attemptsMade: number) => retryDelaysMs[attemptsMade - 1] ?? retryDelaysMs.at(-1)! },
  });
  worker.on('failed', (job, err) => {
    if (!job || job.data.kind !== 'deliver') return;
    if (job.attemptsMade < deliveryAttempts) return logger.info({ runId: job.data.runId, attempt: job.attemptsMade, err: err.message }, 'webhook not delivered yet');
    logger.warn({ runId: job.data.runId, err: err.message }, 'webhook not delivered: retries over');
    void markFailedByRun(runtime, job.data.runId).catch((failure: unknown) => logger.warn({ err: String(failure) }, 'webhook delivery not marked failed'));
  });
  worker.on('error', (err) => logger.error({ err }, 'webhook worker error'));
  await worker.waitUntilReady();
  const upsert = () => queue.upsertJobScheduler('webhook-sweep', { every: sweepEveryMs }, { name: 'sweep', data: { kind: 'sweep' }, opts: { removeOnComplete: true, removeOnFail: true } });
  await keepJobScheduler(producer, 'webhook-sweep', upsert, logger);
  return {
    async close() {
      await worker.close();
      await queue.close();
      connection.disconnect();
      producer.disconnect();
    },
  };
}

async function markFailedByRun(runtime: Runtime, runId: string): Promise<void> {
  const row = await runtime.db.selectFrom('webhook_deliveries').select('id').where('run_id', '=', runId).executeTakeFirst();
  if (row) await markDeliveryFailed(runtime.db, row.id);
}
