import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import Router from '@koa/router';
import { AppError } from '../shared/errors.js';
import type { WebDeps } from './deps.js';
import { authRoutes } from './auth/auth.routes.js';
import { convRoutes } from './conv/conv.routes.js';
import { execRoutes } from './exec/exec.routes.js';
import { renderErrors } from './middleware/errors.js';
import { requireJson } from './middleware/json-only.js';
import { requestId } from './middleware/request-id.js';
import { userRoutes } from './user/user.routes.js';

/** The Koa application: middleware in order, then the routes of each area. */
export function createApp(deps: WebDeps): Koa {
  // Behind a proxy (TRUST_PROXY=true) the client is the last X-Forwarded-For entry: the one our proxy added.
  const app = new Koa({ proxy: deps.config.trustProxy, maxIpsCount: 1 });
  app.silent = true;
  app.use(requestId());
  app.use(renderErrors(deps.logger));
  app.use(requireJson());
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: String(deps.config.bodyLimitBytes), strict: true }));

  const health = new Router();
  health.get('/healthz', (ctx) => {
    ctx.body = { ok: true };
  });
  for (const router of [health, authRoutes(deps), userRoutes(deps), execRoutes(deps), convRoutes(deps)]) app.use(router.routes()).use(router.allowedMethods({ throw: true }));
  app.use(() => {
    throw new AppError('notFound', 'No such endpoint.');
  });
  return app;
}
