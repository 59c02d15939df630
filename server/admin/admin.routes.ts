import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Principal } from '../../shared/api.js';
import { AppError, invalidRequest } from '../../shared/errors.js';
import { findFailedExecutions } from '../../db/error-report.repository.js';
import { findUsageRecords, sumUsage, type ReportRange } from '../../db/usage.repository.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { validateBody } from '../validate-body.js';
import { reportBody, resolveReportRange } from './admin.schemas.js';

/** /api/admin/*: reports (DESIGN §7), for admins only (session or key). */
export function adminRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/admin' });
  const adminOnly = [authenticate(deps), requireAdmin()];

  router.post('/usageReport', ...adminOnly, async (ctx) => {
    const range = readRange(deps, validateBody(reportBody, ctx));
    const [totals, { rows, truncated }] = await Promise.all([sumUsage(deps.db, range), findUsageRecords(deps.db, range)]);
    ctx.body = { since: range.since, until: range.until, totals, rows, truncated };
  });

  router.post('/errorReport', ...adminOnly, async (ctx) => {
    const range = readRange(deps, validateBody(reportBody, ctx));
    const { rows, truncated } = await findFailedExecutions(deps.db, range);
    ctx.body = { since: range.since, until: range.until, rows, truncated };
  });

  return router;
}

function requireAdmin(): Middleware {
  return async (ctx, next) => {
    if ((ctx.state.principal as Principal).role !== 'admin') throw new AppError('forbidden', 'Reports are for admins.');
    await next();
  };
}

function readRange(deps: WebDeps, body: { since?: Date | undefined; until?: Date | undefined }): ReportRange {
  const range = resolveReportRange(body, deps.clock.now());
  if (!range) throw invalidRequest({ since: 'must not be after until' });
  return range;
}
