import type { Db } from './database.js';
import type { NewExecution } from './schema.js';

export async function insertExecution(db: Db, execution: NewExecution): Promise<void> {
  await db.insertInto('executions').values(execution).onConflict((oc) => oc.column('id').doNothing()).execute();
}

/** The stored response of a finished run, or undefined while it has not finished. */
export async function findExecutionResponse(db: Db, id: string): Promise<unknown | undefined> {
  const row = await db.selectFrom('executions').select('response').where('id', '=', id).executeTakeFirst();
  return row?.response;
}
