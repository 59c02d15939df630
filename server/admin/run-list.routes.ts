import Router from '@koa/router';
import type { z } from 'zod';
import { callerName } from '../../shared/channels.js';
import { findAccountLabels } from '../../db/caller-limits.repository.js';
import { findRunPage, type RunListRow } from '../../db/run-list.repository.js';
import { accountLabel } from '../../runs/caller-limits.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { requireRole } from '../middleware/require-role.js';
import { validateBody } from '../validate-body.js';
import { decodeRunCursor, encodeRunCursor } from './run-cursor.js';
import { defaultRunPageSize, listRunsBody, type runListAnswer } from './run-list.schemas.js';

/** /api/admin/listRuns: the console's list of ended runs (DESIGN §18), for admins only. */
export function runListRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/admin' });
  const adminOnly = [authenticate(deps), requireRole(['admin'], 'The list of runs is for admins.')];

  router.post('/listRuns', ...adminOnly, async (ctx) => {
    const { cursor, limit = defaultRunPageSize, ...filter } = validateBody(listRunsBody, ctx);
    // One more than the page, to know whether there is a next one.
    const rows = await findRunPage(deps.db, filter, { limit: limit + 1, after: cursor === undefined ? undefined : decodeRunCursor(cursor) });
    const page = rows.slice(0, limit);
    const labels = await findAccountLabels(
      deps.db,
      page.map((row) => ({ kind: row.principalKind, id: row.principalId })),
    );
    const last = page.at(-1);
    const answer: z.input<typeof runListAnswer> = {
      runs: page.map((row) => runEntry(row, labels.get(callerName({ kind: row.principalKind, id: row.principalId })))),
      nextCursor: rows.length > limit && last ? encodeRunCursor({ startedAt: last.position, id: last.runId }) : null,
    };
    ctx.body = answer;
  });

  return router;
}

function runEntry(row: RunListRow, label: string | undefined): z.input<typeof runListAnswer>['runs'][number] {
  return {
    runId: row.runId,
    convid: row.convid,
    agentName: row.agentName,
    agentVersion: row.agentVersion,
    draftId: row.draftId,
    account: { kind: row.principalKind, id: row.principalId, ...accountLabel(row.principalKind, label) },
    requestId: row.requestId,
    resultCode: row.resultCode,
    errorMessage: row.errorMessage,
    background: row.background,
    submittedAt: row.submittedAt?.toISOString() ?? null,
    startedAt: row.startedAt.toISOString(),
    finishedAt: row.finishedAt.toISOString(),
    durationMs: row.durationMs,
  };
}
