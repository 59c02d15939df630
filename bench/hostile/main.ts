import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createDb } from '../../db/database.js';
import { createClient, jsonOf, type ApiClient } from '../client.js';
import { addServiceAccount, createFixture, dropDatabase } from '../fixture.js';
import { deleteKeysWithPrefix } from '../redis-keys.js';
import { readRssMb, withRssPeaks } from '../rss.js';
import { freePort, startStack, type Stack, type ProductProcess } from '../stack.js';
import { delay, summarize, type LatencySummary } from '../stats.js';
import { cleanUpOnInterrupt, createTeardown } from '../teardown.js';

/**
 * `npm run bench:hostile [-- --cpu-ms N] [-- --nice N]`: what one hostile caller does to the others
 * (DESIGN §12), on the product as the Procfile runs it (one web, one worker). First the quiet
 * baseline: /healthz probed every 20 ms and another caller's hello one at a time. Then, with the
 * same probes, one caller's CPU attacks (12 distinct busy agents at once, then 48 runs of one) and
 * memory attacks (each buffer an agent could grow). Prints /healthz and the bystander's hello p50 /
 * p99 / max beside the quiet ones and the targets (p99 ≤ 100 ms and ≤ 3 × quiet; hello ≤ 1 s), the
 * attacks' result codes, and the peak RSS of web and worker beside what DESIGN §12 allows them
 * (AGENT_MEMORY_MB × isolates in use + base); writes bench/hostile-results.json.
 */

const redisUrl = 'redis://127.0.0.1:6379';
const postgresUrl = 'postgres://postgres@127.0.0.1:5432';
const log = (line: string) => process.stderr.write(`${line}\n`);
const agentMemoryMb = 64;

const spin = (i: number) => `export default async function (sys) { const mine = ${i}; while (true) {} }`;
const memoryAttacks: Record<string, string> = {
  resizableArrayBuffer: `const b = new ArrayBuffer(1, {maxByteLength: 2 ** 31}); b.resize(2 ** 31); new Uint8Array(b).fill(7);`,
  growableSharedArrayBuffer: `const b = new SharedArrayBuffer(1, {maxByteLength: 2 ** 31}); b.grow(2 ** 31); new Uint8Array(b).fill(7);`,
  plainBuffers: `const kept = []; for (let i = 0; i < 32; i++) kept.push(new Uint8Array(64 * 1024 * 1024).fill(1));`,
  smallObjectsInAMap: `const kept = new Map(); for (let i = 0; ; i++) kept.set(i, [i]);`,
  smallObjectsInAnArray: `const kept = []; for (let i = 0; ; i++) kept.push({ i });`,
};

interface Probed {
  healthz: LatencySummary;
  hello: LatencySummary;
  helloFailures: number;
}

