import type Router from '@koa/router';
import Koa from 'koa';
import { AppError } from '../shared/errors.js';
import type { WebDeps } from './deps.js';
import { adminRoutes } from './admin/admin.routes.js';
import { limitsRoutes } from './admin/limits.routes.js';
import { scheduleRoutes } from './admin/schedules.routes.js';
import { runListRoutes } from './admin/run-list.routes.js';
import { accountsRoutes } from './admin/accounts.routes.js';
import { webhookLogRoutes } from './admin/webhook-log.routes.js';
import { runDetailRoutes } from './admin/run-detail.routes.js';
import { queuesRoutes } from './admin/queues.routes.js';
import { queueDashboard } from './admin/queue-dashboard.js';
import { authRoutes } from './auth/auth.routes.js';
import { convRoutes } from './conv/conv.routes.js';
import { devRoutes } from './dev/dev.routes.js';
import { execRoutes } from './exec/exec.routes.js';
import { renderErrors } from './middleware/errors.js';
import { readJsonBody } from './middleware/json-body.js';
import { requireJson } from './middleware/json-only.js';
import { requestId } from './middleware/request-id.js';
import { openApiRoutes } from './openapi/openapi.routes.js';
import { opsRoutes } from './ops/ops.routes.js';
import { measureRequests } from './ops/request-metrics.js';
import { recordUsage } from './usage/usage-recorder.js';
import { userRoutes } from './user/user.routes.js';
import { serveWebApp } from './web-app/web-app.js';
import { traceRequests } from './middleware/request-span.js';
import { tracingEnabled } from '../shared/tracing-enabled.js';

/** The routers of each area, in the order the app tries them (exported for the test that every route is documented). */
export function createRouters(deps: WebDeps): Router[] {
  return [
    opsRoutes(deps),
    authRoutes(deps),
    userRoutes(deps),
    execRoutes(deps),
    convRoutes(deps),
    devRoutes(deps),
    adminRoutes(deps),
    limitsRoutes(deps),
    scheduleRoutes(deps),
    runListRoutes(deps),
    accountsRoutes(deps),
    webhookLogRoutes(deps),
    runDetailRoutes(deps),
    queuesRoutes(deps),
    openApiRoutes(deps),
  ];
}

/** The Koa application: middleware in order, then the routes of each area. */
export function createApp(deps: WebDeps): Koa {
  // Behind a proxy (TRUST_PROXY=true) the client is the last X-Forwarded-For entry: the one our proxy added.
  const app = new Koa({ proxy: deps.config.trustProxy, maxIpsCount: 1 });
  app.silent = true;
  if (tracingEnabled) app.use(traceRequests());
  app.use(requestId());
  app.use(measureRequests(deps.metrics, deps.logger));
  app.use(renderErrors(deps.logger));
  app.use(recordUsage(deps.usage, deps.clock));
  app.use(requireJson());
  app.use(readJsonBody(deps.config.bodyLimitBytes));
  app.use(queueDashboard(deps));

  for (const router of createRouters(deps)) app.use(router.routes()).use(router.allowedMethods({ throw: true }));
  app.use(serveWebApp({ defaultAgent: deps.config.defaultAgent, logger: deps.logger }));
  app.use(() => {
    throw new AppError('notFound', 'No such endpoint.');
  });
  return app;
}
