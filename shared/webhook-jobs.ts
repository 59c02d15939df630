/** The webhook delivery queue (DESIGN §14): one job per run's end to deliver, and the sweep. */
export const webhookQueueName = 'webhooks';

/** `traceparent`: with tracing on, the run's span, which its deliveries' spans belong to (DESIGN §18). */
export type WebhookJobData = { kind: 'deliver'; runId: string; traceparent?: string } | { kind: 'sweep' };

/** One job per run: adding it again while it waits or retries does nothing. */
export function webhookJobId(runId: string): string {
  return `deliver-${runId}`;
}
