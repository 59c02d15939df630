import type { ExecutionResponse } from '../shared/api.js';
import type { TimelineEntry } from '../shared/run-timeline.js';
import type { Db } from './database.js';
import { runRecordColumns, type RunRecordRow } from './run-list.repository.js';

/** An ended run's whole execution record, as the console's Run page shows it. */
export interface RunDetailRow extends RunRecordRow {
  response: ExecutionResponse;
  timeline: TimelineEntry[] | null;
  traceId: string | null;
  parentRunId: string | null;
}

/** The execution record of the run with this id, whoever called it; undefined while it has not ended (or for an unknown id). */
export async function findRunDetail(db: Db, runId: string): Promise<RunDetailRow | undefined> {
  return db
    .selectFrom('executions')
    .select([...runRecordColumns, 'response', 'timeline', 'trace_id as traceId', 'parent_run_id as parentRunId'])
    .where('id', '=', runId)
    .executeTakeFirst() as Promise<RunDetailRow | undefined>;
}
