import { z } from 'zod';
import { decodeDeliveryCursor } from './webhook-log.cursor.js';

/** Bodies and answers of the console's Webhooks endpoints (DESIGN §18). Never a signing secret. */

/** Deliveries a page of listWebhookDeliveries holds when the body gives no `limit`, and at most. */
export const defaultDeliveryPageSize = 50;
export const maxDeliveryPageSize = 100;

const deliveryStatus = z.enum(['pending', 'delivered', 'failed']);
const pageSizeRule = `must be a whole number from 1 to ${maxDeliveryPageSize}`;

export const listDeliveriesBody = z.strictObject({
  name: z.string().min(1, 'must not be empty').optional().describe('Only the deliveries of this service account.'),
  status: deliveryStatus.optional().describe('Only deliveries in this state: pending (to be tried, or retried), delivered, failed (retries ran out).'),
  cursor: z
    .string()
    .refine((value) => decodeDeliveryCursor(value) !== undefined, 'is not a cursor this server gave')
    .optional()
    .describe('nextCursor of the page before; the first page without it.'),
  limit: z.number(pageSizeRule).int(pageSizeRule).min(1, pageSizeRule).max(maxDeliveryPageSize, pageSizeRule).optional().describe(`Deliveries per page (default ${defaultDeliveryPageSize}).`),
});

export const redeliverBody = z.strictObject({ webhookId: z.uuid('must be a webhook-id (a UUID)').describe('The delivery, by its webhook-id.') });

/** What listWebhooks answers: each service account's endpoint. */
export const webhookListAnswer = z.object({
  webhooks: z.array(z.object({ name: z.string().describe('The service account.'), accountId: z.uuid(), url: z.string(), createdAt: z.iso.datetime().describe('When the endpoint was set.') })),
});

const attempt = z.object({
  attempt: z.number().int().describe('1 for the first; numbering goes on across rounds.'),
  at: z.iso.datetime(),
  url: z.string().describe('Where it was sent.'),
  status: z.number().int().nullable().describe("The receiver's HTTP status; null when no answer came."),
  error: z.string().nullable().describe('Why it did not deliver; null when it did (a 2xx).'),
});

export const deliveryEntry = z.object({
  webhookId: z.uuid().describe('The webhook-id header of every attempt.'),
  runId: z.uuid(),
  agentName: z.string().nullable(),
  account: z.object({ id: z.uuid(), name: z.string().optional().describe('Absent once the account is deleted.') }),
  status: deliveryStatus,
  createdAt: z.iso.datetime().describe('When the run ended.'),
  deliveredAt: z.iso.datetime().nullable(),
  requeuedAt: z.iso.datetime().nullable().describe('When an admin last asked to deliver it again.'),
  nextAttemptAt: z.iso.datetime().nullable().describe('About when the next retry goes (pending deliveries that failed an attempt of this round); null otherwise.'),
  attempts: z.array(attempt).describe('Oldest first.'),
});

export const deliveryPageAnswer = z.object({
  deliveries: z.array(deliveryEntry).describe('Newest first (by when the run ended, then webhook-id).'),
  nextCursor: z.string().nullable().describe('Pass as cursor for the next (older) page; null on the last page.'),
});

export const redeliverAnswer = z.object({
  webhookId: z.uuid(),
  runId: z.uuid(),
  status: z.literal('pending'),
});
