import Router from '@koa/router';
import { AppError } from '../../shared/errors.js';
import type { WebDeps } from '../deps.js';
import { cancelAnyRun } from '../exec/cancel.service.js';
import { authenticate } from '../middleware/authenticate.js';
import { requireRole } from '../middleware/require-role.js';
import { validateBody } from '../validate-body.js';
import { adminRunBody } from './run-detail.schemas.js';
import { readAdminRun } from './run-detail.service.js';

/** /api/admin/getRun and cancelRun: the console's Run page (DESIGN §18), for admins only. */
export function runDetailRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/admin' });
  const adminOnly = [authenticate(deps), requireRole(['admin'], 'Runs of every caller are for admins.')];

  router.post('/getRun', ...adminOnly, async (ctx) => {
    const { runId } = validateBody(adminRunBody, ctx);
    const run = await readAdminRun(deps, runId);
    if (!run) throw new AppError('notFound', `No run ${runId}.`);
    ctx.body = run;
  });

  router.post('/cancelRun', ...adminOnly, async (ctx) => {
    const { runId } = validateBody(adminRunBody, ctx);
    const cancelled = await cancelAnyRun(deps, runId);
    // Cancelling an ended run is harmless (false), as for its caller; an id that names no run is a 404.
    if (!cancelled && !(await readAdminRun(deps, runId))) throw new AppError('notFound', `No run ${runId}.`);
    ctx.body = { cancelled };
  });

  return router;
}
