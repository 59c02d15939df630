import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createDb } from '../../db/database.js';
import { createClient, type ApiClient } from '../client.js';
import { execAgent } from '../exec.js';
import { addServiceAccount, createFixture, dropDatabase } from '../fixture.js';
import { openFloorRig } from '../floor.js';
import { freePort, startStack, type ProductProcess } from '../stack.js';
import { delay, runConcurrent, runPaced, runSequential, type LoadResult } from '../stats.js';
import { cleanUpOnInterrupt, createTeardown } from '../teardown.js';

/**
 * `npm run bench:cluster [-- --calls N --in-flight N --shards 1,3 --callers N --by-command]`: the product on a Redis Cluster (DESIGN §17), one
 * web and one worker process with REDIS_CLUSTER=true and every call through the queue
 * (WEB_INLINE_RUNS=false), on the cluster .ci/redis-cluster starts (or BENCH_REDIS_CLUSTER_URL). For
 * calls one at a time and N in flight: calls/s, and from each master's INFO before and after, Redis
 * commands and Redis CPU per call and each master's share of the commands; for each REDIS_SHARDS of
 * `--shards` in turn (1 and 3: all of an installation's keys on one master, then spread over three);
 * beside a raw BullMQ job on the same cluster (bench/floor.ts). The calls are made by `--callers`
 * service accounts in turn (8; an installation serves many callers, and each caller's counts live on
 * one shard). `--by-command` logs each master's busiest commands per phase. Writes
 * bench/cluster-results.json.
 *
 * Redis CPU per call is judged fairly against the raw job: the masters' CPU when nothing of ours runs
 * (cluster bus, replication, cron: milliseconds a second) is measured before and after, and taken off
 * every phase over its wall time (a phase at 30 calls/s would otherwise pay 10 × what one at 300
 * does); and the raw job is also made one at a time at the product's pace, since Redis spends more
 * CPU per command on commands that come apart (each wakes it up, its caches cold) than on a burst.
 * The target is checked against that raw job at the same pace, both net of the idle cluster; the
 * stack's own background (heartbeats, stalled checks, blocking reads) stays charged to the product.
 */

/** Seconds each idle measurement lasts. */
const idleSeconds = 8;

const clusterUrl = process.env.BENCH_REDIS_CLUSTER_URL ?? 'redis://127.0.0.1:7101';
const postgresUrl = 'postgres://postgres@127.0.0.1:5432';
const log = (line: string) => process.stderr.write(`${line}\n`);
const agents = { hello: `export default async function (sys) { sys.say('hello ' + (sys.query ?? '')); }` };

/** One master's counters as INFO shows them. */
interface MasterCounters {
  commands: number;
  cpuSeconds: number;
  /** Calls per command. */
  perCommand: Map<string, number>;
}

