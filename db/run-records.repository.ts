import type { ExecutionResponse, Principal } from '../shared/api.js';
import type { Db } from './database.js';

/** A run's execution record, as a background run's status (DESIGN §14) reads it. */
export interface RunRecord {
  runId: string;
  convid: string;
  agentName: string;
  submittedAt: Date | null;
  startedAt: Date;
  finishedAt: Date;
  response: ExecutionResponse;
  /** A child run's parent (sys.call); null for any other run. */
  parentRunId: string | null;
}

/** The caller's run with this id, once it has ended; undefined for another caller's, or while it goes on. */
export async function findRunRecord(db: Db, caller: Pick<Principal, 'kind' | 'id'>, runId: string): Promise<RunRecord | undefined> {
  return db
    .selectFrom('executions')
    .select(['id as runId', 'convid', 'agent_name as agentName', 'submitted_at as submittedAt', 'started_at as startedAt', 'finished_at as finishedAt', 'response', 'parent_run_id as parentRunId'])
    .where('id', '=', runId)
    .where('principal_kind', '=', caller.kind)
    .where('principal_id', '=', caller.id)
    .executeTakeFirst() as Promise<RunRecord | undefined>;
}

/** One turn of a conversation: a run, with the query it was called with and how it ended. */
export interface TurnRow {
  runId: string;
  agentName: string;
  query: string | null;
  startedAt: Date;
  response: ExecutionResponse;
}

/**
 * A conversation's turns, oldest first: the last `limit` that started before `before` (all, when not
 * given). One index range read (executions by convid and start), whatever the conversation's length.
 */
export async function findTurns(db: Db, convid: string, page: { limit: number; before?: Date }): Promise<TurnRow[]> {
  let query = db
    .selectFrom('executions')
    .select(['id as runId', 'agent_name as agentName', 'query', 'started_at as startedAt', 'response'])
    .where('convid', '=', convid)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit);
  if (page.before) query = query.where('started_at', '<', page.before);
  const rows = (await query.execute()) as TurnRow[];
  return rows.reverse();
}
