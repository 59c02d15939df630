import { randomUUID } from 'node:crypto';
import type { ApiClient } from '../client.js';
import { callHello } from './hello.js';
import type { Scenario } from '../scenario.js';
import { runConcurrent, runSequential, type LoadResult } from '../stats.js';

/**
 * (b) hello as the TypeScript client sends it, with a fresh Idempotency-Key on every call, against
 * hello without one. The two alternate by blocks, 64 in flight and then one at a time, so that each
 * ratio compares the same minutes of the machine.
 */

const blocks = 4;

function callHelloKeyed(client: ApiClient, query: string, keyed: boolean): Promise<void> {
  return callHello(client, query, keyed ? { 'Idempotency-Key': randomUUID() } : undefined);
}

/** Calls/s and p50 of each side over `blocks` alternating blocks of `perBlock` calls. */
async function alternate(perBlock: number, run: (count: number, call: (i: number) => Promise<void>) => Promise<LoadResult>, client: ApiClient) {
  const sides = { keyed: [] as LoadResult[], plain: [] as LoadResult[] };
  for (let block = 0; block < blocks; block++) {
    sides.plain.push(await run(perBlock, (i) => callHelloKeyed(client, `p${block}-${i}`, false)));
    sides.keyed.push(await run(perBlock, (i) => callHelloKeyed(client, `k${block}-${i}`, true)));
  }
  const rate = (results: LoadResult[]) => results.reduce((sum, r) => sum + r.count, 0) / results.reduce((sum, r) => sum + r.count / r.callsPerSecond, 0);
  const p50 = (results: LoadResult[]) => results.map((r) => r.p50).sort((a, b) => a - b)[Math.floor(results.length / 2)]!;
  return { keyedRate: rate(sides.keyed), plainRate: rate(sides.plain), keyedP50: p50(sides.keyed), plainP50: p50(sides.plain) };
}

export const helloKeyed: Scenario = {
  id: 'hello-keyed',
  title: `(b) execAgent hello with a fresh Idempotency-Key each (as the client sends it) ÷ without, alternating by ${blocks} blocks`,
  rows: [
    { id: 'hello.keyed.concurrentRatio', label: '(b) hello 64 clients, keyed ÷ not keyed (calls/s)', unit: '×', target: { op: '>=', value: 0.9 } },
    { id: 'hello.keyed.sequentialRatio', label: '(b) hello one at a time, keyed ÷ not keyed (calls/s)', unit: '×', target: { op: '>=', value: 0.9 } },
    { id: 'hello.keyed.concurrentRate', label: '(b) hello 64 clients, keyed', unit: 'calls/s' },
    { id: 'hello.keyed.sequentialP50', label: '(b) hello one at a time, keyed, p50', unit: 'ms' },
  ],
  async run({ client, profile }) {
    await runConcurrent(profile.warmupCalls, profile.concurrency, (i) => callHelloKeyed(client, `warm${i}`, true));
    const concurrent = await alternate(Math.ceil(profile.concurrentCalls / blocks), (count, call) => runConcurrent(count, profile.concurrency, call), client);
    const sequential = await alternate(Math.ceil(profile.sequentialCalls / blocks), runSequential, client);
    return {
      values: {
        'hello.keyed.concurrentRatio': concurrent.keyedRate / concurrent.plainRate,
        'hello.keyed.sequentialRatio': sequential.keyedRate / sequential.plainRate,
        'hello.keyed.concurrentRate': concurrent.keyedRate,
        'hello.keyed.sequentialP50': sequential.keyedP50,
      },
      notes: [
        `64 in flight: keyed ${Math.round(concurrent.keyedRate)} calls/s (p50 ${concurrent.keyedP50.toFixed(1)} ms), not keyed ${Math.round(concurrent.plainRate)} calls/s (p50 ${concurrent.plainP50.toFixed(1)} ms)`,
        `one at a time: keyed ${Math.round(sequential.keyedRate)} calls/s (p50 ${sequential.keyedP50.toFixed(1)} ms), not keyed ${Math.round(sequential.plainRate)} calls/s (p50 ${sequential.plainP50.toFixed(1)} ms)`,
      ],
    };
  },
};
