import type { ExecutionResponse, PrincipalKind, ResultCode } from '../shared/api.js';
import type { TimelineEntry } from '../shared/run-timeline.js';
import type { Db } from './database.js';

/** An ended run's whole execution record, as the console's Run page shows it. */
export interface RunDetailRow {
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
  response: ExecutionResponse;
  background: boolean;
  submittedAt: Date | null;
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
  timeline: TimelineEntry[] | null;
  traceId: string | null;
}

/** The execution record of the run with this id, whoever called it; undefined while it has not ended (or for an unknown id). */
export async function findRunDetail(db: Db, runId: string): Promise<RunDetailRow | undefined> {
  return db
    .selectFrom('executions')
    .select([
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
      'response',
      'background',
      'submitted_at as submittedAt',
      'started_at as startedAt',
      'finished_at as finishedAt',
      'duration_ms as durationMs',
      'timeline',
      'trace_id as traceId',
    ])
    .where('id', '=', runId)
    .executeTakeFirst() as Promise<RunDetailRow | undefined>;
}
