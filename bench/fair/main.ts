import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createSecretBox } from '../../shared/secret-box.js';
import { createDb, type Db } from '../../db/database.js';
import { upsertWebhook } from '../../db/webhooks.repository.js';
import { createClient, jsonOf, type ApiClient } from '../client.js';
import { addServiceAccount, createFixture, dropDatabase } from '../fixture.js';
import { openFloorRig, type FloorRig } from '../floor.js';
import { deleteKeysWithPrefix } from '../redis-keys.js';
import { freePort, startStack, type ProductProcess } from '../stack.js';
import { delay, summarize, type LatencySummary } from '../stats.js';
import { cleanUpOnInterrupt, createTeardown } from '../teardown.js';

/**
 * `npm run bench:fair [-- --flood N --plain N]`: one caller's flood against the others (DESIGN §16),
 * on the product as the Procfile runs it (one web, one worker). Caller A floods (N background runs of
 * a 2 s agent at once, 5,000, then 200 plain calls in flight), caller B continues its conversation once
 * a second, caller C submits a run once a second whose webhook goes to a receiver that answers at once,
 * while A's receiver never answers. Reported in one run: B's wait p50/p99/max alone and under A's flood
 * (a call of a quick agent: its latency is its wait), C's webhook delay, and A's runs/s alone and under
 * the flood; beside the targets (B's p99 ≤ 1.5 × alone and max ≤ 1 s; C's webhook p99 ≤ 2 s). Beside
 * each of B's calls, the floor (bench/floor.ts: a raw BullMQ round trip on the same Redis) makes one
 * round trip, alone and under the flood: its own p99 ratio is what the machine's two cores, saturated
 * by A's flood, do to the least a queued call can cost. Writes bench/fair-results.json.
 */

const redisUrl = 'redis://127.0.0.1:6379';
const postgresUrl = 'postgres://postgres@127.0.0.1:5432';
const log = (line: string) => process.stderr.write(`${line}\n`);
const agents = {
  work: `export default async function (sys) { await sys.sleep(2000); sys.say('worked'); }`,
  quick: `export default async function (sys) { sys.say('quick ' + (sys.query ?? '')); }`,
};

