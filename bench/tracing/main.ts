import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createClient } from '../client.js';
import { withCpuCost } from '../cpu.js';
import { createFixture, dropDatabase } from '../fixture.js';
import { deleteKeysWithPrefix } from '../redis-keys.js';
import { callHello } from '../scenarios/hello.js';
import { freePort, startStack, type ProductProcess } from '../stack.js';
import { runConcurrent, type LoadResult } from '../stats.js';
import { cleanUpOnInterrupt, createTeardown } from '../teardown.js';

/**
 * `npm run bench:tracing [-- --rounds N --calls N --context-floor]`: what tracing costs (DESIGN §18). hello with 64
 * in flight through the product as the Procfile runs it (one web, one worker), on two fresh stacks
 * side by side: one with tracing off, one with it on (OTEL_EXPORTER_OTLP_ENDPOINT at an OTLP/HTTP
 * receiver this process runs, which counts what it is sent and answers at once). Each round measures
 * a block of calls on each, in turns (off then on, then on then off, …), so that a change in the
 * machine's speed weighs on both alike: calls/s on ÷ off per round and the median, beside the target
 * (≥ 0.85 ×), and the CPU the web and worker processes spent per call, which the machine's other load
 * sways less. `--context-floor` adds a third stack, tracing off but with one AsyncLocalStorage in use
 * (context-floor.ts): what the context manager's async hooks cost alone, measured in the same turns.
 * Writes bench/tracing-results.json.
 */

const redisUrl = 'redis://127.0.0.1:6379';
const postgresUrl = 'postgres://postgres@127.0.0.1:5432';
const log = (line: string) => process.stderr.write(`${line}\n`);
const agents = { hello: `export default async (sys) => sys.say('Hello, ' + (sys.query ?? 'world'))` };
const inFlight = 64;
/**
 * Worker CPU per call (ms) below which a block's calls were all answered by the web process: a web
 * process on a busy machine hands some to the worker (workers/runs/inline-admission.ts), which costs
 * each of those calls several times more whether traced or not, and swamps what tracing costs.
 */
const inlineWorkerMs = 0.05;

/** A stack with tracing off, on, or off with the context manager's async hooks on (`--context-floor`). */
type Mode = 'off' | 'on' | 'floor';

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

/** One block of calls on one stack: its load figures, the CPU its processes spent per call and what it exported. */
interface Block extends LoadResult {
  webCpuMsPerCall: number;
  workerCpuMsPerCall: number;
  exports: number;
  kilobytes: number;
}

