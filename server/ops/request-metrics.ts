import type { Context, Middleware } from 'koa';
import type { Logger } from '../../shared/logger.js';
import type { WebMetrics } from './metrics.js';

/**
 * Times every request into `agentexec_http_request_duration_seconds` and writes a compact access line
 * at debug level (method, route, status, ms, request id; never headers or bodies). Installed right
 * after the request id and outside the error renderer, so it sees the status actually answered. The
 * route is the matched route pattern, never the raw path, so label values stay few.
 */
export function measureRequests(metrics: WebMetrics, logger: Logger): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      const route = matchedRoute(ctx);
      const status = ctx.status;
      metrics.httpDuration.observe({ method: ctx.method, route, status: String(status) }, ms / 1000);
      const runId = ctx.response.get('X-Run-Id') || undefined;
      logger.debug({ requestId: ctx.state.requestId, runId, method: ctx.method, route, status, ms: Math.round(ms) }, 'request');
    }
  };
}

/** The @koa/router pattern that handled the request, or `unmatched`. */
function matchedRoute(ctx: Context): string {
  const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof route === 'string' ? route : 'unmatched';
}
