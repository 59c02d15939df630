import { sql } from 'kysely';
import type { Db } from '../../db/database.js';

/**
 * Fills the database with `conversations` conversations, `paused` of them paused on an ask, owned by
 * 10,000 made-up principals (so no index is helped by one owner), used over the last 60 days. Free
 * conversations unused for more than 7 days have expired: about 30% of them are made so, for the sweep.
 */
export async function insertBulkConversations(db: Db, counts: { conversations: number; paused: number }): Promise<void> {
  const history = JSON.stringify([{ agentName: 'bulk', query: 'hello', resultCode: 'success', at: new Date().toISOString() }]);
  await sql`
    insert into conversations (id, owner_kind, owner_id, plan, agent_vars, conv_vars, history, pinned, created_at, last_used_at)
    select gen_random_uuid(), 'serviceAccount', ('00000000-0000-4000-8000-' || lpad((i % 10000)::text, 12, '0'))::uuid,
           case when i % 5 = 0 then 'paid' else 'free' end,
           jsonb_build_object('bulk', jsonb_build_object('n', i % 100)), '{"topic":"bulk"}'::jsonb, ${history}::jsonb,
           i % 97 = 0, now() - interval '60 days',
           case when i % 10 < 3 then now() - interval '20 days' - (i % 40) * interval '1 day' else now() - (i % 6) * interval '1 day' end
    from generate_series(1, ${counts.conversations}) as i`.execute(db);
  const ask = JSON.stringify({ message: 'Name?', inputs: [{ name: 'name', type: 'str', label: null, description: null, options: null, default: null }] });
  const startState = JSON.stringify({ inputs: { query: 'hello' }, vars: {}, conv: {}, history: [], randomSeed: 1 });
  await sql`
    insert into paused_asks (convid, agent_name, agent_version, ask, journal, start_state, created_at)
    select id, 'bulk', 1, ${ask}::jsonb, '[]'::jsonb, ${startState}::jsonb, last_used_at
    from conversations tablesample system (15) limit ${counts.paused}`.execute(db);
  await sql`vacuum analyze conversations`.execute(db);
  await sql`vacuum analyze paused_asks`.execute(db);
}

/** Rows in the tables the calls touch, for the report. */
export async function countRows(db: Db): Promise<{ conversations: number; paused: number; expired: number }> {
  const { rows } = await sql<{ conversations: string; paused: string; expired: string }>`
    select (select count(*) from conversations) as conversations,
           (select count(*) from paused_asks) as paused,
           (select count(*) from conversations where not pinned and plan = 'free' and last_used_at < now() - interval '7 days') as expired`.execute(db);
  const row = rows[0]!;
  return { conversations: Number(row.conversations), paused: Number(row.paused), expired: Number(row.expired) };
}
