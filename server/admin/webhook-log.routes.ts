import Router from '@koa/router';
import type { z } from 'zod';
import { AppError, invalidRequest } from '../../shared/errors.js';
import { deliveryJobOptions } from '../../shared/webhook-jobs.js';
import { findServiceAccountByName } from '../../db/service-accounts.repository.js';
import { findAttemptsOf, findDeliveryEndpoint, findDeliveryPage, listWebhookEndpoints, requeueDelivery, type DeliveryAttemptRow, type DeliveryLogRow } from '../../db/webhook-log.repository.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { requireRole } from '../middleware/require-role.js';
import { validateBody } from '../validate-body.js';
import { emptyBody } from '../auth/auth.schemas.js';
import { nextDeliveryAttempt } from './next-delivery-attempt.js';
import { decodeDeliveryCursor, encodeDeliveryCursor } from './webhook-log.cursor.js';
import { defaultDeliveryPageSize, listDeliveriesBody, redeliverBody, type deliveryPageAnswer, type webhookListAnswer } from './webhook-log.schemas.js';

/**
 * /api/admin/listWebhooks, listWebhookDeliveries and redeliverWebhook: the console's Webhooks (DESIGN
 * §18), for admins only. Endpoints are set with the command line (webhooks:set), which shows the
 * signing secret once; nothing here ever answers it.
 */
export function webhookLogRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/admin' });
  const adminOnly = [authenticate(deps), requireRole(['admin'], 'Webhooks are for admins.')];

  router.post('/listWebhooks', ...adminOnly, async (ctx) => {
    validateBody(emptyBody, ctx);
    const endpoints = await listWebhookEndpoints(deps.db);
    const answer: z.input<typeof webhookListAnswer> = { webhooks: endpoints.map((e) => ({ ...e, createdAt: e.createdAt.toISOString() })) };
    ctx.body = answer;
  });

  router.post('/listWebhookDeliveries', ...adminOnly, async (ctx) => {
    const { name, status, cursor, limit = defaultDeliveryPageSize } = validateBody(listDeliveriesBody, ctx);
    const account = name === undefined ? undefined : await findServiceAccountByName(deps.db, name);
    if (name !== undefined && !account) throw new AppError('notFound', `No service account named ${name}.`);
    // One more than the page, to know whether there is a next one.
    const rows = await findDeliveryPage(deps.db, { accountId: account?.id, status }, { limit: limit + 1, after: cursor === undefined ? undefined : decodeDeliveryCursor(cursor) });
    const page = rows.slice(0, limit);
    const attempts = new Map<string, DeliveryAttemptRow[]>();
    for (const attempt of await findAttemptsOf(deps.db, page.map((row) => row.id))) {
      const list = attempts.get(attempt.deliveryId);
      if (list) list.push(attempt);
      else attempts.set(attempt.deliveryId, [attempt]);
    }
    const last = page.at(-1);
    const answer: z.input<typeof deliveryPageAnswer> = {
      deliveries: page.map((row) => deliveryEntry(row, attempts.get(row.id) ?? [])),
      nextCursor: rows.length > limit && last ? encodeDeliveryCursor({ createdAt: last.position, id: last.id }) : null,
    };
    ctx.body = answer;
  });

  /**
   * Delivers one again through the usual path: a delivered or failed delivery becomes pending and gets
   * a fresh delivery job (a new round of retries); a pending one waiting for its retry goes now. The
   * receiver sees the same webhook-id, as on any retry, so it can tell a repeat.
   */
  router.post('/redeliverWebhook', ...adminOnly, async (ctx) => {
    const { webhookId } = validateBody(redeliverBody, ctx);
    const endpoint = await findDeliveryEndpoint(deps.db, webhookId);
    if (!endpoint) throw new AppError('notFound', `No webhook delivery ${webhookId}.`);
    if (endpoint.url === null) throw invalidRequest({ webhookId: 'its account has no webhook endpoint now (webhooks:set gives it one)' });
    const requeued = await requeueDelivery(deps.db, webhookId);
    if (!requeued) throw new AppError('notFound', `No webhook delivery ${webhookId}.`);
    // A job already waiting for this run takes the add as a no-op; one waiting for its retry goes now.
    const job = await deps.webhookQueue.add('deliver', { kind: 'deliver', runId: requeued.runId }, deliveryJobOptions(requeued.runId));
    if (requeued.was === 'pending' && (await job.getState()) === 'delayed') await job.promote().catch(() => undefined);
    ctx.body = { webhookId, runId: requeued.runId, status: 'pending' };
  });

  return router;
}

function deliveryEntry(row: DeliveryLogRow, attempts: DeliveryAttemptRow[]): z.input<typeof deliveryPageAnswer>['deliveries'][number] {
  const next = nextDeliveryAttempt(row, attempts);
  return {
    webhookId: row.id,
    runId: row.runId,
    agentName: row.agentName,
    account: { id: row.accountId, ...(row.accountName !== null ? { name: row.accountName } : {}) },
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    requeuedAt: row.requeuedAt?.toISOString() ?? null,
    nextAttemptAt: next?.toISOString() ?? null,
    attempts: attempts.map((a) => ({ attempt: a.attempt, at: a.at.toISOString(), url: a.url, status: a.status, error: a.error })),
  };
}
