import { sql } from 'kysely';
import type { Db } from '../../db/database.js';

/** Polls `condition` until it holds, failing after `timeoutMs`. */
export async function waitFor(condition: () => Promise<boolean> | boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** True while some transaction holds the conversation's row lock (a run is in progress on it). */
export async function isConversationLocked(db: Db, convid: string): Promise<boolean> {
  try {
    await db.transaction().execute((trx) => sql`select 1 from conversations where id = ${convid} for update nowait`.execute(trx));
    return false;
  } catch (err) {
    if ((err as { code?: string }).code === '55P03') return true;
    throw err;
  }
}
