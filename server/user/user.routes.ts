import Router from '@koa/router';
import { AppError } from '../../shared/errors.js';
import { findServiceAccountById } from '../../db/service-accounts.repository.js';
import { findUserById } from '../../db/users.repository.js';
import { listPublishedAgents } from '../../db/agents.repository.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { validateBody } from '../validate-body.js';
import { emptyBody } from '../auth/auth.schemas.js';

/** /api/user/*: the caller's own profile, and the agents it can run. */
export function userRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/user' });

  router.post('/getUserProfile', authenticate(deps), async (ctx) => {
    validateBody(emptyBody, ctx);
    const { kind, id } = ctx.state.principal;
    if (kind === 'user') {
      const user = await findUserById(deps.db, id);
      if (!user) throw new AppError('unauthenticated', 'Your account no longer exists.');
      ctx.body = { kind, id, callName: user.call_name, role: user.role, plan: user.plan, email: user.email };
    } else {
      const account = await findServiceAccountById(deps.db, id);
      if (!account) throw new AppError('unauthenticated', 'The service account no longer exists.');
      ctx.body = { kind, id, callName: account.name, role: account.role, plan: account.plan };
    }
  });

  router.post('/listAgents', authenticate(deps), async (ctx) => {
    validateBody(emptyBody, ctx);
    const agents = await listPublishedAgents(deps.db);
    ctx.body = { agents: agents.map((agent) => ({ agentName: agent.name, version: agent.latest_version, publishedAt: agent.updated_at.toISOString() })) };
  });

  return router;
}
