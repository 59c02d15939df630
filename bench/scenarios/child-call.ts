import { createDb } from '../../db/database.js';
import type { ApiClient } from '../client.js';
import { execAgent } from '../exec.js';
import type { Scenario } from '../scenario.js';
import { summarize } from '../stats.js';

/**
 * (k) What a child call costs its parent (DESIGN §19): the `callsHello` agent times its
 * `sys.call('hello')` (from the call to its result, in the parent's sandbox); the child's own run is
 * its execution record's start to its commit. The difference is the call's cost: the child's start
 * (its place among the caller's runs taken, its job queued), its wait in the queue and its worker's
 * pickup, its commit, and its end heard by the parent's worker.
 */

interface Timed {
  waited: number;
  runId: string;
}

async function timedCall(client: ApiClient): Promise<Timed> {
  const response = await execAgent(client, { agentName: 'callsHello' });
  const part = response.output?.[0];
  const said = part?.type === 'text' ? (JSON.parse(part.text) as Timed & { resultCode: string }) : undefined;
  if (!said || said.resultCode !== 'success') throw new Error(`callsHello said ${JSON.stringify(response.output)}`);
  return said;
}

export const childCall: Scenario = {
  id: 'child-call',
  title: '(k) a child call (sys.call of hello), sequential',
  rows: [{ id: 'call.overhead.p50', label: "(k) a child call's cost to its parent beyond the child's own run, p50", unit: 'ms', target: { op: '<=', value: 2 } }],
  async run({ client, profile, stack }) {
    for (let i = 0; i < Math.ceil(profile.warmupCalls / 10); i++) await timedCall(client);
    const calls: Timed[] = [];
    for (let i = 0; i < profile.askCycles; i++) calls.push(await timedCall(client));
    const db = createDb(stack.settings.databaseUrl, 1);
    try {
      const records = await db.selectFrom('executions').select(['id', 'started_at', 'finished_at']).where('id', 'in', calls.map((c) => c.runId)).execute();
      const ownRun = new Map(records.map((r) => [r.id, r.finished_at.getTime() - r.started_at.getTime()]));
      const overheads = calls.map((c) => c.waited - (ownRun.get(c.runId) ?? Number.NaN));
      const summary = summarize(overheads);
      return {
        values: { 'call.overhead.p50': summary.p50 },
        notes: [`${calls.length} calls; the call's cost p99 ${summary.p99.toFixed(1)} ms; clocks of ms resolution (the sandbox's Date, the records' timestamps)`],
      };
    } finally {
      await db.destroy();
    }
  },
};
