import Router from '@koa/router';
import { AppError, invalidRequest } from '../../shared/errors.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { validateBody } from '../validate-body.js';
import { findStreamedRun } from './active-runs.js';
import { cancelRuns } from './cancel.service.js';
import { attachBody, cancelBody, execAgentBody } from './exec.schemas.js';
import { executeAgent } from './exec.service.js';
import { relayRun, streamExecution } from './exec.stream.js';
import { idempotencyHeader, readIdempotencyKey } from './idempotency.js';

export function execRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/exec' });

  router.post('/execAgent', authenticate(deps), async (ctx) => {
    const body = validateBody(execAgentBody, ctx);
    const idempotencyKey = readIdempotencyKey(ctx.get(idempotencyHeader));
    const call = { caller: ctx.state.principal, sessionId: ctx.state.sessionId, body, requestId: ctx.state.requestId, requestIdGiven: ctx.state.requestIdGiven, idempotencyKey };
    if (body.stream) return streamExecution(deps, ctx, call);
    ctx.body = await executeAgent(deps, call);
  });

  router.post('/cancel', authenticate(deps), async (ctx) => {
    const body = validateBody(cancelBody, ctx);
    const target = body.convid !== undefined ? { convid: body.convid } : { requestId: body.requestId! };
    ctx.body = { cancelled: await cancelRuns(deps, ctx.state.principal, target) };
  });

  router.post('/attach', authenticate(deps), async (ctx) => {
    const { convid } = validateBody(attachBody, ctx);
    const afterId = readLastEventId(ctx.get('Last-Event-ID'));
    const run = await findStreamedRun(deps.redis, deps.config.queuePrefix, ctx.state.principal, convid);
    if (!run) throw new AppError('notFound', 'No streamed call of yours on this conversation in the last STREAM_REPLAY_SECONDS.');
    relayRun(deps, ctx, { runId: run.runId, convid, agentName: run.agentName }, afterId);
  });

  return router;
}

function readLastEventId(header: string): number {
  if (header === '') return 0;
  if (!/^\d{1,15}$/.test(header)) throw invalidRequest({ 'Last-Event-ID': 'must be the id of an event this stream sent' });
  return Number(header);
}
