import type { Queue } from 'bullmq';

/**
 * The mail queue. `issueCode` makes a one-time code for an address (when it belongs to a user) and
 * puts its mail in the outbox; `send` delivers one outbox mail; `sweep` queues again mails whose
 * sending gave up. Job data never holds a code or a mail's text: those live sealed in the outbox.
 */
export const mailQueueName = 'mail';

export type MailJobData = { kind: 'issueCode'; email: string } | { kind: 'send'; outboxId: string } | { kind: 'sweep' };

/** Job id of an outbox mail's send job: while it exists, the mail is not queued twice. */
export function sendJobId(outboxId: string): string {
  return `send-${outboxId}`;
}

/** Retries of one send job (exponential from 500 ms: about 2 minutes); after that the sweep queues it again. */
export const sendJobOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true,
  removeOnFail: true,
} as const;

/** Queues the sending of an outbox mail (after the transaction that wrote it committed). */
export async function queueSend(queue: Queue<MailJobData>, outboxId: string): Promise<void> {
  await queue.add('send', { kind: 'send', outboxId }, { jobId: sendJobId(outboxId), ...sendJobOptions });
}

/** Queues the making and mailing of a one-time code for an address (the job finds out whether it belongs to a user). */
export async function queueIssueCode(queue: Queue<MailJobData>, email: string): Promise<void> {
  await queue.add('issueCode', { kind: 'issueCode', email }, { attempts: 5, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: true, removeOnFail: true });
}
