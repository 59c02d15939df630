import { sql } from 'kysely';
import type { PrincipalKind, ResultCode } from '../shared/api.js';
import type { Db } from './database.js';
import { reportRowLimit, type ReportRange } from './usage.repository.js';

/** An execution that ended in a resultCode other than success or ask. */
export interface FailedExecution {
  executionId: string;
  convid: string;
  agentName: string;
  resultCode: ResultCode;
  message: string | null;
  principalKind: PrincipalKind;
  principalId: string;
  /** When it finished. */
  at: Date;
  durationMs: number;
}

/**
 * The executions of the range (by finish time, both ends included) that ended in neither success nor
 * ask, newest first, at most `reportRowLimit`; `truncated` when there were more.
 */
export async function findFailedExecutions(db: Db, range: ReportRange): Promise<{ rows: FailedExecution[]; truncated: boolean }> {
  const rows = await db
    .selectFrom('executions')
    .select([
      'id as executionId',
      'convid',
      'agent_name as agentName',
      'result_code as resultCode',
      'error_message as message',
      'principal_kind as principalKind',
      'principal_id as principalId',
      'finished_at as at',
      'duration_ms as durationMs',
    ])
    .where('result_code', 'not in', ['success', 'ask'])
    // Draft validations are a developer's experiments, not failures of the service.
    .where('draft_id', 'is', null)
    .where('finished_at', '>=', range.since)
    .where('finished_at', '<=', range.until)
    .orderBy('finished_at', 'desc')
    .orderBy('id')
    .limit(reportRowLimit + 1)
    .execute();
  return { rows: rows.slice(0, reportRowLimit), truncated: rows.length > reportRowLimit };
}

/** Failed executions of one UTC day with one resultCode. */
export interface FailedTotal {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  resultCode: ResultCode;
  count: number;
}

/** The failed executions of the range (as findFailedExecutions selects them, all of them) counted per UTC day and resultCode. */
export async function sumFailedExecutions(db: Db, range: ReportRange): Promise<FailedTotal[]> {
  const day = sql<string>`to_char(${sql.ref('finished_at')} at time zone 'UTC', 'YYYY-MM-DD')`;
  return db
    .selectFrom('executions')
    .select([day.as('day'), 'result_code as resultCode', sql<number>`count(*)::int`.as('count')])
    .where('result_code', 'not in', ['success', 'ask'])
    .where('draft_id', 'is', null)
    .where('finished_at', '>=', range.since)
    .where('finished_at', '<=', range.until)
    .groupBy([day, 'result_code'])
    .orderBy(day)
    .orderBy('result_code')
    .execute();
}
