import assert from 'node:assert/strict';
import type { Db } from '../../db/database.js';
import { findConversation } from '../../db/conversations.repository.js';
import { execAgent } from '../helpers/api.js';
import { publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import type { PrivateServer } from '../helpers/private-servers.js';
import { spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';

/** One call made by the fault tests' background load. */
export interface LoadCall {
  client: number;
  status: number;
  resultCode?: string;
  errorCode?: string;
  ms: number;
  /** When it was sent (performance.now()). */
  sentAt: number;
}

export interface BackgroundLoad {
  calls: LoadCall[];
  /** Each client's conversation. */
  convids: string[];
  /** Resolves once every client has made `successes` successful calls in a row after `since`. */
  recovered(since: number, successes: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `clients` callers, each calling `agentName` again and again on a conversation of its own (started
 * before the load), one call at a time; every answer is kept for the test to judge.
 */
export async function startBackgroundLoad(url: string, key: string, agentName: string, clients: number): Promise<BackgroundLoad> {
  const calls: LoadCall[] = [];
  const convids: string[] = [];
  for (let i = 0; i < clients; i++) {
    const first = await execAgent(url, key, { agentName });
    if (first.body.resultCode !== 'success') throw new Error(`the first call ended ${JSON.stringify(first.body)}`);
    convids.push(first.body.convid);
  }
  let stopped = false;
  const loops = convids.map(async (convid, client) => {
    while (!stopped) {
      const sentAt = performance.now();
      const answer = await execAgent(url, key, { agentName, convid }).catch(() => ({ status: 0, body: undefined as any }));
      calls.push({ client, status: answer.status, resultCode: answer.body?.resultCode, errorCode: answer.body?.error?.code, ms: performance.now() - sentAt, sentAt });
      if (answer.status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  return {
    calls,
    convids,
    async recovered(since, successes, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const streak = (client: number) => {
        const mine = calls.filter((c) => c.client === client && c.sentAt >= since);
        const last = mine.slice(-successes);
        return last.length === successes && last.every((c) => c.status === 200 && c.resultCode === 'success');
      };
      while (!convids.every((_, client) => streak(client))) {
        if (Date.now() > deadline) throw new Error(`the service did not recover within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** When a dependency was stopped and started again (performance.now()). */
export interface Outage {
  stopped: number;
  restarted: number;
}

/**
 * What every call of the background load must show about an outage: it was answered with its result or
 * 503 `unavailable`; it waited no longer than the max runtime after the outage began (a run that started
 * just before it may still end, and commit, that much later; plus 1.5 s to notice); and the load really
 * met the outage. Returns how many successes each client had.
 */
export function assertOutageAnswered(load: BackgroundLoad, outage: Outage, maxRuntimeMs: number): number[] {
  const byOutcome = new Map<string, number>();
  for (const c of load.calls) byOutcome.set(`${c.status} ${c.resultCode ?? c.errorCode}`, (byOutcome.get(`${c.status} ${c.resultCode ?? c.errorCode}`) ?? 0) + 1);
  const other = load.calls.filter((c) => !(c.status === 200 && c.resultCode === 'success') && !(c.status === 503 && c.errorCode === 'unavailable'));
  assert.deepEqual(other, [], `only results and 503 unavailable: ${JSON.stringify([...byOutcome])}`);
  const late = load.calls.filter((c) => c.sentAt + c.ms > Math.max(c.sentAt, outage.stopped) + maxRuntimeMs + 1500);
  assert.deepEqual(late, [], 'no call waited past the max runtime after the outage began');
  const metOutage = load.calls.filter((c) => c.sentAt < outage.restarted && c.sentAt + c.ms > outage.stopped);
  assert.ok(metOutage.length >= load.convids.length, `${metOutage.length} calls were going during the outage`);
  return load.convids.map((_, client) => load.calls.filter((c) => c.client === client && c.resultCode === 'success').length);
}

/** The agents of the restart tests: `counter` counts its calls in sys.vars.n; `asker` pauses on an ask. */
export async function publishFaultAgents(db: Db): Promise<{ counter: string; asker: string }> {
  const agents = { counter: uniqueAgentName('counter'), asker: uniqueAgentName('asker') };
  await publishAgent(db, agents.counter, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; await sys.sleep(20); sys.say(String(sys.vars.n)); }`);
  await publishAgent(db, agents.asker, `export default async (sys) => { const a = await sys.ask({ message: 'Name?', inputs: [{ name: 'name', type: 'str' }] }); sys.say('hi ' + a.name); }`);
  return agents;
}

/** A web and a worker process with `env`, once both are ready. */
export async function startWebAndWorker(env: Record<string, string>): Promise<Spawned[]> {
  const processes = [spawnEntry('cli/web.js', [], env), spawnEntry('workers/main.js', [], env)];
  await Promise.all([waitForOutput(processes[0]!, /web listening/), waitForOutput(processes[1]!, /worker running/)]);
  return processes;
}

/** Stops `server`, keeps it down `downMs`, starts it again. */
export async function interrupt(server: PrivateServer, downMs: number): Promise<Outage> {
  const stopped = performance.now();
  await server.stop();
  await new Promise((resolve) => setTimeout(resolve, downMs));
  await server.start();
  return { stopped, restarted: performance.now() };
}

/** Each client's conversation kept every success once and nothing else (`n` counts from the call that started it). */
export async function assertEachSuccessKeptOnce(db: Db, load: BackgroundLoad, successes: number[], counter: string): Promise<void> {
  for (const [client, convid] of load.convids.entries()) {
    const conversation = await findConversation(db, convid);
    assert.equal(conversation?.agent_vars[counter]?.n, successes[client]! + 1, `client ${client}: every success kept once, nothing else`);
  }
}
