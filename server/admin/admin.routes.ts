import Router from '@koa/router';
import { AppError, invalidRequest } from '../../shared/errors.js';
import { findFailedExecutions, sumFailedExecutions } from '../../db/error-report.repository.js';
import { listAllSecretNames } from '../../db/agent-secrets.repository.js';
import { findUsageRecords, sumUsage, type ReportRange } from '../../db/usage.repository.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { requireRole } from '../middleware/require-role.js';
import { validateBody } from '../validate-body.js';
import { emptyBody } from '../auth/auth.schemas.js';
import { controlChannel } from '../../shared/channels.js';
import { secretSetFor } from '../../shared/agent-secrets.js';
import { agentSecretKeys, removeAgentSecret, secretsChangedMessage, setAgentSecret, type SecretChanges } from '../../runs/agent-secrets.js';
import { deleteSecretBody, listSecretsBody, reportBody, resolveReportRange, setSecretBody } from './admin.schemas.js';

/** /api/admin/*: reports (DESIGN §7) and agent secrets (DESIGN §13; never a value in an answer), for admins only (session or key). */
export function adminRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/admin' });
  const adminOnly = [authenticate(deps), requireRole(['admin'], 'Reports are for admins.')];

  router.post('/usageReport', ...adminOnly, async (ctx) => {
    const range = readRange(deps, validateBody(reportBody, ctx));
    const [totals, { rows, truncated }] = await Promise.all([sumUsage(deps.db, range), findUsageRecords(deps.db, range)]);
    ctx.body = { since: range.since, until: range.until, totals, rows, truncated };
  });

  router.post('/errorReport', ...adminOnly, async (ctx) => {
    const range = readRange(deps, validateBody(reportBody, ctx));
    const [totals, { rows, truncated }] = await Promise.all([sumFailedExecutions(deps.db, range), findFailedExecutions(deps.db, range)]);
    ctx.body = { since: range.since, until: range.until, totals, rows, truncated };
  });

  const secretsOnly = [authenticate(deps), requireRole(['admin'], 'Agent secrets are for admins.')];
  const changes: SecretChanges = {
    db: deps.db,
    box: deps.box,
    announce: async (agentName) => void (await deps.redis.publish(controlChannel(deps.config.queuePrefix), secretsChangedMessage(agentName))),
  };

  router.post('/setSecret', ...secretsOnly, async (ctx) => {
    const { agentName, key, value, forDrafts } = validateBody(setSecretBody, ctx);
    await setAgentSecret(changes, agentName, secretSetFor(forDrafts), key, value);
    ctx.body = { agentName, key };
  });

  router.post('/deleteSecret', ...secretsOnly, async (ctx) => {
    const { agentName, key, forDrafts } = validateBody(deleteSecretBody, ctx);
    if (!(await removeAgentSecret(changes, agentName, secretSetFor(forDrafts), key))) {
      throw new AppError('notFound', `${agentName} has no secret ${key}${forDrafts ? ' for drafts' : ''}.`);
    }
    ctx.body = { agentName, key };
  });

  router.post('/listSecrets', ...secretsOnly, async (ctx) => {
    const { agentName, forDrafts } = validateBody(listSecretsBody, ctx);
    ctx.body = { agentName, keys: await agentSecretKeys(deps.db, agentName, secretSetFor(forDrafts)) };
  });

  router.post('/listAllSecrets', ...secretsOnly, async (ctx) => {
    validateBody(emptyBody, ctx);
    const names = await listAllSecretNames(deps.db);
    ctx.body = { secrets: names.map((name) => ({ ...name, updatedAt: name.updatedAt.toISOString() })) };
  });

  return router;
}

function readRange(deps: WebDeps, body: { since?: Date | undefined; until?: Date | undefined }): ReportRange {
  const range = resolveReportRange(body, deps.clock.now());
  if (!range) throw invalidRequest({ since: 'must not be after until' });
  return range;
}
