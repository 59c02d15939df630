/** The webhook delivery queue (DESIGN §14): one job per run's end to deliver, and the sweep. */
export const webhookQueueName = 'webhooks';

/** `traceparent`: with tracing on, the run's span, which its deliveries' spans belong to (DESIGN §18). */
export type WebhookJobData = { kind: 'deliver'; runId: string; traceparent?: string } | { kind: 'sweep' };

/** One job per run: adding it again while it waits or retries does nothing. */
export function webhookJobId(runId: string): string {
  return `deliver-${runId}`;
}

/**
 * Delays before each retry of a delivery (DESIGN §14): about 1 s, 5 s, 30 s, 2 min, 10 min, 1 h, then
 * every 4 h; 13 attempts in all span a little over 24 h.
 */
export const retryDelaysMs = [1_000, 5_000, 30_000, 120_000, 600_000, 3_600_000, ...Array<number>(6).fill(4 * 3_600_000)];
export const deliveryAttempts = retryDelaysMs.length + 1;

/**
 * Options of a delivery job, for whoever queues one (the worker after a run's commit, the sweep, an
 * admin's "deliver again"): retried on the schedule above, removed once it is done.
 */
export function deliveryJobOptions(runId: string) {
  return { jobId: webhookJobId(runId), attempts: deliveryAttempts, backoff: { type: 'custom' }, removeOnComplete: true, removeOnFail: true };
}
