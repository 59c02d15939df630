import { sql, type Expression, type SqlBool } from 'kysely';
import type { Principal } from '../shared/api.js';
import { retentionDays } from '../shared/retention.js';
import { lockTimeoutCondition, lockTimeoutOf, type Db } from './database.js';

const dayMs = 86_400_000;

/** SQL for "this conversation has expired at `now`": not pinned, and unused for its plan's retention period. */
function expiredAt(now: Date): Expression<SqlBool> {
  const freeCutoff = new Date(now.getTime() - retentionDays.free * dayMs);
  const paidCutoff = new Date(now.getTime() - retentionDays.paid * dayMs);
  return sql<SqlBool>`(not pinned and ((plan = 'free' and last_used_at < ${freeCutoff}) or (plan = 'paid' and last_used_at < ${paidCutoff})))`;
}

export interface ConversationSummary {
  convid: string;
  plan: string;
  pinned: boolean;
  createdAt: Date;
  lastUsedAt: Date;
  /** The agent a pause waits for an answer to, if any. */
  pausedBy: string | null;
  /** The conversation's first query, if any. */
  title: string | null;
  /** The last prompt history entry's query and agent, if any. */
  lastQuery: string | null;
  lastAgentName: string | null;
}

/** The caller's live conversations, most recently used first, up to `limit`, used before `before` when given. */
export async function listConversations(db: Db, owner: Pick<Principal, 'kind' | 'id'>, now: Date, page: { limit: number; before?: Date }): Promise<ConversationSummary[]> {
  let query = db
    .selectFrom('conversations as c')
    .leftJoin('paused_asks as p', 'p.convid', 'c.id')
    .select([
      'c.id as convid',
      'c.plan',
      'c.pinned',
      'c.created_at as createdAt',
      'c.last_used_at as lastUsedAt',
      'p.agent_name as pausedBy',
      // The first query: from the turns (executions by convid and start), else from the kept history.
      sql<string | null>`coalesce(
        (select e.query from executions e where e.convid = c.id and e.query is not null order by e.started_at limit 1),
        (select h ->> 'query' from jsonb_array_elements(c.history) h where h ->> 'query' is not null limit 1))`.as('title'),
      sql<string | null>`c.history -> -1 ->> 'query'`.as('lastQuery'),
      sql<string | null>`c.history -> -1 ->> 'agentName'`.as('lastAgentName'),
    ])
    .where('c.owner_kind', '=', owner.kind)
    .where('c.owner_id', '=', owner.id)
    .where(sql<SqlBool>`not ${expiredAt(now)}`)
    .orderBy('c.last_used_at', 'desc')
    .limit(page.limit);
  if (page.before) query = query.where('c.last_used_at', '<', page.before);
  return query.execute();
}

/** One live conversation of the caller, with the ask it is paused at; undefined for another caller's, an unknown or an expired one. */
export async function findOwnConversation(db: Db, owner: Pick<Principal, 'kind' | 'id'>, convid: string, now: Date) {
  return db
    .selectFrom('conversations as c')
    .leftJoin('paused_asks as p', 'p.convid', 'c.id')
    .select(['c.id as convid', 'c.plan', 'c.pinned', 'c.last_used_at as lastUsedAt', 'p.agent_name as pausedBy', 'p.ask as askInput'])
    .where('c.id', '=', convid)
    .where('c.owner_kind', '=', owner.kind)
    .where('c.owner_id', '=', owner.id)
    .where(sql<SqlBool>`not ${expiredAt(now)}`)
    .executeTakeFirst();
}

/**
 * Pins or unpins the caller's conversation if it is live; returns false when it is unknown, not the
 * caller's, or expired. Unpinning counts as a use, so the conversation has its full period again.
 */
export async function setPinned(db: Db, owner: Pick<Principal, 'kind' | 'id'>, convid: string, pinned: boolean, now: Date): Promise<boolean> {
  const row = await db
    .updateTable('conversations')
    .set(pinned ? { pinned } : { pinned, last_used_at: now })
    .where('id', '=', convid)
    .where('owner_kind', '=', owner.kind)
    .where('owner_id', '=', owner.id)
    .where(sql<SqlBool>`not ${expiredAt(now)}`)
    .where(lockTimeoutCondition(lockTimeoutOf(db)))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Deletes up to `batch` expired conversations (their pauses go with them). Rows locked by a running
 * call are skipped, never waited for: the sweep does not hold calls up.
 */
export async function deleteExpiredConversations(db: Db, now: Date, batch: number): Promise<number> {
  const result = await db
    .deleteFrom('conversations')
    .where('id', 'in', (eb) =>
      eb.selectFrom('conversations').select('id').where(expiredAt(now)).limit(batch).forUpdate().skipLocked(),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
