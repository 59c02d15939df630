import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { requireRole } from '../middleware/require-role.js';
import { validateBody } from '../validate-body.js';
import { executeAgent } from '../exec/exec.service.js';
import { streamExecution, streamFinishedRun } from '../exec/exec.stream.js';
import { recordUsageOf } from '../usage/call-usage.js';
import { draftBody, listAgentsBody, saveDraftBody, validateDraftBody } from './dev.schemas.js';
import { describeDraft, listAgentsAndDrafts, loadDraft, publishDraft, saveDraft } from './drafts.service.js';
import { prepareValidation } from './validation.service.js';

/** /api/dev/*: drafts and their validation (DESIGN §5), for developers and admins (session or key). */
export function devRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/dev' });
  const developersOnly = [authenticate(deps), requireRole(['developer', 'admin'], 'Drafts are for developers and admins.')];

  router.post('/saveDraft', ...developersOnly, async (ctx) => {
    ctx.body = await saveDraft(deps, ctx.state.principal, validateBody(saveDraftBody, ctx));
  });

  router.post('/getDraft', ...developersOnly, async (ctx) => {
    const { draftid } = validateBody(draftBody, ctx);
    ctx.body = describeDraft(await loadDraft(deps, draftid));
  });

  router.post('/publishDraft', ...developersOnly, async (ctx) => {
    const { draftid } = validateBody(draftBody, ctx);
    ctx.body = await publishDraft(deps, draftid);
  });

  router.post('/listAgents', ...developersOnly, async (ctx) => {
    validateBody(listAgentsBody, ctx);
    ctx.body = await listAgentsAndDrafts(deps);
  });

  router.post('/validateDraftStream', ...developersOnly, async (ctx) => {
    const body = validateBody(validateDraftBody, ctx);
    const call = { caller: ctx.state.principal, sessionId: ctx.state.sessionId, body, requestId: ctx.state.requestId, requestIdGiven: ctx.state.requestIdGiven };
    const validation = await prepareValidation(deps, call);
    recordUsageOf(ctx, { agentName: validation.agentName });
    if (validation.kind === 'run') {
      if (body.stream) return streamExecution(deps, ctx, validation.call);
      ctx.body = await executeAgent(deps, validation.call);
      return;
    }
    const { response } = validation;
    recordUsageOf(ctx, { resultCode: response.resultCode });
    if (body.stream) return streamFinishedRun(ctx, { runId: randomUUID(), convid: response.convid, agentName: response.agentName }, response);
    ctx.body = response;
  });

  return router;
}