interface Account {
  id: string;
  key: string;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { flood: { type: 'string' }, plain: { type: 'string' }, 'alone-only': { type: 'boolean' } } });
  const flood = Number(values.flood ?? 5000);
  const plain = Number(values.plain ?? 200);
  const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const queuePrefix = `agentexec-fair-${tag}`;
  const databaseUrl = `${postgresUrl}/agentexec_fair_${tag}`;
  const secretsKey = randomBytes(32).toString('base64url');
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  teardown.add(`delete Redis keys ${queuePrefix}*`, async () => `${await deleteKeysWithPrefix(redisUrl, queuePrefix)} deleted`);
  teardown.add('drop the database', () => dropDatabase(databaseUrl));
  try {
    await createFixture(databaseUrl, agents);
    const db = createDb(databaseUrl, 2);
    teardown.add('close the database', () => db.destroy());
    const hanging = await startReceiver('hang');
    const answering = await startReceiver('answer');
    teardown.add('close the receivers', () => [hanging, answering].forEach((r) => (r.server.closeAllConnections(), r.server.close())));
    const [a, b, c] = [await addAccount(db, 'a'), await addAccount(db, 'b'), await addAccount(db, 'c')];
    const box = createSecretBox(secretsKey);
    await upsertWebhook(db, a.id, hanging.url, box.seal(`whsec_${randomBytes(24).toString('base64')}`));
    await upsertWebhook(db, c.id, answering.url, box.seal(`whsec_${randomBytes(24).toString('base64')}`));
    const processes: ProductProcess[] = [];
    teardown.add('stop web and worker', () => Promise.all(processes.map((p) => p.stop(15_000))));
    const env = { SECRETS_KEY: secretsKey, WEBHOOK_ALLOW: '127.0.0.1', ...(process.env.WORKER_CONCURRENCY ? { WORKER_CONCURRENCY: process.env.WORKER_CONCURRENCY } : {}) };
    const stack = await startStack({ databaseUrl, redisUrl, queuePrefix, port: await freePort(), maxAgentRuntimeMs: 60_000, env }, (p) => processes.push(p));
    const clientOf = (account: Account) => createClient(stack.baseUrl, { bearerKey: account.key });
    const [clientA, clientB, clientC] = [clientOf(a), clientOf(b), clientOf(c)];
    teardown.add('close the HTTP clients', () => [clientA, clientB, clientC].forEach((client) => client.close()));

    const convid = jsonOf<{ convid: string }>(await clientB.post('/api/exec/execAgent', { agentName: 'quick', inputs: {} })).convid;
    for (let i = 0; i < 100; i++) await clientB.post('/api/exec/execAgent', { agentName: 'quick', convid, inputs: { query: 'warm' } });

    log('A alone');
    const aloneRate = await floodOf(clientA, db, a, flood, plain);
    log(`A alone: ${aloneRate.toFixed(1)} runs/s`);
    // --alone-only: A's runs/s alone and nothing more, to compare two builds in turn (the fairness machinery's cost).
    if (values['alone-only']) {
      console.log(`A alone: ${aloneRate.toFixed(1)} runs/s`);
      return;
    }
    const floor = await openFloorRig(redisUrl, `${queuePrefix}:floor`, 1);
    teardown.add('close the floor', () => floor.close());
    let floorTrips = 0;
    const floorTrip = async () => {
      const t0 = performance.now();
      await floor.roundTrip(`f-${(floorTrips += 1)}`);
      return performance.now() - t0;
    };
    for (let i = 0; i < 20; i++) await floorTrip();

    log('B alone');
    const floorAlone: number[] = [];
    const bAlone = await everySecond(20, async () => {
      const b = await callB(clientB, convid);
      floorAlone.push(await floorTrip());
      return b;
    });

    log('A floods while B calls and C submits');
    let flooding = true;
    const floodDone = (async () => {
      const rate = await floodOf(clientA, db, a, flood, plain);
      flooding = false;
      return rate;
    })();
    const bUnder: number[] = [];
    const bRequestIds: string[] = [];
    const cDelays: number[] = [];
    const floorUnder: number[] = [];
    const others = (async () => {
      while (flooding) {
        const tick = delay(1000);
        bUnder.push(await callB(clientB, convid, bRequestIds));
        floorUnder.push(await floorTrip());
        void submitC(clientC, answering).then((ms) => cDelays.push(ms));
        await tick;
      }
    })();
    const floodRate = await floodDone;
    await others;
    const results = {
      at: new Date().toISOString(),
      flood,
      plain,
      bAlone: summarize(bAlone),
      bUnderFlood: summarize(bUnder),
      bUnderFloodPhases: await phasesOf(db, bRequestIds),
      floorAlone: summarize(floorAlone),
      floorUnderFlood: summarize(floorUnder),
      cWebhookDelay: summarize(cDelays),
      aRunsPerSecond: { alone: round(aloneRate), underFlood: round(floodRate) },
      hangingReceiverHeldAtOnce: hanging.mostOpen,
    };
    console.log(formatReport(results));
    writeFileSync(new URL('../../../bench/fair-results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    for (const line of await teardown.run()) log(line);
  }
}

function addAccount(db: Db, name: string): Promise<Account> {
  return addServiceAccount(db, `fair-${name}`);
}

/**
 * `count` background runs of the 2 s agent, submitted 64 at a time, then `plain` calls of it in flight
 * at once; runs/s from the first submit to the last run's end.
 */
async function floodOf(client: ApiClient, db: Db, account: Account, count: number, plain = 0): Promise<number> {
  const before = await endedRuns(db, account);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < count) {
        next += 1;
        const answer = await client.post('/api/exec/submit', { agentName: 'work', inputs: {} });
        if (answer.status !== 202) throw new Error(`submit: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }),
  );
  // With its backlog still queued, some plain calls meet A's runsInFlight (5,000): those are refused 429 and never run.
  const answers = await Promise.all(Array.from({ length: plain }, () => client.post('/api/exec/execAgent', { agentName: 'work', inputs: {} })));
  const total = count + answers.filter((answer) => answer.status === 200).length;
  const refused = answers.filter((answer) => answer.status === 429).length;
  if (refused > 0) log(`  ${refused} of A's ${plain} plain calls refused 429 (runsInFlight)`);
  while ((await endedRuns(db, account)) - before < total) await delay(250);
  return total / ((performance.now() - started) / 1000);
}

async function endedRuns(db: Db, account: Account): Promise<number> {
  const row = await db.selectFrom('executions').select((eb) => eb.fn.countAll().as('n')).where('principal_id', '=', account.id).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** B's call on its conversation: a quick agent, so its latency is its wait. */
async function callB(client: ApiClient, convid: string, requestIds: string[] = []): Promise<number> {
  const requestId = randomUUID();
  const t0 = performance.now();
  const answer = await client.post('/api/exec/execAgent', { agentName: 'quick', convid, inputs: { query: 'b' } }, { 'x-request-id': requestId });
  if (answer.status !== 200) throw new Error(`B: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
  requestIds.push(requestId);
  return performance.now() - t0;
}

/** Where B's calls spent their time, from their execution records: queued (submitted → started) and running (started → finished). */
async function phasesOf(db: Db, requestIds: string[]): Promise<{ queued: LatencySummary; running: LatencySummary }> {
  const rows = requestIds.length ? await db.selectFrom('executions').select(['submitted_at', 'started_at', 'finished_at']).where('request_id', 'in', requestIds).execute() : [];
  const queued = rows.map((row) => +new Date(row.started_at) - +new Date(row.submitted_at!));
  const running = rows.map((row) => +new Date(row.finished_at) - +new Date(row.started_at));
  return { queued: summarize(queued), running: summarize(running) };
}

async function everySecond(times: number, call: () => Promise<number>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < times; i++) {
    const tick = delay(1000);
    latencies.push(await call());
    await tick;
  }
  return latencies;
}

/** C submits a quick run; the time until its webhook arrives. */
async function submitC(client: ApiClient, receiver: Receiver): Promise<number> {
  const t0 = performance.now();
  const { runId } = jsonOf<{ runId: string }>(await client.post('/api/exec/submit', { agentName: 'quick', inputs: {} }));
  const arrived = await receiver.arrival(runId);
  return arrived - t0;
}

interface Receiver {
  server: Server;
  url: string;
  mostOpen: number;
  arrival(runId: string): Promise<number>;
}

/** A webhook receiver on loopback that answers at once, or never (`hang`). */
async function startReceiver(how: 'hang' | 'answer'): Promise<Receiver> {
  const waiting = new Map<string, (at: number) => void>();
  const arrived = new Map<string, number>();
  let open = 0;
  const receiver: Receiver = {
    server: createServer((req, res) => {
      const at = performance.now();
      open += 1;
      receiver.mostOpen = Math.max(receiver.mostOpen, open);
      res.on('close', () => (open -= 1));
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (how === 'hang') return;
        const { runId } = (JSON.parse(body) as { data: { runId: string } }).data;
        arrived.set(runId, at);
        waiting.get(runId)?.(at);
        res.writeHead(200).end();
      });
    }),
    url: '',
    mostOpen: 0,
    arrival: (runId) => new Promise((resolve) => (arrived.has(runId) ? resolve(arrived.get(runId)!) : waiting.set(runId, resolve))),
  };
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

function formatReport(results: {
  bAlone: LatencySummary;
  bUnderFlood: LatencySummary;
  bUnderFloodPhases: { queued: LatencySummary; running: LatencySummary };
  floorAlone: LatencySummary;
  floorUnderFlood: LatencySummary;
  cWebhookDelay: LatencySummary;
  aRunsPerSecond: { alone: number; underFlood: number };
  hangingReceiverHeldAtOnce: number;
}): string {
  const { bAlone, bUnderFlood, cWebhookDelay, aRunsPerSecond } = results;
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const ratio = bUnderFlood.p99 / bAlone.p99;
  const { floorAlone, floorUnderFlood } = results;
  const floorRatio = floorUnderFlood.p99 / floorAlone.p99;
  return [
    `B's wait alone: p50 ${ms(bAlone.p50)} p99 ${ms(bAlone.p99)} max ${ms(bAlone.max)} (${bAlone.count} calls)`,
    `B's wait under A's flood: p50 ${ms(bUnderFlood.p50)} p99 ${ms(bUnderFlood.p99)} max ${ms(bUnderFlood.max)} (${bUnderFlood.count} calls) — p99 ${ratio.toFixed(2)} × alone (target ≤ 1.5 ×), max ≤ 1 s: ${ratio <= 1.5 && bUnderFlood.max <= 1000 ? 'met' : 'NOT met'}`,
    `  of which queued (submitted → started) p50 ${ms(results.bUnderFloodPhases.queued.p50)} max ${ms(results.bUnderFloodPhases.queued.max)}, running p50 ${ms(results.bUnderFloodPhases.running.p50)} max ${ms(results.bUnderFloodPhases.running.max)}`,
    `the floor (a raw BullMQ round trip beside each of B's calls): alone p50 ${ms(floorAlone.p50)} p99 ${ms(floorAlone.p99)}; under A's flood p50 ${ms(floorUnderFlood.p50)} p99 ${ms(floorUnderFlood.p99)} max ${ms(floorUnderFlood.max)} — p99 ${floorRatio.toFixed(2)} × alone; B's ratio ÷ the floor's ${(ratio / floorRatio).toFixed(2)}`,
    `C's webhook delay while A's receiver hangs: p50 ${ms(cWebhookDelay.p50)} p99 ${ms(cWebhookDelay.p99)} max ${ms(cWebhookDelay.max)} (${cWebhookDelay.count}) — target p99 ≤ 2 s: ${cWebhookDelay.p99 <= 2000 ? 'met' : 'NOT met'}`,
    `A's runs/s: alone ${aRunsPerSecond.alone}, under the flood with B and C ${aRunsPerSecond.underFlood} (${(aRunsPerSecond.underFlood / aRunsPerSecond.alone).toFixed(2)} ×)`,
    `A's hanging receiver held at most ${results.hangingReceiverHeldAtOnce} deliveries at once`,
  ].join('\n');
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
