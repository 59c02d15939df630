import type { Db } from '../../db/database.js';
import type { UsageRecordsTable } from '../../db/schema.js';
import type { Selectable } from 'kysely';
import { waitFor } from '../helpers/wait.js';

export type UsageRow = Selectable<UsageRecordsTable>;

/** The usage rows of these accounts, oldest first. */
export function usageRowsOf(db: Db, accountIds: string[]): Promise<UsageRow[]> {
  return db.selectFrom('usage_records').selectAll().where('service_account_id', 'in', accountIds).orderBy('at').orderBy('duration_ms').execute();
}

/** Waits until these accounts have `count` usage rows (they are written about a second after the calls); returns them. */
export async function waitForUsageRows(db: Db, accountIds: string[], count: number, timeoutMs = 5000): Promise<UsageRow[]> {
  let rows: UsageRow[] = [];
  await waitFor(async () => (rows = await usageRowsOf(db, accountIds)).length >= count, timeoutMs, `${count} usage rows`);
  return rows;
}

/** `YYYY-MM-DD` of a time, UTC. */
export function utcDay(at: Date | string): string {
  return new Date(at).toISOString().slice(0, 10);
}
