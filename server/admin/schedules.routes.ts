import Router from '@koa/router';
import { deleteSchedule, readSchedules, setSchedule } from '../../runs/schedules.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { requireRole } from '../middleware/require-role.js';
import { validateBody } from '../validate-body.js';
import { emptyBody } from '../auth/auth.schemas.js';
import { scheduleNameBody, setScheduleBody } from './schedules.schemas.js';

/** /api/admin/setSchedule, listSchedules and deleteSchedule (DESIGN §19), for admins only. */
export function scheduleRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/admin' });
  const adminOnly = [authenticate(deps), requireRole(['admin'], 'Schedules are for admins.')];
  const scheduleDeps = { db: deps.db, queue: deps.scheduleQueue };

  router.post('/setSchedule', ...adminOnly, async (ctx) => {
    ctx.body = await setSchedule(scheduleDeps, validateBody(setScheduleBody, ctx));
  });

  router.post('/listSchedules', ...adminOnly, async (ctx) => {
    validateBody(emptyBody, ctx);
    ctx.body = { schedules: await readSchedules(scheduleDeps) };
  });

  router.post('/deleteSchedule', ...adminOnly, async (ctx) => {
    const { name } = validateBody(scheduleNameBody, ctx);
    await deleteSchedule(scheduleDeps, name);
    ctx.body = { name };
  });

  return router;
}
