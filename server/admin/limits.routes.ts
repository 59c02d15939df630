import { shardsOf } from '../../shared/shards.js';
import Router from '@koa/router';
import { callerName } from '../../shared/channels.js';
import { findAccountLabels } from '../../db/caller-limits.repository.js';
import { accountLabel, findNamedAccount, limitsView, readCallerLimits, setCallerLimits } from '../../runs/caller-limits.js';
import { readCallerLoad } from '../../runs/run-slots.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { requireRole } from '../middleware/require-role.js';
import { validateBody } from '../validate-body.js';
import { emptyBody } from '../auth/auth.schemas.js';
import { getLimitsBody, setLimitsBody } from './admin.schemas.js';

/** Callers callerLoad shows. */
const callerLoadTop = 20;

/** /api/admin/setLimits, getLimits and callerLoad: limits per caller and who is using them (DESIGN §16), for admins only. */
export function limitsRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/admin' });
  const adminOnly = [authenticate(deps), requireRole(['admin'], 'Limits per caller are for admins.')];

  router.post('/setLimits', ...adminOnly, async (ctx) => {
    const { name, email, ...change } = validateBody(setLimitsBody, ctx);
    const account = await findNamedAccount(deps.db, name !== undefined ? { name } : { email: email! });
    const effective = await setCallerLimits(deps.db, deps.config, account, change);
    // This process sees the change at once; the others within the cache's maximum age.
    deps.callerLimits.drop(account);
    ctx.body = limitsView(account, effective);
  });

  router.post('/getLimits', ...adminOnly, async (ctx) => {
    const { name, email } = validateBody(getLimitsBody, ctx);
    const account = await findNamedAccount(deps.db, name !== undefined ? { name } : { email: email! });
    ctx.body = limitsView(account, await readCallerLimits(deps.db, deps.config, account));
  });

  router.post('/callerLoad', ...adminOnly, async (ctx) => {
    validateBody(emptyBody, ctx);
    const loads = await readCallerLoad(deps.redis, shardsOf(deps.config), callerLoadTop);
    const labels = await findAccountLabels(deps.db, loads.map((load) => load.caller));
    ctx.body = {
      callers: loads.map(({ caller, inFlight, refused }) => ({
        kind: caller.kind,
        id: caller.id,
        ...accountLabel(caller.kind, labels.get(callerName(caller))),
        inFlight,
        refusedLastMinute: refused,
      })),
    };
  });

  return router;
}
