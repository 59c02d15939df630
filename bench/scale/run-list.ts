import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { findRunPage, type RunListFilter } from '../../db/run-list.repository.js';
import { summarize, type LatencySummary } from '../stats.js';

/**
 * `npm run bench:scale -- --run-list`: what the console's list of runs (POST /api/admin/listRuns)
 * costs with 1,000 and with 1,000,000 execution records. Each of the list's filters (and the
 * combination the Runs page offers) reads its first page through the repository function the endpoint
 * calls (db/run-list.repository.ts findRunPage), and the unfiltered list its second page from a cursor;
 * target: each ≤ 2 × the same query with 1,000 runs.
 */

/**
 * How the records are spread: over 10 agents (i % 10), 1,000 accounts of which one (number 0) calls one
 * run in 10, and result codes (1 in 16 errorInAgent, 1 in 16 timedOut, the rest success). Each filter
 * below therefore fills its first page with 1,000 records as with 1,000,000 (the same query, the same
 * page), except agent and result code together (1 in 80: 12 runs of 1,000), the sparse case.
 */
const agents = 10;
const accounts = 1_000;

/** The filters timed, by name. */
export const timedFilters: Record<string, RunListFilter> = {
  unfiltered: {},
  agent: { agentName: 'agent-7' },
  account: { account: { kind: 'serviceAccount', id: accountId(0) } },
  resultCode: { resultCode: 'errorInAgent' },
  timeRange: { from: new Date(Date.now() - 800_000), to: new Date(Date.now() - 200_000) },
  accountAndTimeRange: { account: { kind: 'serviceAccount', id: accountId(0) }, from: new Date(Date.now() - 800_000) },
  agentAndResultCode: { agentName: 'agent-7', resultCode: 'errorInAgent' },
};

function accountId(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

/** Appends execution records `from`..`to` (1-based), started a second apart going back from now (the first 1,000 are the newest). */
export async function insertBulkExecutions(db: Db, from: number, to: number): Promise<void> {
  const response = JSON.stringify({ resultCode: 'success', output: [{ type: 'text', text: 'hi' }] });
  await sql`
    insert into executions (id, convid, agent_name, agent_version, principal_kind, principal_id, request_id, result_code,
                            error_message, response, started_at, finished_at, duration_ms, background)
    select gen_random_uuid(), gen_random_uuid(), 'agent-' || (i % ${agents}), 1, 'serviceAccount',
           ('00000000-0000-4000-8000-' || lpad((case when i % 10 = 0 then 0 else i % ${accounts} end)::text, 12, '0'))::uuid, null,
           case i % 16 when 3 then 'errorInAgent' when 5 then 'timedOut' else 'success' end,
           case when i % 16 in (3, 5) then 'it failed' end,
           ${response}::jsonb, now() - i * interval '1 second', now() - i * interval '1 second' + interval '40 ms', 40, false
    from generate_series(${from}::int, ${to}::int) as i`.execute(db);
  await sql`vacuum analyze executions`.execute(db);
}

export type RunListTimings = Record<string, LatencySummary & { rows: number }>;

/** Times each filter's first page (and the unfiltered second page) `rounds` times, after a warm-up. */
export async function timeRunList(db: Db, rounds: number): Promise<RunListTimings> {
  // Each reads a page of 50 and one more, as the endpoint does.
  const queries: Record<string, () => Promise<unknown[]>> = {};
  for (const [name, filter] of Object.entries(timedFilters)) queries[name] = () => findRunPage(db, filter, { limit: 51 });
  const first = await findRunPage(db, {}, { limit: 50 });
  const last = first.at(-1)!;
  queries.secondPage = () => findRunPage(db, {}, { limit: 51, after: { startedAt: last.position, id: last.runId } });
  const timings: RunListTimings = {};
  for (const [name, query] of Object.entries(queries)) {
    const rows = (await query()).length;
    for (let i = 0; i < 20; i++) await query();
    const latencies: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const started = performance.now();
      await query();
      latencies.push(performance.now() - started);
    }
    timings[name] = { ...summarize(latencies), rows };
  }
  return timings;
}

/** The report: each query's p50 at both sizes, their ratio and the target beside it. */
export function formatRunListReport(small: RunListTimings, large: RunListTimings, sizes: { small: number; large: number }): string {
  const rows = Object.keys(small).map((name) => {
    const ratio = large[name]!.p50 / small[name]!.p50;
    const rows = `${small[name]!.rows}/${large[name]!.rows}`;
    return `  ${name.padEnd(20)} ${rows.padStart(7)} ${small[name]!.p50.toFixed(3).padStart(9)} ${large[name]!.p50.toFixed(3).padStart(9)} ${ratio.toFixed(2).padStart(6)}×   ≤ 2×  ${ratio <= 2 ? 'met' : 'MISSED'}`;
  });
  return [
    `run list: a page (50 runs and one more) p50 in ms with ${sizes.small} and ${sizes.large} execution records`,
    `  ${'query'.padEnd(20)} ${'rows'.padStart(7)} ${`${sizes.small}`.padStart(9)} ${`${sizes.large}`.padStart(9)} ${'ratio'.padStart(7)}   target`,
    ...rows,
  ].join('\n');
}