function blockSummary(block: Block) {
  const round = (n: number) => Math.round(n * 100) / 100;
  return { callsPerSecond: round(block.callsPerSecond), p50: round(block.p50), webCpuMsPerCall: round(block.webCpuMsPerCall), workerCpuMsPerCall: round(block.workerCpuMsPerCall), exports: block.exports, kilobytes: block.kilobytes };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { rounds: { type: 'string' }, calls: { type: 'string' }, 'context-floor': { type: 'boolean' } } });
  const rounds = Number(values.rounds ?? 3);
  const calls = Number(values.calls ?? 3000);
  const modes: Mode[] = values['context-floor'] ? ['off', 'on', 'floor'] : ['off', 'on'];
  const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const databaseUrl = `${postgresUrl}/agentexec_tracing_${tag}`;
  const prefix = `agentexec-tracing-${tag}`;
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  teardown.add(`delete Redis keys ${prefix}*`, async () => `${await deleteKeysWithPrefix(redisUrl, prefix)} deleted`);
  teardown.add('drop the database', () => dropDatabase(databaseUrl));
  const receiver = await startReceiver();
  teardown.add('close the OTLP receiver', () => void receiver.server.close());
  const results: { round: number; off: Block; on: Block; floor?: Block; ratio: number; floorRatio?: number }[] = [];
  try {
    const fixture = await createFixture(databaseUrl, agents);
    const processes: ProductProcess[] = [];
    teardown.add('stop the stacks', async () => (await Promise.all(processes.map((p) => p.stop(15_000)))).join(', '));
    const startOne = async (mode: Mode, queuePrefix: string) => {
      const env: Record<string, string> = mode === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } : mode === 'floor' ? { BENCH_NODE_IMPORT: fileURLToPath(new URL('./context-floor.js', import.meta.url)) } : {};
      const stack = await startStack({ databaseUrl, redisUrl, queuePrefix, port: await freePort(), maxAgentRuntimeMs: 30_000, env }, (p) => processes.push(p));
      const client = createClient(stack.baseUrl, { bearerKey: fixture.bearerKey });
      teardown.add(`close the ${mode} stack's client`, () => client.close());
      await runConcurrent(1000, inFlight, (i) => callHello(client, `warm${i}`));
      return { pids: [stack.web.pid, stack.worker.pid], client };
    };
    const stacks: Partial<Record<Mode, Awaited<ReturnType<typeof startOne>>>> = {};
    for (const mode of modes) stacks[mode] = await startOne(mode, `${prefix}-${mode}`);
    let blockNumber = 0;
    const measure = async (mode: Mode): Promise<Block> => {
      const { pids, client } = stacks[mode]!;
      const before = { requests: receiver.requests, bytes: receiver.bytes };
      blockNumber += 1;
      const cost = await withCpuCost(pids, () => runConcurrent(calls, inFlight, (i) => callHello(client, `b${blockNumber}c${i}`)));
      const [webMs = 0, workerMs = 0] = cost.processMs;
      return { ...cost.result, webCpuMsPerCall: webMs / calls, workerCpuMsPerCall: workerMs / calls, exports: receiver.requests - before.requests, kilobytes: Math.round((receiver.bytes - before.bytes) / 1024) };
    };
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? modes : [...modes].reverse();
      const measured: Partial<Record<Mode, Block>> = {};
      for (const mode of order) measured[mode] = await measure(mode);
      const { off, on, floor } = measured as Record<'off' | 'on', Block> & { floor?: Block };
      const result = { round, off, on, ratio: on.callsPerSecond / off.callsPerSecond, ...(floor ? { floor, floorRatio: floor.callsPerSecond / off.callsPerSecond } : {}) };
      results.push(result);
      const cpu = (b: Block) => `web ${b.webCpuMsPerCall.toFixed(2)} + worker ${b.workerCpuMsPerCall.toFixed(2)} ms CPU/call`;
      const floorLine = floor ? `; context floor ${Math.round(floor.callsPerSecond)} calls/s (${cpu(floor)}): ${result.floorRatio!.toFixed(2)} ×` : '';
      log(`round ${round} (${order.join(', then ')}): off ${Math.round(off.callsPerSecond)} calls/s (p50 ${off.p50.toFixed(1)} ms, ${cpu(off)}), on ${Math.round(on.callsPerSecond)} calls/s (p50 ${on.p50.toFixed(1)} ms, ${cpu(on)}; ${on.exports} exports, ${on.kilobytes} KB): ${result.ratio.toFixed(2)} ×${floorLine}`);
    }
    const ratios = results.map((r) => r.ratio).sort((a, b) => a - b);
    const median = ratios[Math.floor(ratios.length / 2)]!;
    // A round where both web processes answered (nearly) every call themselves compares the path this bench is about.
    const inline = results.filter((r) => r.off.workerCpuMsPerCall < inlineWorkerMs && r.on.workerCpuMsPerCall < inlineWorkerMs);
    if (inline.length > 0) {
      const inlineRatios = inline.map((r) => r.ratio).sort((a, b) => a - b);
      const webCpu = (mode: 'off' | 'on') => inline.reduce((sum, r) => sum + r[mode].webCpuMsPerCall, 0) / inline.length;
      console.log(
        `rounds where both web processes answered every call themselves: ${inline.length} of ${rounds}, median ${inlineRatios[Math.floor(inlineRatios.length / 2)]!.toFixed(2)} × (${inlineRatios.map((r) => r.toFixed(2)).join(', ')}); web CPU per call off ${webCpu('off').toFixed(3)} ms, on ${webCpu('on').toFixed(3)} ms: off ÷ on ${(webCpu('off') / webCpu('on')).toFixed(2)} ×`,
      );
    } else console.log(`no round where both web processes answered every call themselves (a worker took some: the machine was too busy for a fair comparison)`);
    if (modes.includes('floor')) {
      const floors = results.map((r) => r.floorRatio!).sort((a, b) => a - b);
      // Web CPU per call where all three web processes answered every call themselves (the only fair rounds).
      const allInline = results.filter((r) => modes.every((mode) => r[mode]!.workerCpuMsPerCall < inlineWorkerMs));
      const webCpu = (mode: Mode) => (allInline.reduce((sum, r) => sum + r[mode]!.webCpuMsPerCall, 0) / allInline.length).toFixed(3);
      const cpuLine = allInline.length > 0 ? `; in the ${allInline.length} rounds all three answered every call themselves, web CPU per call off ${webCpu('off')} ms, context floor ${webCpu('floor')} ms, on ${webCpu('on')} ms` : '';
      console.log(`context manager alone (one AsyncLocalStorage, no span) ÷ off: median ${floors[Math.floor(floors.length / 2)]!.toFixed(2)} × (${floors.map((r) => r.toFixed(2)).join(', ')})${cpuLine}`);
    }
    const cpuPerCall = (mode: 'off' | 'on') => results.reduce((sum, r) => sum + r[mode].webCpuMsPerCall + r[mode].workerCpuMsPerCall, 0) / results.length;
    const cpuRatio = cpuPerCall('off') / cpuPerCall('on');
    console.log(`hello ${inFlight} in flight, tracing on ÷ off: median ${median.toFixed(2)} × over ${rounds} rounds (${ratios.map((r) => r.toFixed(2)).join(', ')}) — target ≥ 0.85 ×: ${median >= 0.85 ? 'met' : 'NOT met'}`);
    console.log(`CPU per call (web + worker): off ${cpuPerCall('off').toFixed(2)} ms, on ${cpuPerCall('on').toFixed(2)} ms: off ÷ on ${cpuRatio.toFixed(2)} × (the calls/s ratio a CPU-bound machine would show)`);
    writeFileSync(
      new URL('../../../bench/tracing-results.json', import.meta.url),
      `${JSON.stringify({ when: new Date().toISOString(), calls, inFlight, median, cpuRatio, results: results.map(({ off, on, floor, ...r }) => ({ ...r, off: blockSummary(off), on: blockSummary(on), ...(floor ? { floor: blockSummary(floor) } : {}) })) }, null, 2)}\n`,
    );
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
