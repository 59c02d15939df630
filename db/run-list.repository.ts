import { sql } from 'kysely';
import type { PrincipalKind, ResultCode } from '../shared/api.js';
import type { Db } from './database.js';

/** Which runs a page of the console's list holds (every filter optional; all given must match). */
export interface RunListFilter {
  agentName?: string | undefined;
  account?: { kind: PrincipalKind; id: string } | undefined;
  resultCode?: ResultCode | undefined;
  /** Started at or after. */
  from?: Date | undefined;
  /** Started before. */
  to?: Date | undefined;
}

/** Where a page starts: after the run with this start and id (the last of the page before). */
export interface RunListPosition {
  /** started_at exactly as PostgreSQL keeps it (microseconds), as ISO 8601 text in UTC. */
  startedAt: string;
  id: string;
}

/** The columns of an ended run's execution record that the console's list and Run page both show. */
export const runRecordColumns = [
  'id as runId',
  'convid',
  'agent_name as agentName',
  'agent_version as agentVersion',
  'draft_id as draftId',
  'principal_kind as principalKind',
  'principal_id as principalId',
  'request_id as requestId',
  'result_code as resultCode',
  'error_message as errorMessage',
  'background',
  'submitted_at as submittedAt',
  'started_at as startedAt',
  'finished_at as finishedAt',
  'duration_ms as durationMs',
] as const;

/** An ended run as `runRecordColumns` read it. */
export interface RunRecordRow {
  runId: string;
  convid: string;
  agentName: string;
  agentVersion: number | null;
  draftId: string | null;
  principalKind: PrincipalKind;
  principalId: string;
  requestId: string | null;
  resultCode: ResultCode;
  errorMessage: string | null;
  background: boolean;
  submittedAt: Date | null;
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
}

/** One ended run, as the console's list shows it. */
export interface RunListRow extends RunRecordRow {
  /** started_at to the microsecond, for the next page's position. */
  position: string;
}

/**
 * Ended runs, newest first by (started_at, id): at most `limit` after `after`. Each filter has an index
 * that leads with it and ends in (started_at desc, id desc) (migration 0013; agent and result code
 * together, 0018), so a page is one index
 * range read that stops after `limit` rows, however many runs there are.
 */
export async function findRunPage(db: Db, filter: RunListFilter, page: RunPage): Promise<RunListRow[]> {
  return (await selectRunPage(db, filter, page).execute()) as RunListRow[];
}

/** How many runs a page holds, and where it starts (after the last run of the page before). */
export interface RunPage {
  limit: number;
  after?: RunListPosition | undefined;
}

/** The query findRunPage runs, unexecuted (for EXPLAIN). */
export function selectRunPage(db: Db, filter: RunListFilter, page: RunPage) {
  let query = db
    .selectFrom('executions')
    .select([
      ...runRecordColumns,
      sql<string>`to_char(started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('position'),
    ])
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit);
  if (filter.agentName !== undefined) query = query.where('agent_name', '=', filter.agentName);
  if (filter.account) query = query.where('principal_kind', '=', filter.account.kind).where('principal_id', '=', filter.account.id);
  if (filter.resultCode !== undefined) query = query.where('result_code', '=', filter.resultCode);
  if (filter.from) query = query.where('started_at', '>=', filter.from);
  if (filter.to) query = query.where('started_at', '<', filter.to);
  if (page.after) {
    const { startedAt, id } = page.after;
    // A row comparison, so the index reads on from the position instead of filtering row by row.
    query = query.where(sql<boolean>`(started_at, id) < (${startedAt}::timestamptz, ${id}::uuid)`);
  }
  return query;
}
