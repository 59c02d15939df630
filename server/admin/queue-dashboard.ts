import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { Context, Middleware, Next } from 'koa';
import { AppError } from '../../shared/errors.js';
import type { WebDeps } from '../deps.js';
import { readSessionCookie } from '../auth/session-cookie.js';
import { authenticate, identifySession } from '../middleware/authenticate.js';
import { requireRole } from '../middleware/require-role.js';

/** Where the dashboard is served (DESIGN §2). */
export const queueDashboardPath = '/admin/queues';

/** The only methods the dashboard answers: they read, never change. */
const readMethods = new Set(['GET', 'HEAD']);

/**
 * The BullMQ dashboard (bull-board) of the runs, mail, maintenance and schedules queues at /admin/queues, for
 * admins only: an admin bearer key or an admin session; no credential → 401, another role → 403.
 * It only shows: a method other than GET or HEAD is refused here (403) before bull-board sees it, and
 * the queues are given to bull-board in its read-only mode too (no retry, clean, pause buttons).
 */
export function queueDashboard(deps: WebDeps): Middleware {
  const dashboard = inOrder([
    identifyCaller(deps),
    requireRole(['admin'], 'The queue dashboard is for admins.'),
    refuseChanges(),
    bullBoard(deps),
  ]);
  return async (ctx, next) => {
    if (!isDashboardPath(ctx.path)) return next();
    try {
      await dashboard(ctx, next);
    } finally {
      labelRoute(ctx);
    }
  };
}

/**
 * bull-board's router names its routes without the path it is mounted on (`/api/queues`); the request
 * metrics and the access log label a request by that name, so it gets the mount path back in front.
 */
function labelRoute(ctx: Context): void {
  const state = ctx as { _matchedRoute?: unknown };
  const route = state._matchedRoute;
  if (typeof route === 'string' && !route.startsWith(queueDashboardPath)) state._matchedRoute = `${queueDashboardPath}${route === '/' ? '' : route}`;
}

function isDashboardPath(path: string): boolean {
  return path === queueDashboardPath || path.startsWith(`${queueDashboardPath}/`);
}

/**
 * authenticate(), except that a GET or HEAD with a session cookie is not held to the same-origin check:
 * opening the dashboard in the address bar is a top-level navigation, which sends `Sec-Fetch-Site: none`
 * and no Origin, and would be refused. A forged cross-site GET gains nothing, since every method that
 * could change something is refused below. The session itself is checked as authenticate() checks it.
 */
function identifyCaller(deps: WebDeps): Middleware {
  const strict = authenticate(deps);
  return async (ctx, next) => {
    const cookie = readSessionCookie(ctx, deps.config);
    if (!cookie || !readMethods.has(ctx.method) || ctx.get('Authorization')) return strict(ctx, next);
    await identifySession(deps, ctx, cookie);
    await next();
  };
}

/** Whatever bull-board's own read-only checks cover, a method that could change something never reaches it. */
function refuseChanges(): Middleware {
  return async (ctx, next) => {
    if (!readMethods.has(ctx.method)) throw new AppError('forbidden', 'The queue dashboard is read-only.');
    await next();
  };
}

function bullBoard(deps: WebDeps): Middleware {
  const serverAdapter = new KoaAdapter().setBasePath(queueDashboardPath);
  createBullBoard({
    queues: [
      // With several shards, each shard's run queue is shown as `shard<n>-runs` (bull-board tells queues by name).
      ...deps.runQueues.all.map((queue, shard, all) => new BullMQAdapter(queue, { readOnlyMode: true, ...(all.length > 1 ? { prefix: `shard${shard}-` } : {}) })),
      ...[deps.mailQueue, deps.maintenanceQueue, deps.scheduleQueue].map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    ],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'agentexec queues' } },
  });
  // bull-board would answer its errors itself (500 with the raw message). Rethrown, they reach the
  // app's error middleware like any other: the JSON body of DESIGN §2, 503 when Redis is down, and
  // the 404 of a path bull-board does not know.
  serverAdapter.setErrorHandler((err) => {
    throw err;
  });
  return serverAdapter.registerPlugin();
}

/** Runs `steps` one after the other, as Koa runs the app's middleware; the last one's next is the app's. */
function inOrder(steps: Middleware[]): Middleware {
  return (ctx, next) => steps.reduceRight<Next>((rest, step) => () => step(ctx, rest), next)();
}
