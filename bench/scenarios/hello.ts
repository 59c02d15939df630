import pg from 'pg';
import type { ApiClient } from '../client.js';
import { execAgent } from '../exec.js';
import { openFloorRig } from '../floor.js';
import { withCpuCost } from '../cpu.js';
import { withRssPeaks } from '../rss.js';
import { cpuPerCall, cpuRows } from './cpu-rows.js';
import type { Scenario } from '../scenario.js';
import { runConcurrent, runSequential, summarize, timeEach } from '../stats.js';

/** (b) execAgent of the hello agent through the whole stack, each call on a new conversation. */

/** One hello call, its answer checked (`headers`: more request headers, an Idempotency-Key say). */
export async function callHello(client: ApiClient, query: string, headers?: Record<string, string>): Promise<void> {
  const response = await execAgent(client, { agentName: 'hello', inputs: { query } }, 'success', headers);
  const part = response.output?.[0];
  if (part?.type !== 'text' || part.text !== `Hello, ${query}`) throw new Error(`hello answered ${JSON.stringify(response.output)}`);
}

export const helloSequential: Scenario = {
  id: 'hello-sequential',
  title: '(b) execAgent hello, sequential',
  rows: [
    { id: 'hello.sequential.p50', label: '(b) hello sequential p50', unit: 'ms', floor: 'sequentialP50', target: { op: '<=', value: 1.5, ofFloor: true } },
    { id: 'hello.sequential.p99', label: '(b) hello sequential p99', unit: 'ms', floor: 'sequentialP99' },
  ],
  async run({ client, profile }) {
    await runSequential(profile.warmupCalls, (i) => callHello(client, `warm${i}`));
    const result = await runSequential(profile.sequentialCalls, (i) => callHello(client, `n${i}`));
    return {
      values: { 'hello.sequential.p50': result.p50, 'hello.sequential.p99': result.p99 },
      notes: [`${result.count} calls, ${Math.round(result.callsPerSecond)} calls/s, max ${result.max.toFixed(1)} ms`],
    };
  },
};

/** How many floor round trips, then hello calls, the paired scenario makes in a row before it switches. */
const pairedBlock = 50;

/**
 * (b) hello one at a time, alternating with the floor by blocks of `pairedBlock` calls (each side one
 * at a time, back to back, as when measured alone): the two p50s come from the same minutes of the
 * machine, whose speed drifts by 2× within an hour, so their ratio holds better than one against a
 * floor measured before the scenarios. A third block, alternated with them, times one durable
 * PostgreSQL commit (a row inserted and flushed to the WAL, as the product commits every run): what a
 * call that keeps anything pays on this disk that the floor, on a Redis that keeps nothing, does not.
 */
export const helloPaired: Scenario = {
  id: 'hello-paired',
  title: `(b) execAgent hello, sequential, alternating with the floor by blocks of ${pairedBlock}`,
  rows: [
    { id: 'hello.paired.ratio', label: '(b) hello sequential p50 ÷ the floor\'s, measured alternately', unit: '×', target: { op: '<=', value: 2 } },
    { id: 'hello.paired.p50', label: '(b) hello sequential p50, alternating', unit: 'ms' },
    { id: 'hello.paired.floorP50', label: '(b) floor round trip sequential p50, alternating', unit: 'ms' },
    { id: 'hello.paired.durableCommitP50', label: '(b) one durable PostgreSQL commit p50, alternating', unit: 'ms' },
    { id: 'hello.paired.durableRatio', label: '(b) hello sequential p50 ÷ (floor + one durable commit)', unit: '×' },
  ],
  async run({ client, profile, stack }) {
    const rig = await openFloorRig(stack.settings.redisUrl, `${stack.settings.queuePrefix}:paired`, profile.concurrency);
    const db = new pg.Client({ connectionString: stack.settings.databaseUrl });
    await db.connect();
    try {
      await db.query('create table bench_durable_commits (id bigserial primary key)');
      const commit = async () => void (await db.query('insert into bench_durable_commits default values'));
      await runSequential(profile.warmupCalls, (i) => rig.roundTrip(`w-${i}`));
      await runSequential(profile.warmupCalls, (i) => callHello(client, `w${i}`));
      await runSequential(profile.warmupCalls, commit);
      const hello: number[] = [];
      const floor: number[] = [];
      const commits: number[] = [];
      for (let done = 0; done < profile.sequentialCalls; done += pairedBlock) {
        floor.push(...(await timeEach(pairedBlock, (i) => rig.roundTrip(`p-${done + i}`))));
        hello.push(...(await timeEach(pairedBlock, (i) => callHello(client, `p${done + i}`))));
        commits.push(...(await timeEach(pairedBlock, commit)));
      }
      const [product, reference, durable] = [summarize(hello), summarize(floor), summarize(commits)];
      return {
        values: {
          'hello.paired.ratio': product.p50 / reference.p50,
          'hello.paired.p50': product.p50,
          'hello.paired.floorP50': reference.p50,
          'hello.paired.durableCommitP50': durable.p50,
          'hello.paired.durableRatio': product.p50 / (reference.p50 + durable.p50),
        },
        notes: [
          `${product.count} calls and ${reference.count} round trips; p99 ${product.p99.toFixed(1)} ms against the floor's ${reference.p99.toFixed(1)} ms`,
          `${durable.count} durable commits (synchronous_commit ${(await db.query<{ synchronous_commit: string }>('show synchronous_commit')).rows[0]?.synchronous_commit}), p99 ${durable.p99.toFixed(1)} ms`,
        ],
      };
    } finally {
      await db.end();
      await rig.close();
    }
  },
};

export const helloConcurrent: Scenario = {
  id: 'hello-concurrent',
  title: '(b) execAgent hello, 64 clients on new conversations (+ worker RSS)',
  rows: [
    { id: 'hello.concurrent.rate', label: '(b) hello 64 clients', unit: 'calls/s', floor: 'concurrentRate', target: { op: '>=', value: 1, ofFloor: true } },
    { id: 'hello.concurrent.p50', label: '(b) hello 64 clients p50', unit: 'ms', floor: 'concurrentP50' },
    { id: 'hello.concurrent.p99', label: '(b) hello 64 clients p99', unit: 'ms', floor: 'concurrentP99' },
    { id: 'memory.worker.peak', label: '(f) worker RSS peak during (b) 64 clients', unit: 'MB', target: { op: '<=', value: 400 } },
    { id: 'memory.web.peakHello', label: '(f) web RSS peak during (b) 64 clients', unit: 'MB' },
    ...cpuRows('(b) hello 64 clients'),
  ],
  async run({ client, profile, stack }) {
    await runConcurrent(profile.warmupCalls, profile.concurrency, (i) => callHello(client, `warm${i}`));
    const { result: cost, peaksMb } = await withRssPeaks([stack.worker.pid, stack.web.pid], () =>
      withCpuCost([stack.web.pid, stack.worker.pid], () =>
        runConcurrent(profile.concurrentCalls, profile.concurrency, (i) => callHello(client, `c${i}`)),
      ),
    );
    const { result } = cost;
    const [workerPeak, webPeak] = peaksMb;
    return {
      values: {
        'hello.concurrent.rate': result.callsPerSecond,
        'hello.concurrent.p50': result.p50,
        'hello.concurrent.p99': result.p99,
        'memory.worker.peak': workerPeak ?? Number.NaN,
        'memory.web.peakHello': webPeak ?? Number.NaN,
        ...cpuPerCall(cost, result.count),
      },
      notes: [`${result.count} calls by ${profile.concurrency} clients, max ${result.max.toFixed(1)} ms`],
    };
  },
};