interface PhaseResult {
  phase: string;
  /** REDIS_SHARDS of the product; absent for the raw BullMQ job. */
  shards?: number;
  calls: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  commandsPerCall: number;
  redisCpuUsPerCall: number;
  /** The phase's wall time. */
  seconds: number;
  /** Redis CPU per call less the idle cluster's over the phase's wall time (filled in once both idle measurements are made). */
  netRedisCpuUsPerCall?: number;
  /** master (host:port) → share of the phase's commands, per cent. */
  masterShare: Record<string, number>;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { calls: { type: 'string' }, 'in-flight': { type: 'string' }, shards: { type: 'string' }, callers: { type: 'string' }, 'by-command': { type: 'boolean' } } });
  const callerCount = Number(values.callers ?? 8);
  byCommand = values['by-command'] ?? false;
  const calls = Number(values.calls ?? 1000);
  const inFlight = Number(values['in-flight'] ?? 64);
  const shardCounts = (values.shards ?? '1,3').split(',').map(Number);
  const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const queuePrefix = `agentexec-cluster-${tag}`;
  const databaseUrl = `${postgresUrl}/agentexec_cluster_${tag}`;
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  const seed = new Redis(clusterUrl, { maxRetriesPerRequest: 1 });
  teardown.add('close the seed connection', () => seed.disconnect());
  const masters = await masterNodes(seed);
  // {<prefix>}* and, with shards, {<prefix>.s<n>...}*; the floor's {<prefix>-floor}* too.
  teardown.add(`delete the keys {${queuePrefix}*`, () => deleteKeys(masters, [`{${queuePrefix}*`]));
  teardown.add('drop the database', () => dropDatabase(databaseUrl));
  const results: PhaseResult[] = [];
  try {
    const bareBefore = await idleCpuMsPerSecond(masters);
    log(`bare cluster, nothing of ours running: ${bareBefore.toFixed(1)} ms/s of Redis CPU on the masters`);
    const fixture = await createFixture(databaseUrl, agents);
    const bearerKeys = [fixture.bearerKey, ...(await addCallers(databaseUrl, callerCount - 1))];
    const processes: ProductProcess[] = [];
    teardown.add('stop web and worker', () => Promise.all(processes.map((p) => p.stop(15_000))));
    for (const shards of shardCounts) {
      const env = { REDIS_CLUSTER: 'true', WEB_INLINE_RUNS: 'false', REDIS_SHARDS: String(shards) };
      const stack = await startStack({ databaseUrl, redisUrl: clusterUrl, queuePrefix, port: await freePort(), maxAgentRuntimeMs: 60_000, env }, (p) => processes.push(p));
      const clients = bearerKeys.map((bearerKey) => createClient(stack.baseUrl, { bearerKey }));
      const call = callOf(clients);
      await runSequential(200, call);
      log(`idle stack, ${shards} shard${shards === 1 ? '' : 's'}: ${(await idleCpuMsPerSecond(masters)).toFixed(1)} ms/s of Redis CPU on the masters`);
      const of = (phase: string) => `product, ${shards} shard${shards === 1 ? '' : 's'}, ${phase}`;
      results.push({ ...(await measure(of('one at a time'), masters, calls, () => runSequential(calls, call))), shards });
      results.push({ ...(await measure(of(`${inFlight} in flight`), masters, calls, () => runConcurrent(calls, inFlight, call))), shards });
      clients.forEach((client) => client.close());
      // Stopped before the next phase: its idle connections' commands would count against it.
      await Promise.all(processes.splice(0).map((p) => p.stop(15_000)));
    }
    const rig = await openFloorRig(clusterUrl, `{${queuePrefix}-floor}`, inFlight, true);
    let rigClosed = false;
    const closeRig = async () => {
      if (rigClosed) return;
      rigClosed = true;
      await rig.close();
    };
    teardown.add('close the floor', closeRig);
    let n = 0;
    const floorCall = () => rig.roundTrip(`f-${++n}`);
    await runSequential(200, floorCall);
    results.push(await measure('raw BullMQ job, one at a time', masters, calls, () => runSequential(calls, floorCall)));
    results.push(await measure(`raw BullMQ job, ${inFlight} in flight`, masters, calls, () => runConcurrent(calls, inFlight, floorCall)));
    // The raw job one at a time at each product phase's pace, to compare with it.
    const pacedFloor = new Map<PhaseResult, PhaseResult>();
    for (const sequential of results.filter((r) => r.shards !== undefined && r.phase.endsWith('one at a time'))) {
      const pace = sequential.callsPerSecond;
      const paced = await measure(`raw BullMQ job, one at a time at ${pace.toFixed(0)} calls/s (the pace of ${sequential.phase})`, masters, calls, () => runPaced(calls, pace, floorCall));
      results.push(paced);
      pacedFloor.set(sequential, paced);
    }
    await closeRig();
    const bareAfter = await idleCpuMsPerSecond(masters);
    const bare = (bareBefore + bareAfter) / 2;
    log(`bare cluster, nothing of ours running: ${bareAfter.toFixed(1)} ms/s of Redis CPU on the masters; ${bare.toFixed(1)} ms/s taken off every phase`);
    for (const r of results) r.netRedisCpuUsPerCall = (r.redisCpuUsPerCall * r.calls - bare * 1000 * r.seconds) / r.calls;

    for (const r of results) {
      const shares = Object.entries(r.masterShare).map(([master, share]) => `${master} ${share.toFixed(0)} %`).join(', ');
      log(`${r.phase}: ${r.callsPerSecond.toFixed(0)} calls/s, p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms; ${r.commandsPerCall.toFixed(1)} Redis commands and ${r.redisCpuUsPerCall.toFixed(0)} µs Redis CPU per call (${r.netRedisCpuUsPerCall!.toFixed(0)} µs net of the idle cluster); masters: ${shares}`);
    }
    const floor = results.find((r) => r.shards === undefined)!;
    for (const [sequential, paced] of pacedFloor) {
      log(
        `${sequential.phase}, product ÷ raw BullMQ: ${(sequential.commandsPerCall / floor.commandsPerCall).toFixed(2)} × the commands (target ≤ 1.25); ` +
          `${(sequential.netRedisCpuUsPerCall! / paced.netRedisCpuUsPerCall!).toFixed(2)} × the Redis CPU of the raw job at the product's pace, both net of the idle cluster (target ≤ 1.5); ` +
          `as measured, ${(sequential.redisCpuUsPerCall / floor.redisCpuUsPerCall).toFixed(2)} × the raw job at its own pace (${(sequential.netRedisCpuUsPerCall! / floor.netRedisCpuUsPerCall!).toFixed(2)} × net of the idle cluster)`,
      );
    }
    writeFileSync(new URL('../../../bench/cluster-results.json', import.meta.url), `${JSON.stringify({ when: new Date().toISOString(), calls, inFlight, bareClusterCpuMsPerSecond: bare, results }, null, 2)}\n`);
  } finally {
    for (const line of await teardown.run()) log(`  ${line}`);
  }
}

