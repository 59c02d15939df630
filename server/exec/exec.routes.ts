import Router from '@koa/router';
import { shardsOf } from '../../shared/shards.js';
import type { Context } from 'koa';
import { runEventsKey } from '../../shared/channels.js';
import { AppError, invalidRequest } from '../../shared/errors.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { validateBody } from '../validate-body.js';
import { findStreamedRun } from './active-runs.js';
import { cancelRuns } from './cancel.service.js';
import { defaultWaitMs, readRun, waitForRun } from './background-runs.js';
import { attachBody, cancelBody, execAgentBody, execAgentStreamBody, getRunBody, submitBody, waitBody, type ExecAgentBody } from './exec.schemas.js';
import { executeAgent, launchLoggedRun, type ExecCall } from './exec.service.js';
import { relayRun, streamExecution, streamFinishedRun } from './exec.stream.js';
import { idempotencyHeader, readIdempotencyKey } from './idempotency.js';

export function execRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/exec' });

  router.post('/execAgent', authenticate(deps), async (ctx) => {
    const body = validateBody(execAgentBody, ctx);
    const call = execCall(ctx, body);
    if (body.stream) return streamExecution(deps, ctx, call, readLastEventId(ctx.get('Last-Event-ID')));
    ctx.body = await executeAgent(deps, call);
  });

  // execAgent with `stream: true`, at a path whose 200 is always the event stream (exec.schemas.ts).
  router.post('/execAgentStream', authenticate(deps), async (ctx) => {
    const body = validateBody(execAgentStreamBody, ctx);
    return streamExecution(deps, ctx, execCall(ctx, { ...body, stream: true }), readLastEventId(ctx.get('Last-Event-ID')));
  });

  router.post('/submit', authenticate(deps), async (ctx) => {
    const body = validateBody(submitBody, ctx);
    const idempotencyKey = readIdempotencyKey(ctx.get(idempotencyHeader));
    const call = { caller: ctx.state.principal, sessionId: ctx.state.sessionId, body, requestId: ctx.state.requestId, requestIdGiven: ctx.state.requestIdGiven, idempotencyKey, background: true, onAdmitted: (headers: Record<string, string>) => ctx.set(headers) };
    const run = await launchLoggedRun(deps, call);
    const status = run.joined ? ((await readRun(deps, ctx.state.principal, run.runId))?.status ?? 'queued') : 'queued';
    ctx.status = 202;
    ctx.body = { runId: run.runId, convid: run.convid, agentName: run.agentName, status };
  });

  router.post('/getRun', authenticate(deps), async (ctx) => {
    const { runId } = validateBody(getRunBody, ctx);
    ctx.body = (await readRun(deps, ctx.state.principal, runId)) ?? runNotFound();
  });

  router.post('/wait', authenticate(deps), async (ctx) => {
    const { runId, timeoutMs } = validateBody(waitBody, ctx);
    ctx.body = (await waitForRun(deps, ctx.state.principal, runId, timeoutMs ?? defaultWaitMs)) ?? runNotFound();
  });

  router.post('/cancel', authenticate(deps), async (ctx) => {
    const body = validateBody(cancelBody, ctx);
    const target = body.convid !== undefined ? { convid: body.convid } : body.runId !== undefined ? { runId: body.runId } : { requestId: body.requestId! };
    ctx.body = { cancelled: await cancelRuns(deps, ctx.state.principal, target) };
  });

  router.post('/attach', authenticate(deps), async (ctx) => {
    const body = validateBody(attachBody, ctx);
    const afterId = readLastEventId(ctx.get('Last-Event-ID'));
    if (body.runId !== undefined) return attachRun(deps, ctx, body.runId, afterId);
    const convid = body.convid!;
    const run = await findStreamedRun(deps.redis, deps.config.queuePrefix, ctx.state.principal, convid);
    if (!run) throw new AppError('notFound', 'No streamed call of yours on this conversation in the last STREAM_REPLAY_SECONDS.');
    relayRun(deps, ctx, { runId: run.runId, convid, agentName: run.agentName }, afterId);
  });

  return router;
}

/**
 * Attach by runId: the caller's run, going on or ended. Its events after `afterId` come from its event
 * log while that is kept (a streamed, submitted or idempotent call; STREAM_REPLAY_SECONDS after its
 * end); an ended run whose log is gone is rebuilt from its execution record.
 */
async function attachRun(deps: WebDeps, ctx: Context, runId: string, afterId: number): Promise<void> {
  const run = await readRun(deps, ctx.state.principal, runId);
  if (!run) runNotFound();
  const logKept = (await deps.redis.exists(runEventsKey(shardsOf(deps.config).prefixOf(runId), runId))) === 1;
  if (run.status === 'ended' && !logKept) return streamFinishedRun(ctx, run, run.response!);
  relayRun(deps, ctx, { runId, convid: run.convid, agentName: run.agentName }, afterId);
}

/** The call an execAgent request makes: its caller, body, request id and Idempotency-Key. */
function execCall(ctx: Context, body: ExecAgentBody): ExecCall {
  const idempotencyKey = readIdempotencyKey(ctx.get(idempotencyHeader));
  return { caller: ctx.state.principal, sessionId: ctx.state.sessionId, body, requestId: ctx.state.requestId, requestIdGiven: ctx.state.requestIdGiven, idempotencyKey, onAdmitted: (headers) => ctx.set(headers) };
}

function runNotFound(): never {
  throw new AppError('notFound', 'No run of yours with this runId.');
}

function readLastEventId(header: string): number {
  if (header === '') return 0;
  if (!/^\d{1,15}$/.test(header)) throw invalidRequest({ 'Last-Event-ID': 'must be the id of an event this stream sent' });
  return Number(header);
}