interface Attack {
  name: string;
  probes: Probed;
  resultCodes: Record<string, number>;
  seconds: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { 'cpu-ms': { type: 'string' }, nice: { type: 'string' } } });
  const cpuMs = Number(values['cpu-ms'] ?? 5000);
  const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const queuePrefix = `agentexec-hostile-${tag}`;
  const databaseUrl = `${postgresUrl}/agentexec_hostile_${tag}`;
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  teardown.add(`delete Redis keys ${queuePrefix}*`, async () => `${await deleteKeysWithPrefix(redisUrl, queuePrefix)} deleted`);
  teardown.add('drop the database', () => dropDatabase(databaseUrl));
  try {
    const agents: Record<string, string> = { hello: `export default async function (sys) { sys.say('Hello, ' + sys.query); }`, spinner: spin(0) };
    for (let i = 1; i <= 12; i++) agents[`spin${i}`] = spin(i);
    for (const [name, body] of Object.entries(memoryAttacks)) agents[name] = `export default async function (sys) { ${body} sys.say('survived'); }`;
    const fixture = await createFixture(databaseUrl, agents);
    const attackerKey = await addAccount(databaseUrl, 'attacker');
    const processes: ProductProcess[] = [];
    teardown.add('stop web and worker', () => Promise.all(processes.map((p) => p.stop(10_000))));
    const env: Record<string, string> = { AGENT_CPU_MS: String(cpuMs), AGENT_MEMORY_MB: String(agentMemoryMb) };
    if (values.nice !== undefined) env.AGENT_THREAD_NICE = values.nice;
    const stack = await startStack({ databaseUrl, redisUrl, queuePrefix, port: await freePort(), maxAgentRuntimeMs: 60_000, env }, (p) => processes.push(p));
    const bystander = createClient(stack.baseUrl, { bearerKey: fixture.bearerKey });
    const attacker = createClient(stack.baseUrl, { bearerKey: attackerKey });
    const prober = createClient(stack.baseUrl, { bearerKey: fixture.bearerKey, maxSockets: 1 });
    teardown.add('close the HTTP clients', () => [bystander, attacker, prober].forEach((c) => c.close()));
    for (let i = 0; i < 200; i++) await hello(bystander, i);

    const quiet = await probeWhile(prober, bystander, delay(5000));
    log(`quiet: /healthz p99 ${quiet.healthz.p99.toFixed(1)} ms, hello p99 ${quiet.hello.p99.toFixed(1)} ms`);
    const attacks: Attack[] = [];
    const cpuAttack = async (name: string, agentNames: string[]) => {
      const started = performance.now();
      const answers = Promise.all(agentNames.map((agentName) => attacker.post('/api/exec/execAgent', { agentName, inputs: {} })));
      const probes = await probeWhile(prober, bystander, answers);
      const resultCodes = countCodes((await answers).map((answer) => jsonOf<{ resultCode: string }>(answer).resultCode));
      attacks.push({ name, probes, resultCodes, seconds: (performance.now() - started) / 1000 });
      log(`${name}: /healthz p99 ${probes.healthz.p99.toFixed(1)} ms (max ${probes.healthz.max.toFixed(1)}), hello p99 ${probes.hello.p99.toFixed(1)} ms, ${JSON.stringify(resultCodes)}`);
    };
    await cpuAttack('12 distinct busy agents', Array.from({ length: 12 }, (_, i) => `spin${i + 1}`));
    await cpuAttack('48 runs of one busy agent', Array.from({ length: 48 }, () => 'spinner'));

    const memory = await memoryRows(stack, attacker);
    const results = { at: new Date().toISOString(), agentCpuMs: cpuMs, agentThreadNice: values.nice ?? 'default', quiet, attacks, memory };
    console.log(formatReport(quiet, attacks, memory));
    writeFileSync(new URL('../../../bench/hostile-results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    for (const line of await teardown.run()) log(line);
  }
}

async function addAccount(databaseUrl: string, name: string): Promise<string> {
  const db = createDb(databaseUrl, 1);
  try {
    return (await addServiceAccount(db, name)).key;
  } finally {
    await db.destroy();
  }
}

async function hello(client: ApiClient, i: number): Promise<boolean> {
  const answer = await client.post('/api/exec/execAgent', { agentName: 'hello', inputs: { query: String(i) } });
  return answer.status === 200 && jsonOf<{ resultCode: string }>(answer).resultCode === 'success';
}

/** /healthz every 20 ms, and the bystander's hello one at a time with 100 ms between, until `until` settles. */
async function probeWhile(prober: ApiClient, bystander: ApiClient, until: Promise<unknown>): Promise<Probed> {
  let going = true;
  const done = until.finally(() => (going = false));
  const healthz: number[] = [];
  const helloTimes: number[] = [];
  let helloFailures = 0;
  const probeHealth = (async () => {
    while (going) {
      const t0 = performance.now();
      await prober.get('/healthz');
      healthz.push(performance.now() - t0);
      await delay(20);
    }
  })();
  const probeHello = (async () => {
    for (let i = 0; going; i++) {
      const t0 = performance.now();
      if (!(await hello(bystander, i))) helloFailures += 1;
      helloTimes.push(performance.now() - t0);
      await delay(100);
    }
  })();
  await Promise.all([done, probeHealth, probeHello]);
  return { healthz: summarize(healthz), hello: summarize(helloTimes), helloFailures };
}

interface MemoryRow {
  attack: string;
  resultCode: string;
  webPeakMb: number;
  workerPeakMb: number;
  /** What DESIGN §12 lets each process reach: its RSS before + AGENT_MEMORY_MB × the isolate the attack runs in. */
  allowedMb: { web: number; worker: number };
}

/** Each memory attack alone, with the RSS peaks of web and worker. */
async function memoryRows(stack: Stack, attacker: ApiClient): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = [];
  for (const attack of Object.keys(memoryAttacks)) {
    const base = { web: readRssMb(stack.web.pid), worker: readRssMb(stack.worker.pid) };
    const { result, peaksMb } = await withRssPeaks([stack.web.pid, stack.worker.pid], () => attacker.post('/api/exec/execAgent', { agentName: attack, inputs: {} }));
    const resultCode = jsonOf<{ resultCode: string }>(result).resultCode;
    const row = { attack, resultCode, webPeakMb: round(peaksMb[0]!), workerPeakMb: round(peaksMb[1]!), allowedMb: { web: round(base.web + agentMemoryMb), worker: round(base.worker + agentMemoryMb) } };
    rows.push(row);
    log(`${attack}: ${resultCode}, web peak ${row.webPeakMb} MB (allowed ${row.allowedMb.web}), worker peak ${row.workerPeakMb} MB (allowed ${row.allowedMb.worker})`);
  }
  return rows;
}

function countCodes(codes: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const code of codes) counts[code] = (counts[code] ?? 0) + 1;
  return counts;
}

function formatReport(quiet: Probed, attacks: Attack[], memory: MemoryRow[]): string {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const lines = [`quiet: /healthz p50 ${ms(quiet.healthz.p50)} p99 ${ms(quiet.healthz.p99)}; hello p50 ${ms(quiet.hello.p50)} p99 ${ms(quiet.hello.p99)}`];
  for (const attack of attacks) {
    const { healthz, hello: helloTimes, helloFailures } = attack.probes;
    const ratio = healthz.p99 / quiet.healthz.p99;
    lines.push(
      `${attack.name} (${attack.seconds.toFixed(1)} s, ${JSON.stringify(attack.resultCodes)}):`,
      `  /healthz p50 ${ms(healthz.p50)} p99 ${ms(healthz.p99)} max ${ms(healthz.max)} — ${ratio.toFixed(2)} × quiet p99 (target ≤ 100 ms and ≤ 3 ×): ${healthz.p99 <= 100 && ratio <= 3 ? 'met' : 'NOT met'}`,
      `  other caller's hello p50 ${ms(helloTimes.p50)} p99 ${ms(helloTimes.p99)} max ${ms(helloTimes.max)}, ${helloFailures} failed (target max ≤ 1 s): ${helloTimes.max <= 1000 && helloFailures === 0 ? 'met' : 'NOT met'}`,
    );
  }
  for (const row of memory) {
    const met = row.webPeakMb <= row.allowedMb.web && row.workerPeakMb <= row.allowedMb.worker && row.resultCode !== 'success';
    lines.push(`memory ${row.attack}: ${row.resultCode}; web peak ${row.webPeakMb} MB of ${row.allowedMb.web} allowed, worker peak ${row.workerPeakMb} MB of ${row.allowedMb.worker}: ${met ? 'met' : 'NOT met'}`);
  }
  return lines.join('\n');
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