/** Call i is made by caller i mod the number of callers. */
function callOf(clients: ApiClient[]): (i: number) => Promise<void> {
  return async (i) => {
    await execAgent(clients[i % clients.length]!, { agentName: 'hello', inputs: { query: String(i) } });
  };
}

async function addCallers(databaseUrl: string, count: number): Promise<string[]> {
  const db = createDb(databaseUrl, 1);
  try {
    const keys: string[] = [];
    for (let i = 0; i < count; i++) keys.push((await addServiceAccount(db, `bench-${i + 2}`)).key);
    return keys;
  } finally {
    await db.destroy();
  }
}

let byCommand = false;

/** Runs `load` and reads every master's INFO before and after it. */
async function measure(phase: string, masters: string[], calls: number, load: () => Promise<LoadResult>): Promise<PhaseResult> {
  log(phase);
  const before = await Promise.all(masters.map(readCounters));
  const started = performance.now();
  const result = await load();
  const seconds = (performance.now() - started) / 1000;
  const after = await Promise.all(masters.map(readCounters));
  const commands = masters.map((_, i) => after[i]!.commands - before[i]!.commands);
  const cpu = masters.reduce((sum, _, i) => sum + after[i]!.cpuSeconds - before[i]!.cpuSeconds, 0);
  const total = commands.reduce((a, b) => a + b, 0);
  if (byCommand) {
    masters.forEach((master, i) => {
      const counted = [...after[i]!.perCommand].map(([name, n]) => [name, (n - (before[i]!.perCommand.get(name) ?? 0)) / calls] as const);
      const busiest = counted.filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]).slice(0, 30);
      log(`  ${master}: ${busiest.map(([name, n]) => `${name} ${n.toFixed(2)}`).join(', ')} (per call)`);
    });
  }
  return {
    phase,
    calls,
    callsPerSecond: result.callsPerSecond,
    p50Ms: result.p50,
    p99Ms: result.p99,
    commandsPerCall: total / calls,
    redisCpuUsPerCall: (cpu * 1e6) / calls,
    seconds,
    masterShare: Object.fromEntries(masters.map((master, i) => [master, (100 * commands[i]!) / Math.max(total, 1)])),
  };
}

/** The masters' Redis CPU, in ms per second, over `idleSeconds` in which the bench makes no call. */
async function idleCpuMsPerSecond(masters: string[]): Promise<number> {
  const before = await Promise.all(masters.map(readCounters));
  const started = performance.now();
  await delay(idleSeconds * 1000);
  const seconds = (performance.now() - started) / 1000;
  const after = await Promise.all(masters.map(readCounters));
  return (masters.reduce((sum, _, i) => sum + after[i]!.cpuSeconds - before[i]!.cpuSeconds, 0) * 1000) / seconds;
}

/** Commands served (INFO commandstats; INFO and CLUSTER, the bench's and the clients' topology reads, left out) and CPU used. */
async function readCounters(master: string): Promise<MasterCounters> {
  const node = connect(master);
  try {
    const stats = await node.info('commandstats');
    let commands = 0;
    const perCommand = new Map<string, number>();
    for (const match of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      if (match[1] === 'info' || match[1]!.startsWith('cluster')) continue;
      commands += Number(match[2]);
      perCommand.set(match[1]!, Number(match[2]));
    }
    const cpu = await node.info('cpu');
    const seconds = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0);
    return { commands, cpuSeconds: seconds('used_cpu_user') + seconds('used_cpu_sys'), perCommand };
  } finally {
    node.disconnect();
  }
}

async function masterNodes(seed: Redis): Promise<string[]> {
  const slots = (await seed.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
  return [...new Set(slots.map(([, , [host, port]]) => `${host}:${port}`))].sort();
}

function connect(master: string): Redis {
  const [host, port] = master.split(':');
  return new Redis({ host, port: Number(port), maxRetriesPerRequest: 1 });
}

async function deleteKeys(masters: string[], patterns: string[]): Promise<string> {
  let deleted = 0;
  for (const master of masters) {
    const node = connect(master);
    try {
      for (const pattern of patterns) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          for (const key of keys) deleted += await node.unlink(key);
        } while (cursor !== '0');
      }
    } finally {
      node.disconnect();
    }
  }
  return `${deleted} deleted`;
}

await main();
