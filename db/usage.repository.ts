import { sql } from 'kysely';
import type { ResultCode, Role } from '../shared/api.js';
import type { Db } from './database.js';

/** One call made with a bearer key, as the usage report keeps it. */
export interface UsageRecord {
  serviceAccountId: string;
  /** The account's name at the time of the call (it stays reportable after the account is deleted). */
  name: string;
  /** The account's role at the time of the call. */
  role: Role;
  endpoint: string;
  agentName: string | null;
  resultCode: ResultCode | null;
  httpStatus: number;
  durationMs: number;
  at: Date;
}

/** Calls of one account, with one role, on one UTC day. */
export interface UsageTotal {
  serviceAccountId: string;
  name: string;
  role: Role;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  calls: number;
  /** Calls that ended in a resultCode other than success/ask, or with an HTTP status of 400 or more. */
  failed: number;
}

/** A time range of a report, both ends included. */
export interface ReportRange {
  since: Date;
  until: Date;
}

/** At most this many rows per report; the totals always cover the whole range. */
export const reportRowLimit = 1000;

/** Rows of one statement: 9 parameters each stays far below PostgreSQL's 65,535. */
const rowsPerStatement = 1000;

/** Inserts the records, in as few statements as the parameter limit allows (one for up to 1,000 rows). */
export async function insertUsageRecords(db: Db, records: readonly UsageRecord[]): Promise<void> {
  for (let start = 0; start < records.length; start += rowsPerStatement) {
    const values = records.slice(start, start + rowsPerStatement).map((r) => ({
      service_account_id: r.serviceAccountId,
      account_name: r.name,
      role: r.role,
      endpoint: r.endpoint,
      agent_name: r.agentName,
      result_code: r.resultCode,
      http_status: r.httpStatus,
      duration_ms: r.durationMs,
      at: r.at,
    }));
    await db.insertInto('usage_records').values(values).execute();
  }
}

/** The records of the range, newest first, at most `reportRowLimit`; `truncated` when there were more. */
export async function findUsageRecords(db: Db, range: ReportRange): Promise<{ rows: UsageRecord[]; truncated: boolean }> {
  const rows = await db
    .selectFrom('usage_records')
    .select([
      'service_account_id as serviceAccountId',
      'account_name as name',
      'role',
      'endpoint',
      'agent_name as agentName',
      'result_code as resultCode',
      'http_status as httpStatus',
      'duration_ms as durationMs',
      'at',
    ])
    .where('at', '>=', range.since)
    .where('at', '<=', range.until)
    .orderBy('at', 'desc')
    .orderBy('id')
    .limit(reportRowLimit + 1)
    .execute();
  return { rows: rows.slice(0, reportRowLimit), truncated: rows.length > reportRowLimit };
}

/** Calls and failed calls of the range per account, role (at the time of the call) and UTC day. */
export async function sumUsage(db: Db, range: ReportRange): Promise<UsageTotal[]> {
  const day = sql<string>`to_char(${sql.ref('at')} at time zone 'UTC', 'YYYY-MM-DD')`;
  const failed = sql<boolean>`(result_code is not null and result_code not in ('success', 'ask')) or http_status >= 400`;
  return db
    .selectFrom('usage_records')
    .select([
      'service_account_id as serviceAccountId',
      'account_name as name',
      'role',
      day.as('day'),
      sql<number>`count(*)::int`.as('calls'),
      sql<number>`(count(*) filter (where ${failed}))::int`.as('failed'),
    ])
    .where('at', '>=', range.since)
    .where('at', '<=', range.until)
    .groupBy(['service_account_id', 'account_name', 'role', day])
    .orderBy(day)
    .orderBy('account_name')
    .orderBy('role')
    .execute();
}
