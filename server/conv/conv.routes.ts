import Router from '@koa/router';
import { retentionDays } from '../../shared/retention.js';
import { AppError } from '../../shared/errors.js';
import { findOwnConversation, listConversations, setPinned, type ConversationSummary } from '../../db/retention.repository.js';
import { findTurns } from '../../db/run-records.repository.js';
import type { WebDeps } from '../deps.js';
import { authenticate } from '../middleware/authenticate.js';
import { validateBody } from '../validate-body.js';
import { getBody, listBody, pinBody } from './conv.schemas.js';

const dayMs = 86_400_000;

/** /api/conv/*: the caller's conversations (DESIGN §6). */
export function convRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/conv' });

  router.post('/pin', authenticate(deps), async (ctx) => {
    const { convid, pinned } = validateBody(pinBody, ctx);
    if (!(await setPinned(deps.db, ctx.state.principal, convid, pinned, deps.clock.now()))) {
      throw new AppError('notFound', 'No conversation of yours with this convid (it may have expired).');
    }
    ctx.body = { convid, pinned };
  });

  router.post('/get', authenticate(deps), async (ctx) => {
    const body = validateBody(getBody, ctx);
    const conversation = await findOwnConversation(deps.db, ctx.state.principal, body.convid, deps.clock.now());
    if (!conversation) throw new AppError('notFound', 'No conversation of yours with this convid (it may have expired).');
    const page = { limit: body.limit ?? 100, ...(body.before ? { before: new Date(body.before) } : {}) };
    const turns = await findTurns(deps.db, body.convid, page);
    ctx.body = {
      convid: conversation.convid,
      pinned: conversation.pinned,
      expiresAt: expiresAt(conversation),
      pausedBy: conversation.pausedBy,
      ...(conversation.askInput ? { askInput: conversation.askInput } : {}),
      turns: turns.map((turn) => ({
        runId: turn.runId,
        agentName: turn.agentName,
        query: turn.query,
        resultCode: turn.response.resultCode,
        output: turn.response.output ?? [],
        at: turn.startedAt.toISOString(),
      })),
    };
  });

  router.post('/list', authenticate(deps), async (ctx) => {
    const body = validateBody(listBody, ctx);
    const page = { limit: body.limit ?? 50, ...(body.before ? { before: new Date(body.before) } : {}) };
    const rows = await listConversations(deps.db, ctx.state.principal, deps.clock.now(), page);
    ctx.body = { conversations: rows.map(present) };
  });

  return router;
}

/** When an unpinned conversation expires if unused until then; null when pinned. */
function expiresAt(row: { pinned: boolean; plan: string; lastUsedAt: Date }): string | null {
  const plan = row.plan === 'paid' ? 'paid' : 'free';
  return row.pinned ? null : new Date(row.lastUsedAt.getTime() + retentionDays[plan] * dayMs).toISOString();
}

function present(row: ConversationSummary) {
  const plan = row.plan === 'paid' ? 'paid' : 'free';
  return {
    convid: row.convid,
    pinned: row.pinned,
    plan,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt.toISOString(),
    expiresAt: expiresAt(row),
    pausedBy: row.pausedBy,
    title: row.title,
    lastQuery: row.lastQuery,
    lastAgentName: row.lastAgentName,
  };
}
