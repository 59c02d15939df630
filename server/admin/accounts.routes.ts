import Router from '@koa/router';
import type { z } from 'zod';
import { serviceAccountsChannel } from '../../shared/channels.js';
import { AppError, invalidRequest } from '../../shared/errors.js';
import type { ServiceAccount, User } from '../../db/schema.js';
import { listServiceAccounts } from '../../db/service-accounts.repository.js';
import { listUsers } from '../../db/users.repository.js';
import { changeServiceAccountRole, changeUserRole, createServiceAccount, createUser, removeServiceAccount, rotateServiceAccountKey, type AccountChanges } from '../../runs/accounts.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { requireRole } from '../middleware/require-role.js';
import { validateBody } from '../validate-body.js';
import { emptyBody } from '../auth/auth.schemas.js';
import { createServiceAccountBody, createUserBody, serviceAccountBody, setRoleBody, type accountListAnswer, type createdUserAnswer, type serviceAccountKeyAnswer } from './accounts.schemas.js';

/**
 * /api/admin/listAccounts, createServiceAccount, rotateKey, deleteServiceAccount, createUser, setRole:
 * the console's Accounts (DESIGN §18), for admins only. The same functions as the command line
 * (runs/accounts.ts); a key is in the answer that made it and nowhere else.
 */
export function accountsRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/admin' });
  const adminOnly = [authenticate(deps), requireRole(['admin'], 'Accounts are for admins.')];
  // Published on the web process's own connection: a failure is a 503, the change having been made
  // (the other processes then trust a cached key only up to the cache's maximum age).
  const changes: AccountChanges = {
    db: deps.db,
    announce: async (accountId) => void (await deps.redis.publish(serviceAccountsChannel(deps.config.queuePrefix), accountId)),
  };

  router.post('/listAccounts', ...adminOnly, async (ctx) => {
    validateBody(emptyBody, ctx);
    const [serviceAccounts, users] = await Promise.all([listServiceAccounts(deps.db), listUsers(deps.db)]);
    const answer: z.input<typeof accountListAnswer> = { serviceAccounts: serviceAccounts.map(serviceAccountView), users: users.map(userView) };
    ctx.body = answer;
  });

  router.post('/createServiceAccount', ...adminOnly, async (ctx) => {
    const { name, role = 'user', plan = 'free' } = validateBody(createServiceAccountBody, ctx);
    const created = await createServiceAccount(deps.db, { name, role, plan });
    if (!created) throw invalidRequest({ name: 'is the name of another service account' });
    ctx.body = keyAnswer(created.account, created.key);
  });

  router.post('/rotateKey', ...adminOnly, async (ctx) => {
    const { name } = validateBody(serviceAccountBody, ctx);
    const rotated = await rotateServiceAccountKey(changes, name);
    if (!rotated) throw noServiceAccount(name);
    ctx.body = keyAnswer(rotated.value.account, rotated.value.key);
  });

  router.post('/deleteServiceAccount', ...adminOnly, async (ctx) => {
    const { name } = validateBody(serviceAccountBody, ctx);
    if (!(await removeServiceAccount(changes, name))) throw noServiceAccount(name);
    ctx.body = { name, deleted: true };
  });

  router.post('/createUser', ...adminOnly, async (ctx) => {
    const { email, role = 'user', plan = 'free', callName } = validateBody(createUserBody, ctx);
    const user = await createUser(deps.db, { email, role, plan, ...(callName ? { callName } : {}) });
    if (!user) throw invalidRequest({ email: 'is the address of another user' });
    ctx.body = userView(user);
  });

  router.post('/setRole', ...adminOnly, async (ctx) => {
    const { name, email, role } = validateBody(setRoleBody, ctx);
    if (name !== undefined) {
      const changed = await changeServiceAccountRole(changes, name, role);
      if (!changed) throw noServiceAccount(name);
      ctx.body = { kind: 'serviceAccount', id: changed.value.id, name: changed.value.name, role: changed.value.role };
      return;
    }
    const user = await changeUserRole(deps.db, email!, role);
    if (!user) throw new AppError('notFound', `No user with the email ${email}.`);
    ctx.body = { kind: 'user', id: user.id, email: user.email, role: user.role };
  });

  return router;
}

function noServiceAccount(name: string): AppError {
  return new AppError('notFound', `No service account named ${name}.`);
}

type ServiceAccountRow = Pick<ServiceAccount, 'id' | 'name' | 'role' | 'plan' | 'created_at' | 'key_rotated_at'>;

function serviceAccountView(account: ServiceAccountRow): z.input<typeof accountListAnswer>['serviceAccounts'][number] {
  return { id: account.id, name: account.name, role: account.role, plan: account.plan, createdAt: account.created_at.toISOString(), keyRotatedAt: account.key_rotated_at.toISOString() };
}

function keyAnswer(account: ServiceAccountRow, key: string): z.input<typeof serviceAccountKeyAnswer> {
  return { ...serviceAccountView(account), key };
}

function userView(user: Pick<User, 'id' | 'email' | 'call_name' | 'role' | 'plan' | 'created_at'>): z.input<typeof createdUserAnswer> {
  return { id: user.id, email: user.email, callName: user.call_name, role: user.role, plan: user.plan, createdAt: user.created_at.toISOString() };
}
