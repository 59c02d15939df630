import { isDeepStrictEqual } from 'node:util';
import type { Db } from '../../db/database.js';
import type { ExpectedConversation, Ledger } from './ledger.js';

/**
 * Compares every conversation the load test made with what its calls imply: each agent's call count,
 * the conversation's queries in order, the prompt history, the pause, and the number of execution
 * records (a run kept twice, or lost, shows here). Returns one line per mismatch.
 */
export async function verifyConversations(db: Db, ledger: Ledger, maxLines = 20): Promise<{ checked: number; uncertain: number; mismatches: string[] }> {
  const mismatches: string[] = [];
  const all = [...ledger.conversations.keys()];
  const ids = all.filter((convid) => !ledger.isUncertain(convid));
  for (let i = 0; i < ids.length; i += 1000) {
    const batch = ids.slice(i, i + 1000);
    const [rows, pauses, executions] = await Promise.all([
      db.selectFrom('conversations').select(['id', 'agent_vars', 'conv_vars', 'history']).where('id', 'in', batch).execute(),
      db.selectFrom('paused_asks').select('convid').where('convid', 'in', batch).execute(),
      db.selectFrom('executions').select(['convid', db.fn.countAll<string>().as('count')]).where('convid', 'in', batch).groupBy('convid').execute(),
    ]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const paused = new Set(pauses.map((p) => p.convid));
    const executionCount = new Map(executions.map((e) => [e.convid, Number(e.count)]));
    for (const convid of batch) {
      const expected = ledger.conversations.get(convid)!;
      const row = byId.get(convid);
      const problem = row
        ? compare(expected, { ...row, paused: paused.has(convid), executions: executionCount.get(convid) ?? 0 })
        : 'the conversation is missing';
      if (problem) mismatches.push(`${convid}: ${problem}`);
    }
  }
  return { checked: ids.length, uncertain: all.length - ids.length, mismatches: mismatches.slice(0, maxLines).concat(mismatches.length > maxLines ? [`… ${mismatches.length - maxLines} more`] : []) };
}

interface Stored {
  agent_vars: Record<string, Record<string, unknown>>;
  conv_vars: Record<string, unknown>;
  history: { agentName: string; query: string | null; resultCode: string }[];
  paused: boolean;
  executions: number;
}

function compare(expected: ExpectedConversation, stored: Stored): string | undefined {
  for (const [agent, count] of Object.entries(expected.counts)) {
    const n = stored.agent_vars[agent]?.n;
    if (n !== count) return `${agent} ran ${String(n)} times, expected ${count}`;
  }
  const queries = stored.conv_vars.queries ?? [];
  if (!isDeepStrictEqual(queries, expected.queries)) return `queries ${JSON.stringify(queries)}, expected ${JSON.stringify(expected.queries)}`;
  const history = stored.history.map(({ agentName, query, resultCode }) => ({ agentName, query, resultCode }));
  if (!isDeepStrictEqual(history, expected.history)) return `history ${JSON.stringify(history)}, expected ${JSON.stringify(expected.history)}`;
  if (stored.paused !== expected.paused) return `paused ${stored.paused}, expected ${expected.paused}`;
  if (stored.executions !== expected.executions) return `${stored.executions} execution records, expected ${expected.executions}`;
  return undefined;
}
