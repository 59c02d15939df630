import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { FuzzStack } from './fuzz-stack.js';

/**
 * What a refused request must not change: row count and a digest of every row, per table. Left out on
 * purpose: usage_records (every bearer call is recorded, refused ones too, by design: DESIGN §7) and
 * sessions.last_seen_at (a cookie call counts as activity once the session is checked, even if its body
 * is then refused). Of mail_outbox only which mails exist counts: the worker's sweep updates their delivery
 * columns on its own schedule.
 */
const watchedRows: Record<string, string> = {
  users: 'select * from users',
  service_accounts: 'select * from service_accounts',
  sessions: 'select id, token_hash, user_id, created_at from sessions',
  agents: 'select * from agents',
  agent_versions: 'select * from agent_versions',
  drafts: 'select * from drafts',
  conversations: 'select * from conversations',
  paused_asks: 'select * from paused_asks',
  executions: 'select * from executions',
  email_codes: 'select * from email_codes',
  email_code_failures: 'select * from email_code_failures',
  mail_outbox: 'select id, kind, to_address, created_at from mail_outbox',
};

export type StateSnapshot = Record<string, string>;

export async function snapshotState(db: Db): Promise<StateSnapshot> {
  const snapshot: StateSnapshot = {};
  for (const [table, rows] of Object.entries(watchedRows)) {
    const { rows: [digest] } = await sql<{ n: number; digest: string }>`
      select count(*)::int as n, md5(coalesce(string_agg(r::text, E'\n' order by r::text), '')) as digest
      from (${sql.raw(rows)}) r`.execute(db);
    snapshot[table] = `${digest!.n} rows, ${digest!.digest}`;
  }
  return snapshot;
}

/** Runs a batch of requests that must all be refused or answered without effect, and checks that no row changed. */
export async function assertNothingChanges(fuzz: FuzzStack, batch: () => Promise<void>): Promise<void> {
  const before = await snapshotState(fuzz.stack.runtime.db);
  await batch();
  const after = await snapshotState(fuzz.stack.runtime.db);
  const changed = Object.keys(before).filter((table) => before[table] !== after[table]);
  assert.deepEqual(changed, [], `tables changed by refused requests: ${changed.map((t) => `${t} ${before[t]} → ${after[t]}`).join('; ')}`);
}
