import Router from '@koa/router';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { validateBody } from '../validate-body.js';
import { execAgentBody } from './exec.schemas.js';
import { executeAgent } from './exec.service.js';
import { streamExecution } from './exec.stream.js';

export function execRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/exec' });
  router.post('/execAgent', authenticate(deps), async (ctx) => {
    const body = validateBody(execAgentBody, ctx);
    const call = { caller: ctx.state.principal, body, requestId: ctx.state.requestId };
    if (body.stream) return streamExecution(deps, ctx, call);
    const response = await executeAgent(deps, call);
    ctx.body = response;
  });
  return router;
}
