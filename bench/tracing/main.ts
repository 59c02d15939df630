import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createClient } from '../client.js';
import { createFixture, dropDatabase } from '../fixture.js';
import { deleteKeysWithPrefix } from '../redis-keys.js';
import { callHello } from '../scenarios/hello.js';
import { freePort, startStack, type ProductProcess } from '../stack.js';
import { runConcurrent, type LoadResult } from '../stats.js';
import { cleanUpOnInterrupt, createTeardown } from '../teardown.js';

/**
 * `npm run bench:tracing [-- --rounds N --calls N]`: what tracing costs (DESIGN §18). hello with 64
 * in flight through the product as the Procfile runs it (one web, one worker), with tracing off and
 * then on (OTEL_EXPORTER_OTLP_ENDPOINT at an OTLP/HTTP receiver this process runs, which counts what
 * it is sent and answers at once), a fresh stack for each, alternating for N rounds (3): calls/s on ÷
 * off per round and the median, beside the target (≥ 0.85 ×). Writes bench/tracing-results.json.
 */

const redisUrl = 'redis://127.0.0.1:6379';
const postgresUrl = 'postgres://postgres@127.0.0.1:5432';
const log = (line: string) => process.stderr.write(`${line}\n`);
const agents = { hello: `export default async (sys) => sys.say('Hello, ' + (sys.query ?? 'world'))` };
const inFlight = 64;

interface Receiver {
  server: Server;
  url: string;
  requests: number;
  bytes: number;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    server: createServer((req, res) => {
      req.on('data', (chunk: Buffer) => (receiver.bytes += chunk.length));
      req.on('end', () => {
        receiver.requests += 1;
        res.writeHead(200, { 'Content-Type': req.headers['content-type'] ?? 'application/json' }).end(req.headers['content-type']?.includes('json') ? '{}' : '');
      });
    }),
    url: '',
    requests: 0,
    bytes: 0,
  };
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
  return receiver;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { rounds: { type: 'string' }, calls: { type: 'string' } } });
  const rounds = Number(values.rounds ?? 3);
  const calls = Number(values.calls ?? 3000);
  const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const databaseUrl = `${postgresUrl}/agentexec_tracing_${tag}`;
  const prefix = `agentexec-tracing-${tag}`;
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  teardown.add(`delete Redis keys ${prefix}*`, async () => `${await deleteKeysWithPrefix(redisUrl, prefix)} deleted`);
  teardown.add('drop the database', () => dropDatabase(databaseUrl));
  const receiver = await startReceiver();
  teardown.add('close the OTLP receiver', () => receiver.server.close());
  const results: { round: number; off: LoadResult; on: LoadResult; ratio: number; exports: number; kilobytes: number }[] = [];
  try {
    const fixture = await createFixture(databaseUrl, agents);
    let stackNumber = 0;
    const measure = async (tracing: boolean): Promise<LoadResult> => {
      const processes: ProductProcess[] = [];
      stackNumber += 1;
      const env: Record<string, string> = tracing ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } : {};
      const stack = await startStack({ databaseUrl, redisUrl, queuePrefix: `${prefix}-${stackNumber}`, port: await freePort(), maxAgentRuntimeMs: 30_000, env }, (p) => processes.push(p));
      const client = createClient(stack.baseUrl, { bearerKey: fixture.bearerKey });
      try {
        await runConcurrent(1000, inFlight, (i) => callHello(client, `warm${i}`));
        return await runConcurrent(calls, inFlight, (i) => callHello(client, `c${i}`));
      } finally {
        client.close();
        await Promise.all(processes.map((p) => p.stop(15_000)));
      }
    };
    for (let round = 1; round <= rounds; round++) {
      const before = { requests: receiver.requests, bytes: receiver.bytes };
      const off = await measure(false);
      const on = await measure(true);
      const result = { round, off, on, ratio: on.callsPerSecond / off.callsPerSecond, exports: receiver.requests - before.requests, kilobytes: Math.round((receiver.bytes - before.bytes) / 1024) };
      results.push(result);
      log(`round ${round}: off ${Math.round(off.callsPerSecond)} calls/s (p50 ${off.p50.toFixed(1)} ms), on ${Math.round(on.callsPerSecond)} calls/s (p50 ${on.p50.toFixed(1)} ms): ${result.ratio.toFixed(2)} ×; ${result.exports} exports, ${result.kilobytes} KB`);
    }
    const ratios = results.map((r) => r.ratio).sort((a, b) => a - b);
    const median = ratios[Math.floor(ratios.length / 2)]!;
    console.log(`hello ${inFlight} in flight, tracing on ÷ off: median ${median.toFixed(2)} × over ${rounds} rounds (${ratios.map((r) => r.toFixed(2)).join(', ')}) — target ≥ 0.85 ×: ${median >= 0.85 ? 'met' : 'NOT met'}`);
    writeFileSync(new URL('../../../bench/tracing-results.json', import.meta.url), `${JSON.stringify({ when: new Date().toISOString(), calls, inFlight, median, results: results.map(({ off, on, ...r }) => ({ ...r, offCallsPerSecond: off.callsPerSecond, onCallsPerSecond: on.callsPerSecond, offP50: off.p50, onP50: on.p50 })) }, null, 2)}\n`);
  } finally {
    for (const line of await teardown.run()) log(`  ${line}`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
