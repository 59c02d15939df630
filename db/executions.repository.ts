import type { ExecutionResponse } from '../shared/api.js';
import type { RunJobData } from '../shared/jobs.js';
import type { Db } from './database.js';
import type { NewExecution } from './schema.js';

/**
 * Records a run's execution; false when its id is recorded already. The record is also the run's
 * answer: whoever records it first (the worker that ran it, or a web process that gave up waiting)
 * decides what the caller was told, so a run whose caller was told 503 can keep nothing.
 */
export async function insertExecution(db: Db, execution: NewExecution): Promise<boolean> {
  const result = await db.insertInto('executions').values(execution).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/** What identifies a run and its caller, for recording how it ended. */
export type RunIdentity = Pick<RunJobData, 'runId' | 'convid' | 'agentName' | 'caller' | 'requestId' | 'draft' | 'background' | 'parent'>;

/**
 * Records a run that ended without a run of the agent behind it (withdrawn from the queue by a cancel,
 * or its worker died): nothing of it was committed. `reason` goes to the error report.
 */
export async function recordEndedRun(db: Db, data: RunIdentity, response: ExecutionResponse, reason: string): Promise<boolean> {
  const now = new Date();
  return insertExecution(db, {
    id: data.runId,
    convid: data.convid,
    agent_name: data.agentName,
    agent_version: null,
    draft_id: data.draft?.id ?? null,
    principal_kind: data.caller.kind,
    principal_id: data.caller.id,
    request_id: data.requestId,
    result_code: response.resultCode,
    error_message: reason,
    response: JSON.stringify(response),
    started_at: now,
    finished_at: now,
    duration_ms: 0,
    // A background run that ended without running (cancelled in the queue, its worker lost) is still
    // sent to its webhook: the trigger queues the delivery, the sweep delivers it.
    background: data.background === true,
    parent_run_id: data.parent?.runId ?? null,
  });
}

/** The stored response of a finished run, or undefined while it has not finished. */
export async function findExecutionResponse(db: Db, id: string): Promise<ExecutionResponse | undefined> {
  const row = await db.selectFrom('executions').select('response').where('id', '=', id).executeTakeFirst();
  return row?.response as ExecutionResponse | undefined;
}

/** The stored responses of those of `ids` that have finished, by run id (one statement). */
export async function findExecutionResponses(db: Db, ids: readonly string[]): Promise<Map<string, ExecutionResponse>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('executions').select(['id', 'response']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row.response as ExecutionResponse]));
}
