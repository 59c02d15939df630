import { Queue, Worker, type Job } from 'bullmq';
import { openRedis } from '../../runs/redis-connection.js';
import { mailQueueName, type MailJobData } from '../../shared/mail-jobs.js';
import type { Runtime } from '../../db/runtime.js';
import { keepJobScheduler } from '../keep-job-scheduler.js';
import { deliverMail, sweepAfterMs, sweepOutbox } from './deliver-mail.js';
import { issueEmailCode } from './issue-email-code.js';
import type { MailDeps } from './mail-deps.js';
import { createMailer, type Mailer } from './mailer.js';

export interface MailWorker {
  close(): Promise<void>;
}

/** Runs the mail queue: issuing codes, sending outbox mail, and the sweep that queues forgotten mail again. */
export async function startMailWorker(runtime: Runtime, mailer: Mailer = createMailer(runtime.config)): Promise<MailWorker> {
  const { config, logger } = runtime;
  const prefix = config.queuePrefix;
  const producer = openRedis(config, { maxRetriesPerRequest: 1 });
  producer.on('error', (err) => logger.warn({ err: String(err) }, 'mail queue connection error'));
  const mailQueue = new Queue<MailJobData>(mailQueueName, { connection: producer, prefix });
  mailQueue.on('error', (err) => logger.warn({ err: String(err) }, 'mail queue error'));
  const deps: MailDeps = { ...runtime, mailer, mailQueue };

  const connection = openRedis(config, { maxRetriesPerRequest: null });
  const worker = new Worker<MailJobData>(mailQueueName, (job: Job<MailJobData>) => processMailJob(deps, job.data), { connection, prefix, concurrency: 4 });
  worker.on('error', (err) => logger.error({ err }, 'mail worker error'));
  await worker.waitUntilReady();
  // Idempotent: every worker process upserts the same scheduler.
  const upsert = () => mailQueue.upsertJobScheduler('outbox-sweep', { every: sweepAfterMs }, { name: 'sweep', data: { kind: 'sweep' }, opts: { removeOnComplete: true, removeOnFail: true } });
  await keepJobScheduler(producer, 'outbox-sweep', upsert, logger);
  return {
    async close() {
      await worker.close();
      await mailQueue.close();
      mailer.close();
      connection.disconnect();
      producer.disconnect();
    },
  };
}

async function processMailJob(deps: MailDeps, data: MailJobData): Promise<void> {
  if (data.kind === 'issueCode') return issueEmailCode(deps, data.email);
  if (data.kind === 'send') return deliverMail(deps, data.outboxId);
  await sweepOutbox(deps);
}
