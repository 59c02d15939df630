import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createDb } from '../../db/database.js';
import { runQueueName, scheduleQueueName } from '../../shared/channels.js';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { freePort, runCli, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { waitForQueueIdle } from '../helpers/queue-idle.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/** One run of a schedule, as its execution record names it (request id `schedule:NAME:FIRED-AT`). */
interface ScheduledRun {
  firedAt: number;
  runId: string;
  convid: string;
  resultCode: string;
}

/**
 * Schedules (DESIGN §19) through the admin API of a web process, fired by worker processes started
 * as the Procfile starts them: one run per firing with two workers, a single catch-up run for the
 * firings missed while none ran, the account's webhook, and delete.
 */
describe('schedules', function () {
  this.timeout(120_000);
  const db = createDb(testEnv.DATABASE_URL!, 2);
  const agent = uniqueAgentName('ticker');
  let url: string;
  let web: Spawned;
  let workers: Spawned[] = [];
  let admin: string;
  let owner: { name: string; key: string; id: string };
  let receiver: { server: Server; port: number; bodies: string[] };
  let workerEnv: Record<string, string>;

  before(async () => {
    receiver = await startReceiver();
    workerEnv = { WORKER_CONCURRENCY: '4', WEBHOOK_ALLOW: `127.0.0.1:${receiver.port}` };
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    web = spawnEntry('cli/web.js', [], { PORT: String(port) });
    await waitForOutput(web, /web listening/);
    admin = (await createAccount(db, 'admin')).key;
    owner = await createAccount(db);
    await publishAgent(db, agent, `export default async (sys) => { sys.say('tick ' + sys.query); }`);
    workers = [startWorker(), startWorker()];
    await Promise.all(workers.map((worker) => waitForOutput(worker, /worker running/)));
  });
  after(async () => {
    for (const p of [web, ...workers]) p.child.kill('SIGKILL');
    await Promise.all([web, ...workers].map((p) => p.exited));
    receiver.server.close();
    await db.destroy();
  });

  function startWorker(): Spawned {
    return spawnEntry('workers/main.js', [], workerEnv);
  }

  async function stopWorkers(): Promise<void> {
    for (const worker of workers) worker.child.kill('SIGTERM');
    await Promise.all(workers.map((worker) => worker.exited));
    workers = [];
  }

  const setSchedule = (body: Record<string, unknown>) => post(url, '/api/admin/setSchedule', body, { key: admin });
  const listSchedules = async () => (await post(url, '/api/admin/listSchedules', {}, { key: admin })).body.schedules as Array<Record<string, any>>;
  const scheduleNamed = async (name: string) => (await listSchedules()).find((s) => s.name === name);

  async function runsOf(name: string): Promise<ScheduledRun[]> {
    const rows = await db
      .selectFrom('executions')
      .select(['id', 'convid', 'request_id', 'result_code'])
      .where('request_id', 'like', `schedule:${name}:%`)
      .execute();
    return rows.map((row) => ({ firedAt: Date.parse(row.request_id!.slice(`schedule:${name}:`.length)), runId: row.id, convid: row.convid, resultCode: row.result_code }));
  }

  /** Deletes the schedule, then waits until every firing it made and every run they queued is over. */
  async function deleteAndSettle(name: string): Promise<void> {
    assert.equal((await post(url, '/api/admin/deleteSchedule', { name }, { key: admin })).status, 200);
    await waitForQueueIdle({ redisUrl: testEnv.REDIS_URL!, queuePrefix: testEnv.QUEUE_PREFIX! }, scheduleQueueName, 20_000);
    await waitForQueueIdle({ redisUrl: testEnv.REDIS_URL!, queuePrefix: testEnv.QUEUE_PREFIX! }, runQueueName, 20_000);
  }

  it('refuses a bad cron, time zone, agent, account or inputs, naming the field, and schedules nothing', async () => {
    const name = uniqueAgentName('refused');
    const good = { name, agentName: agent, account: owner.name, cron: '0 9 * * 1' };
    const cases: Array<[Record<string, unknown>, number, string, string?]> = [
      [{ ...good, cron: 'every day' }, 400, 'invalidRequest', 'cron'],
      [{ ...good, cron: '61 * * * *' }, 400, 'invalidRequest', 'cron'],
      [{ ...good, cron: '* * * * * * *' }, 400, 'invalidRequest', 'cron'],
      [{ ...good, tz: 'Mars/Olympus' }, 400, 'invalidRequest', 'tz'],
      [{ ...good, inputs: ['not', 'an', 'object'] }, 400, 'invalidRequest', 'inputs'],
      [{ ...good, inputs: 'text' }, 400, 'invalidRequest', 'inputs'],
      [{ ...good, agentName: uniqueAgentName('missing') }, 404, 'agentNotFound'],
      [{ ...good, account: `nobody-${name}` }, 404, 'notFound'],
      [{ ...good, convid: '00000000-0000-4000-8000-000000000000' }, 404, 'notFound'],
    ];
    for (const [body, status, code, field] of cases) {
      const answer = await setSchedule(body);
      assert.equal(answer.status, status, JSON.stringify(body));
      assert.equal(answer.body.error.code, code);
      if (field) assert.ok(answer.body.error.details.fields[field], `names ${field}: ${JSON.stringify(answer.body.error)}`);
    }
    assert.equal(await scheduleNamed(name), undefined);
    const unknown = await post(url, '/api/admin/deleteSchedule', { name }, { key: admin });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'notFound');
    const notAdmin = await post(url, '/api/admin/setSchedule', good, { key: owner.key });
    assert.equal(notAdmin.status, 403);
  });

  it('replaces the schedule of a name in use, and lists each with its next firing in its time zone', async () => {
    const name = uniqueAgentName('weekly');
    const first = await setSchedule({ name, agentName: agent, account: owner.name, cron: '0 9 * * 1', inputs: { query: 'monday' } });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.replaced, false);
    const second = await setSchedule({ name, agentName: agent, account: owner.name, cron: '30 8 * * *', tz: 'Asia/Tokyo', inputs: { query: 'daily' } });
    assert.equal(second.body.replaced, true);
    const listed = await scheduleNamed(name);
    assert.deepEqual(
      { ...listed, nextFiring: undefined, createdAt: undefined, updatedAt: undefined },
      { name, agentName: agent, account: owner.name, cron: '30 8 * * *', tz: 'Asia/Tokyo', inputs: { query: 'daily' }, convid: null, nextFiring: undefined, createdAt: undefined, updatedAt: undefined },
    );
    // 08:30 in Tokyo is 23:30 UTC the day before, within the next day.
    const next = new Date(listed!.nextFiring);
    assert.equal(next.toISOString().slice(11, 19), '23:30:00');
    assert.ok(next.getTime() > Date.now() && next.getTime() <= Date.now() + 24 * 3600_000);
    assert.equal((await listSchedules()).filter((s) => s.name === name).length, 1);
    await deleteAndSettle(name);
    assert.equal(await scheduleNamed(name), undefined);
  });

  it('runs each firing once across two workers, each a background run in a new conversation that reaches the account’s webhook', async () => {
    const hooked = await createAccount(db);
    const set = await runCli(['webhooks:set', '--name', hooked.name, '--url', `http://127.0.0.1:${receiver.port}/hooks`], { WEBHOOK_ALLOW: `127.0.0.1:${receiver.port}` });
    assert.equal(set.code, 0, set.output);
    const name = uniqueAgentName('every-second');
    assert.equal((await setSchedule({ name, agentName: agent, account: hooked.name, cron: '* * * * * *', inputs: { query: 'hello' } })).status, 200);
    await waitFor(async () => new Set((await runsOf(name)).map((run) => run.firedAt)).size >= 6, 30_000, 'six firings run');
    await deleteAndSettle(name);
    const runs = await runsOf(name);
    const perFiring = countBy(runs.map((run) => run.firedAt));
    assert.deepEqual([...perFiring.values()].filter((n) => n !== 1), [], `one run per firing: ${JSON.stringify([...perFiring])}`);
    assert.ok(runs.every((run) => run.resultCode === 'success'));
    assert.ok(runs.every((run) => run.firedAt % 1000 === 0), 'each run names the second its firing was due');
    assert.equal(new Set(runs.map((run) => run.convid)).size, runs.length, 'a new conversation each firing');
    const [firstRun] = runs;
    // A background run of the account: its caller reads it with getRun.
    const read = await post(url, '/api/exec/getRun', { runId: firstRun!.runId }, { key: hooked.key });
    assert.equal(read.body.status, 'ended');
    assert.deepEqual(read.body.response.output, [{ type: 'text', text: 'tick hello' }]);
    await waitFor(() => receiver.bodies.some((body) => JSON.parse(body).data.runId === firstRun!.runId), 15_000, 'the firing’s run delivered to the webhook');
  });

  it('continues the schedule’s conversation when it names one', async () => {
    const counterAgent = uniqueAgentName('counter');
    await publishAgent(db, counterAgent, `export default async (sys) => { sys.conv.n = (sys.conv.n ?? 0) + 1; sys.say(String(sys.conv.n)); }`);
    const first = await post(url, '/api/exec/execAgent', { agentName: counterAgent }, { key: owner.key });
    const convid = first.body.convid as string;
    const name = uniqueAgentName('continued');
    assert.equal((await setSchedule({ name, agentName: counterAgent, account: owner.name, cron: '* * * * * *', convid })).status, 200);
    await waitFor(async () => (await runsOf(name)).length >= 2, 20_000, 'two firings run');
    await deleteAndSettle(name);
    const runs = await runsOf(name);
    assert.ok(runs.every((run) => run.convid === convid && run.resultCode === 'success'));
    const conversation = await post(url, '/api/conv/get', { convid }, { key: owner.key });
    assert.equal(conversation.body.turns.length, 1 + runs.length);
  });

  it('admits each firing through the account’s limits: a firing past them is refused and logged, and runs nothing', async () => {
    const limited = await createAccount(db);
    assert.equal((await post(url, '/api/admin/setLimits', { name: limited.name, runsPerMinute: 2 }, { key: admin })).status, 200);
    const name = uniqueAgentName('limited');
    await setSchedule({ name, agentName: agent, account: limited.name, cron: '* * * * * *' });
    const { id } = await db.selectFrom('schedules').select('id').where('name', '=', name).executeTakeFirstOrThrow();
    const refusals = () => workers.flatMap((worker) => worker.output().split('\n')).filter((line) => line.includes(id) && line.includes('runsPerMinute limit refused')).length;
    await waitFor(() => refusals() >= 2, 30_000, 'two firings refused by the limit');
    await deleteAndSettle(name);
    const perMinute = countBy((await runsOf(name)).map((run) => Math.floor(run.firedAt / 60_000)));
    assert.ok([...perMinute.values()].every((n) => n <= 2), `at most 2 runs a minute: ${JSON.stringify([...perMinute])}`);
  });

  it('fires no more once deleted', async () => {
    const deleted = uniqueAgentName('deleted');
    const witness = uniqueAgentName('witness');
    await setSchedule({ name: deleted, agentName: agent, account: owner.name, cron: '* * * * * *' });
    await waitFor(async () => (await runsOf(deleted)).length >= 1, 20_000, 'a firing run');
    await deleteAndSettle(deleted);
    const before = (await runsOf(deleted)).length;
    // The positive signal that later firings' time has come: another schedule fires three times after the delete.
    const since = Date.now();
    await setSchedule({ name: witness, agentName: agent, account: owner.name, cron: '* * * * * *' });
    await waitFor(async () => (await runsOf(witness)).filter((run) => run.firedAt > since).length >= 3, 20_000, 'three firings of the other schedule');
    await deleteAndSettle(witness);
    assert.equal((await runsOf(deleted)).length, before);
    assert.equal(await scheduleNamed(deleted), undefined);
  });

  it('runs the firings missed while no worker ran once, when a worker comes back', async () => {
    const name = uniqueAgentName('missed');
    await setSchedule({ name, agentName: agent, account: owner.name, cron: '* * * * * *' });
    await waitFor(async () => (await runsOf(name)).length >= 1, 20_000, 'a firing run');
    await stopWorkers();
    // The firing due next, which no worker takes now; wait until it and three more are past.
    const missedFrom = Date.parse((await scheduleNamed(name))!.nextFiring);
    await waitFor(() => Date.now() > missedFrom + 3_500, 10_000, 'several firings missed');
    const restartedAt = Date.now();
    workers = [startWorker()];
    await waitForOutput(workers[0]!, /worker running/);
    // The scheduler moved past the missed firings, and a firing after the restart has run.
    await waitFor(async () => (await runsOf(name)).some((run) => run.firedAt > restartedAt), 20_000, 'a firing after the restart run');
    await deleteAndSettle(name);
    const missed = (await runsOf(name)).filter((run) => run.firedAt >= missedFrom && run.firedAt < restartedAt);
    assert.deepEqual(missed.map((run) => run.firedAt), [missedFrom], 'the missed firings run once, as the first of them');
  });

  it('makes the job schedulers match the schedules when a worker starts: those Redis lost made again, those of no schedule removed', async () => {
    const name = uniqueAgentName('kept');
    await setSchedule({ name, agentName: agent, account: owner.name, cron: '0 3 * * *' });
    const { id } = await db.selectFrom('schedules').select('id').where('name', '=', name).executeTakeFirstOrThrow();
    const connection = new Redis(testEnv.REDIS_URL!, { maxRetriesPerRequest: null });
    const queue = new Queue(scheduleQueueName, { connection, prefix: testEnv.QUEUE_PREFIX! });
    try {
      await stopWorkers();
      // As a Redis restarted without its data would have it: the schedule's scheduler gone, and one of no schedule.
      await queue.removeJobScheduler(id);
      const orphan = randomUUID();
      await queue.upsertJobScheduler(orphan, { pattern: '0 3 * * *', tz: 'UTC' }, { name: 'fire', data: { scheduleId: orphan } });
      assert.equal((await scheduleNamed(name))!.nextFiring, null);
      workers = [startWorker()];
      await waitForOutput(workers[0]!, /worker running/);
      await waitFor(async () => (await scheduleNamed(name))!.nextFiring !== null && (await queue.getJobScheduler(orphan)) === undefined, 10_000, 'the schedulers made to match');
      assert.match((await scheduleNamed(name))!.nextFiring, /T03:00:00\.000Z$/);
    } finally {
      await queue.close();
      connection.disconnect();
    }
    await deleteAndSettle(name);
  });

  it('sets, lists and deletes schedules from the command line', async () => {
    const name = uniqueAgentName('cli');
    const set = await runCli(['schedules:set', '--name', name, '--agent', agent, '--account', owner.name, '--cron', '0 0 1 1 *', '--tz', 'Europe/Paris', '--inputs', '{"query":"new year"}', '--json']);
    assert.equal(set.code, 0, set.output);
    assert.equal(set.json.replaced, false);
    // Midnight in Paris on 1 January is 23:00 UTC on 31 December.
    assert.match(set.json.schedule.nextFiring, /-12-31T23:00:00\.000Z$/);
    const listed = await runCli(['schedules:list']);
    assert.equal(listed.code, 0, listed.output);
    const line = listed.output.split('\n').find((l) => l.startsWith(name));
    assert.ok(line && line.includes('0 0 1 1 *') && line.includes('Europe/Paris') && line.includes('{"query":"new year"}') && line.includes(owner.name), listed.output);
    const badCron = await runCli(['schedules:set', '--name', name, '--agent', agent, '--account', owner.name, '--cron', '* * *', '--tz', 'Nowhere/Land']);
    assert.equal(badCron.code, 1);
    assert.match(badCron.output, /--cron must be a cron expression of 5 fields/);
    assert.match(badCron.output, /--tz must be an IANA time zone/);
    const badInputs = await runCli(['schedules:set', '--name', name, '--agent', agent, '--account', owner.name, '--cron', '* * * * *', '--inputs', '[1]']);
    assert.equal(badInputs.code, 1);
    assert.match(badInputs.output, /--inputs must be a JSON object/);
    // Neither refused set changed it.
    assert.equal((await scheduleNamed(name))!.cron, '0 0 1 1 *');
    const deleted = await runCli(['schedules:delete', '--name', name, '--json']);
    assert.equal(deleted.code, 0, deleted.output);
    assert.equal(await scheduleNamed(name), undefined);
    const again = await runCli(['schedules:delete', '--name', name]);
    assert.equal(again.code, 1);
    assert.match(again.output, /No schedule named/);
  });
});

function countBy<T>(values: T[]): Map<T, number> {
  const counts = new Map<T, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

/** A webhook receiver on loopback that answers 200 and keeps each body. */
async function startReceiver(): Promise<{ server: Server; port: number; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, bodies };
}
