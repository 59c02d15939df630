import Router from '@koa/router';
import type { WebDeps } from '../deps.js';
import { checkReadiness } from './readiness.js';

/**
 * Operations endpoints, unauthenticated (DESIGN §2, §7): `/healthz` (liveness: the process answers,
 * no dependency checked), `/readyz` (PostgreSQL and Redis reachable: 200, else 503) and `/metrics`
 * (Prometheus text, for a scraper on the internal network; no secrets in it).
 */
export function opsRoutes(deps: WebDeps): Router {
  const router = new Router();

  router.get('/healthz', (ctx) => {
    ctx.body = { ok: true };
  });

  router.get('/readyz', async (ctx) => {
    const readiness = await checkReadiness(deps);
    ctx.status = readiness.ok ? 200 : 503;
    ctx.body = readiness;
  });

  router.get('/metrics', async (ctx) => {
    const { registry } = deps.metrics;
    const text = await registry.metrics();
    ctx.set('Content-Type', registry.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = text;
  });

  return router;
}
