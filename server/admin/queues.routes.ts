import Router from '@koa/router';
import { emptyBody } from '../auth/auth.schemas.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { requireRole } from '../middleware/require-role.js';
import { validateBody } from '../validate-body.js';
import { readQueues, setIntakePaused } from './queues.service.js';

/** /api/admin/getQueues, pauseQueues and resumeQueues: the console's Queues and workers page (DESIGN §18), for admins only. */
export function queuesRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/admin' });
  const adminOnly = [authenticate(deps), requireRole(['admin'], 'Queues and workers are for admins.')];

  router.post('/getQueues', ...adminOnly, async (ctx) => {
    validateBody(emptyBody, ctx);
    ctx.body = await readQueues(deps);
  });

  router.post('/pauseQueues', ...adminOnly, async (ctx) => {
    validateBody(emptyBody, ctx);
    deps.logger.warn({ requestId: ctx.state.requestId, by: ctx.state.principal.id }, 'run intake paused by an admin');
    ctx.body = await setIntakePaused(deps, true);
  });

  router.post('/resumeQueues', ...adminOnly, async (ctx) => {
    validateBody(emptyBody, ctx);
    deps.logger.info({ requestId: ctx.state.requestId, by: ctx.state.principal.id }, 'run intake resumed by an admin');
    ctx.body = await setIntakePaused(deps, false);
  });

  return router;
}
