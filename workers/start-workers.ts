import type { Runtime } from '../db/runtime.js';
import { startMailWorker } from './mail/mail-worker.js';
import { startMaintenanceWorker } from './maintenance/maintenance-worker.js';
import type { Mailer } from './mail/mailer.js';
import { startRunWorker } from './run-worker.js';
import { startScheduleWorker } from './schedules/schedule-worker.js';
import { startWebhookWorker } from './webhooks/webhook-worker.js';

export interface Workers {
  /** Stops taking jobs, lets running ones finish, closes the connections. */
  close(): Promise<void>;
}

/** Everything a worker process runs: agent runs, mail, webhooks, schedules' firings, and the retention sweep. */
export async function startWorkers(runtime: Runtime, options: { mailer?: Mailer } = {}): Promise<Workers> {
  const runs = await startRunWorker(runtime);
  const mail = await startMailWorker(runtime, options.mailer);
  const maintenance = await startMaintenanceWorker(runtime);
  const webhooks = await startWebhookWorker(runtime);
  const schedules = await startScheduleWorker(runtime);
  return {
    async close() {
      await Promise.all([runs.close(), mail.close(), maintenance.close(), webhooks.close(), schedules.close()]);
    },
  };
}
