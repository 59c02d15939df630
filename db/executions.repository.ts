import type { ExecutionResponse } from '../shared/api.js';
import type { RunJobData } from '../shared/jobs.js';
import type { Db } from './database.js';
import type { NewExecution } from './schema.js';

export async function insertExecution(db: Db, execution: NewExecution): Promise<void> {
  await db.insertInto('executions').values(execution).onConflict((oc) => oc.column('id').doNothing()).execute();
}

/**
 * Records a run that ended without a run of the agent behind it (withdrawn from the queue by a cancel,
 * or its worker died): nothing of it was committed. `reason` goes to the error report.
 */
export async function recordEndedRun(db: Db, data: RunJobData, response: ExecutionResponse, reason: string): Promise<void> {
  const now = new Date();
  await insertExecution(db, {
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
  });
}

/** The stored response of a finished run, or undefined while it has not finished. */
export async function findExecutionResponse(db: Db, id: string): Promise<ExecutionResponse | undefined> {
  const row = await db.selectFrom('executions').select('response').where('id', '=', id).executeTakeFirst();
  return row?.response as ExecutionResponse | undefined;
}
