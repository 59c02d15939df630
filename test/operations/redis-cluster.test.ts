import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createDb } from '../../db/database.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { freePort, runCli, type Spawned } from '../helpers/processes.js';
import { clusterMasters, clusterReachable, deleteClusterKeys, healCluster, killNode, masterOf, nodeConnection, testClusterUrl, type ClusterNode } from '../helpers/redis-cluster.js';
import { openStream } from '../helpers/sse.js';
import { shardsOf } from '../../shared/shards.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';
import { assertEachSuccessKeptOnce, assertOutageAnswered, publishFaultAgents, startBackgroundLoad, startWebAndWorker } from '../faults/load-under-fault.js';

const maxRuntimeMs = 8000;

/** A webhook receiver on loopback that answers 200 and keeps each body in `received`. */
async function startReceiver(received: { body: string }[]): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/**
 * The product on a Redis Cluster (DESIGN §17): a web and a worker process with REDIS_CLUSTER=true,
 * pointed at a master that does not hold the installation's keys, on the test cluster .ci/redis-cluster
 * starts (three masters with a replica each on 127.0.0.1:7101-7106). Calls go through the queue
 * (WEB_INLINE_RUNS=false), so every path crosses the cluster.
 */
describe('on a Redis Cluster (web and worker processes)', function () {
  this.timeout(120_000);
  const prefix = `${testEnv.QUEUE_PREFIX}-cluster`;
  const db = createDb(testEnv.DATABASE_URL!, 2);
  const received: { body: string }[] = [];
  let seed: Redis;
  let receiver: Server;
  let processes: Spawned[] = [];
  let env: Record<string, string>;
  let url = '';
  let key = '';
  let accountName = '';
  let keysMaster: ClusterNode;
  const sayer = uniqueAgentName('sayer');
  const spinner = uniqueAgentName('spinner');
  const fanner = uniqueAgentName('fanner');
  let counter = '';
  let asker = '';

  before(async function () {
    if (!(await clusterReachable())) {
      // CI starts the cluster (.ci/run); a developer runs .ci/redis-cluster once.
      console.warn(`    skipped: no Redis Cluster answers at ${testClusterUrl} (start one with .ci/redis-cluster)`);
      this.skip();
    }
    seed = new Redis(testClusterUrl);
    seed.on('error', () => undefined);
    // The installation's keys all carry the hash tag {<prefix>}: start the processes on another master.
    keysMaster = (await masterOf(seed, prefix))!;
    const elsewhere = (await clusterMasters(seed)).find((m) => m.node.port !== keysMaster.port)!.node;
    receiver = await startReceiver(received);
    const port = String(await freePort());
    url = `http://127.0.0.1:${port}`;
    env = {
      REDIS_CLUSTER: 'true',
      REDIS_URL: `redis://${elsewhere.host}:${elsewhere.port}`,
      QUEUE_PREFIX: prefix,
      PORT: port,
      WEB_INLINE_RUNS: 'false',
      WEBHOOK_ALLOW: '127.0.0.1',
      MAX_AGENT_RUNTIME_MS: String(maxRuntimeMs),
      LOG_LEVEL: 'info',
    };
    const account = await createAccount(db);
    key = account.key;
    accountName = account.name;
    await publishAgent(db, sayer, `export default async (sys) => { sys.say('one ' + (sys.query ?? '')); await sys.sleep(100); sys.say('two'); }`);
    await publishAgent(db, spinner, `export default async (sys) => { sys.say('spinning'); for (;;) {} }`);
    await publishAgent(db, fanner, `export default async (sys) => { const r = await Promise.all(['a', 'b', 'c'].map((q) => sys.call(${JSON.stringify(sayer)}, { query: q }))); sys.say(r.map((x) => x.output[0].text).join()); }`);
    ({ counter, asker } = await publishFaultAgents(db));
    processes = await startWebAndWorker(env);
  });
  after(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    receiver?.close();
    seed?.disconnect();
    if (await clusterReachable()) await deleteClusterKeys(testClusterUrl, `{${prefix}}*`);
    await db.destroy();
  });

  it('answers a call through the queue, the processes started on a master that does not hold the keys', async () => {
    assert.notEqual(env.REDIS_URL, `redis://${keysMaster.host}:${keysMaster.port}`);
    const answered = await execAgent(url, key, { agentName: sayer, inputs: { query: 'hi' } });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(answered.body.resultCode, 'success');
    assert.deepEqual(answered.body.output, [{ type: 'text', text: 'one hi' }, { type: 'text', text: 'two' }]);
    // The queue's keys are where the hash tag puts them.
    const onMaster = new Redis({ host: keysMaster.host, port: keysMaster.port });
    try {
      assert.equal(await onMaster.exists(`{${prefix}}:runs:meta`), 1);
    } finally {
      onMaster.disconnect();
    }
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 200);
  });

  it('streams a call', async () => {
    const stream = await openStream(url, '/api/exec/execAgent', { agentName: sayer, stream: true }, { key });
    const events = await stream.done;
    assert.deepEqual(events.map((e) => e.event), ['start', 'part', 'part', 'end']);
    assert.equal(events[3]!.data.resultCode, 'success');
  });

  it('asks, and goes on with the answer', async () => {
    const asked = await execAgent(url, key, { agentName: asker });
    assert.equal(asked.body.resultCode, 'ask');
    const answered = await execAgent(url, key, { agentName: asker, convid: asked.body.convid, inputs: { name: 'Ada' } });
    assert.equal(answered.body.resultCode, 'success');
    assert.deepEqual(answered.body.output, [{ type: 'text', text: 'hi Ada' }]);
  });

  it('cancels a running call; its events go by sharded pub/sub on the master that holds its keys', async () => {
    const stream = await openStream(url, '/api/exec/execAgent', { agentName: spinner, stream: true }, { key });
    await stream.next((e) => e.event === 'part');
    const convid = stream.events[0]!.data.convid;
    const onMaster = new Redis({ host: keysMaster.host, port: keysMaster.port });
    try {
      const channel = `{${prefix}}:run:${stream.headers.get('x-run-id')}`;
      assert.deepEqual(await onMaster.call('PUBSUB', 'SHARDNUMSUB', channel), [channel, 1]);
      assert.deepEqual(await onMaster.call('PUBSUB', 'NUMSUB', channel), [channel, 0], 'not plain pub/sub');
      assert.equal(((await onMaster.call('PUBSUB', 'SHARDCHANNELS', `{${prefix}}:inbox:*`)) as string[]).length, 1, "the web process's inbox");
    } finally {
      onMaster.disconnect();
    }
    assert.deepEqual((await post(url, '/api/exec/cancel', { convid }, { key })).body, { cancelled: true });
    const end = await stream.next((e) => e.event === 'end');
    assert.equal(end.data.resultCode, 'stopped');
  });

  it('runs child runs of sys.call, their ends heard by sharded pub/sub', async () => {
    const res = await execAgent(url, key, { agentName: fanner });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    assert.equal(res.body.output[0].text, 'one a,one b,one c');
  });

  it('runs a background submit and delivers its webhook', async () => {
    const set = await runCli(['webhooks:set', '--name', accountName, '--url', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, '--json'], env);
    assert.equal(set.code, 0, set.output);
    const submitted = await post(url, '/api/exec/submit', { agentName: sayer, inputs: { query: 'bg' } }, { key });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    const { runId } = submitted.body;
    await waitFor(() => received.some((r) => JSON.parse(r.body).data.runId === runId), 20_000, 'the webhook');
    const delivered = JSON.parse(received.find((r) => JSON.parse(r.body).data.runId === runId)!.body);
    assert.equal(delivered.data.response.resultCode, 'success');
  });

  it('survives the failover of the master that holds the keys: calls get their result or 503, none lost or run twice', async () => {
    const load = await startBackgroundLoad(url, key, counter, 4);
    await waitFor(() => load.calls.filter((c) => c.status === 200).length >= 8, 10_000, 'the load running');
    // Asked before the kill: the node the test first asked (the seed) may be the one killed.
    const other = (await clusterMasters(seed)).find((m) => m.node.port !== keysMaster.port)!.node;
    const stopped = performance.now();
    await killNode(keysMaster);
    try {
      // Until a replica takes over, the keys' slot has no master: /readyz says so (it never hangs).
      const ready = await fetch(`${url}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(((await ready.json()) as { checks: unknown }).checks, { postgres: 'ok', redis: 'unavailable' });
      // The replica takes over once the other masters agree the master is gone (cluster-node-timeout 2 s).
      const survivor = new Redis({ host: other.host, port: other.port });
      survivor.on('error', () => undefined);
      try {
        await waitFor(async () => (await masterOf(survivor, prefix))?.port !== keysMaster.port, 30_000, 'a replica promoted');
      } finally {
        survivor.disconnect();
      }
      const restarted = performance.now();
      await load.recovered(restarted, 3, 30_000);
      await load.stop();
      const successes = assertOutageAnswered(load, { stopped, restarted }, maxRuntimeMs);
      await assertEachSuccessKeptOnce(db, load, successes, counter);
      // Every run recorded once in PostgreSQL: as many success records as successes answered.
      for (const [client, convid] of load.convids.entries()) {
        const rows = await db.selectFrom('executions').select(['result_code']).where('convid', '=', convid).execute();
        assert.equal(rows.filter((r) => r.result_code === 'success').length, successes[client]! + 1, `client ${client}: one record per success`);
      }
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      // The web process heard that its sharded subscription on the dead master was lost and made again
      // (a call waiting for an event then looks for its result in PostgreSQL).
      await waitFor(() => /run events connection back/.test(processes[0]!.output()), 10_000, 'the run events subscription reported back');
    } finally {
      await load.stop();
      // The killed master comes back as a replica: the cluster is whole again for the next run.
      await healCluster();
    }
  });
});

/**
 * Shards (DESIGN §17): with REDIS_SHARDS=3 on the three masters, each shard's keys are on a master of
 * its own, conversations spread over all three, and the API's paths work wherever a run's shard is.
 */
describe('on a Redis Cluster with three shards (REDIS_SHARDS=3)', function () {
  this.timeout(120_000);
  const prefix = `${testEnv.QUEUE_PREFIX}-shards`;
  const shards = shardsOf({ queuePrefix: `{${prefix}}`, redisShards: 3 });
  const db = createDb(testEnv.DATABASE_URL!, 2);
  const received: { body: string }[] = [];
  let seed: Redis;
  let receiver: Server;
  let processes: Spawned[] = [];
  let env: Record<string, string>;
  let url = '';
  let key = '';
  let accountName = '';
  let shardMasters: ClusterNode[] = [];
  const sayer = uniqueAgentName('sayer');
  const spinner = uniqueAgentName('spinner');
  let asker = '';

  before(async function () {
    if (!(await clusterReachable())) {
      console.warn(`    skipped: no Redis Cluster answers at ${testClusterUrl} (start one with .ci/redis-cluster)`);
      this.skip();
    }
    seed = new Redis(testClusterUrl);
    seed.on('error', () => undefined);
    shardMasters = await Promise.all(shards.prefixes.map(async (shardPrefix) => (await masterOf(seed, shardPrefix))!));
    receiver = await startReceiver(received);
    const port = String(await freePort());
    url = `http://127.0.0.1:${port}`;
    env = {
      REDIS_CLUSTER: 'true',
      REDIS_URL: testClusterUrl,
      REDIS_SHARDS: '3',
      QUEUE_PREFIX: prefix,
      PORT: port,
      WEB_INLINE_RUNS: 'false',
      WEBHOOK_ALLOW: '127.0.0.1',
      MAX_AGENT_RUNTIME_MS: String(maxRuntimeMs),
      LOG_LEVEL: 'info',
    };
    const account = await createAccount(db);
    key = account.key;
    accountName = account.name;
    await publishAgent(db, sayer, `export default async (sys) => { sys.say('one ' + (sys.query ?? '')); await sys.sleep(100); sys.say('two'); }`);
    await publishAgent(db, spinner, `export default async (sys) => { sys.say('spinning'); for (;;) {} }`);
    ({ asker } = await publishFaultAgents(db));
    processes = await startWebAndWorker(env);
  });
  after(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    receiver?.close();
    seed?.disconnect();
    if (await clusterReachable()) await deleteClusterKeys(testClusterUrl, `{${prefix}*`);
    await db.destroy();
  });

  it('puts each shard on a master of its own, and shows each shard\'s queue in /metrics', async () => {
    assert.equal(new Set(shardMasters.map((m) => m.port)).size, 3, JSON.stringify(shardMasters));
    const metrics = await (await fetch(`${url}/metrics`)).text();
    for (const shard of [0, 1, 2]) assert.match(metrics, new RegExp(`agentexec_queue_jobs\\{queue="runs\\.${shard}",state="waiting"\\} 0`));
  });

  it("streams calls on conversations of every shard, each run's events kept on its shard's master", async () => {
    const runs: { runId: string; convid: string }[] = [];
    while (new Set(runs.map((run) => shards.of(run.convid))).size < 3) {
      const stream = await openStream(url, '/api/exec/execAgent', { agentName: sayer, stream: true }, { key });
      const events = await stream.done;
      assert.deepEqual(events.map((e) => e.event), ['start', 'part', 'part', 'end']);
      assert.equal(events[3]!.data.resultCode, 'success');
      runs.push({ runId: stream.headers.get('x-run-id')!, convid: events[0]!.data.convid });
      assert.ok(runs.length <= 40, 'conversations land on every shard');
    }
    for (const run of runs) {
      const shard = shards.of(run.convid);
      assert.equal(shards.of(run.runId), shard, "a run id hashes to its conversation's shard");
      const master = nodeConnection(shardMasters[shard]!);
      try {
        assert.equal(await master.exists(`${shards.prefixes[shard]}:run-events:${run.runId}`), 1, `run ${run.runId} on shard ${shard}`);
        assert.ok(Number(await master.exists(`${shards.prefixes[shard]}:runs:meta`)) === 1, `shard ${shard}'s queue on its master`);
      } finally {
        master.disconnect();
      }
      // Attach by run id alone finds its shard.
      const attached = await openStream(url, '/api/exec/attach', { runId: run.runId }, { key });
      assert.equal((await attached.done).at(-1)!.data.resultCode, 'success');
    }
  });

  it('answers plain calls on conversations of every shard, and goes on with a conversation after an ask', async () => {
    const shardsSeen = new Set<number>();
    let tries = 0;
    while (shardsSeen.size < 3) {
      const asked = await execAgent(url, key, { agentName: asker });
      assert.equal(asked.body.resultCode, 'ask', JSON.stringify(asked.body));
      const answered = await execAgent(url, key, { agentName: asker, convid: asked.body.convid, inputs: { name: 'Ada' } });
      assert.equal(answered.body.resultCode, 'success');
      assert.deepEqual(answered.body.output, [{ type: 'text', text: 'hi Ada' }]);
      shardsSeen.add(shards.of(asked.body.convid));
      tries += 1;
      assert.ok(tries <= 40, 'conversations land on every shard');
    }
  });

  it('cancels running calls by convid and by run id on any shard', async () => {
    const cancelled = new Set<number>();
    let byRunId = false;
    while (cancelled.size < 3) {
      const stream = await openStream(url, '/api/exec/execAgent', { agentName: spinner, stream: true }, { key });
      await stream.next((e) => e.event === 'part');
      const convid = stream.events[0]!.data.convid;
      const runId = stream.headers.get('x-run-id')!;
      const target: { runId: string } | { convid: string } = byRunId ? { runId } : { convid };
      byRunId = !byRunId;
      assert.deepEqual((await post(url, '/api/exec/cancel', target, { key })).body, { cancelled: true });
      const end = await stream.next((e) => e.event === 'end');
      assert.equal(end.data.resultCode, 'stopped');
      cancelled.add(shards.of(convid));
    }
  });

  it('runs background submits on every shard: getRun and wait find them, their webhooks are delivered', async () => {
    const set = await runCli(['webhooks:set', '--name', accountName, '--url', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, '--json'], env);
    assert.equal(set.code, 0, set.output);
    const runIds: string[] = [];
    while (new Set(runIds.map((runId) => shards.of(runId))).size < 3) {
      const submitted = await post(url, '/api/exec/submit', { agentName: sayer, inputs: { query: 'bg' } }, { key });
      assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
      runIds.push(submitted.body.runId);
    }
    for (const runId of runIds) {
      const read = await post(url, '/api/exec/getRun', { runId }, { key });
      assert.equal(read.status, 200, JSON.stringify(read.body));
      const waited = await post(url, '/api/exec/wait', { runId, timeoutMs: 20_000 }, { key });
      assert.equal(waited.body.status, 'ended', JSON.stringify(waited.body));
      await waitFor(() => received.some((r) => JSON.parse(r.body).data.runId === runId), 20_000, 'the webhook');
      assert.equal(JSON.parse(received.find((r) => JSON.parse(r.body).data.runId === runId)!.body).data.response.resultCode, 'success');
    }
  });

  it('fires a schedule, each firing one run in a new conversation on any shard', async () => {
    const name = uniqueAgentName('cluster-schedule');
    const set = await runCli(['schedules:set', '--name', name, '--agent', sayer, '--account', accountName, '--cron', '* * * * * *', '--json'], env);
    assert.equal(set.code, 0, set.output);
    const runs = () => db.selectFrom('executions').select(['convid', 'request_id', 'result_code']).where('request_id', 'like', `schedule:${name}:%`).execute();
    await waitFor(async () => new Set((await runs()).map((run) => shards.of(run.convid))).size === 3, 30_000, 'firings run on every shard');
    const deleted = await runCli(['schedules:delete', '--name', name], env);
    assert.equal(deleted.code, 0, deleted.output);
    const fired = await runs();
    assert.equal(new Set(fired.map((run) => run.request_id)).size, fired.length, 'one run per firing');
    assert.ok(fired.every((run) => run.result_code === 'success'));
  });
});
