import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentexecClient, ForbiddenError } from '../../clients/typescript/src/index.js';
import { Redis } from 'ioredis';
import { workerStatusKey } from '../../shared/channels.js';
import { shardsOf } from '../../shared/shards.js';
import { readWorkerStatuses, workerStatusStaleMs } from '../../runs/worker-status.js';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

/** The console's Queues and workers page (DESIGN §18): /api/admin/getQueues, pauseQueues and resumeQueues, on two shards. */
describe('admin: queues and workers, pausing intake', () => {
  let stack: Stack;
  let admin: AgentexecClient;
  let caller: AgentexecClient;
  let adminKey: string;
  let callerKey: string;
  let server: http.Server;
  let base: string;
  /** Responses the held endpoint has not answered yet. */
  const held: http.ServerResponse[] = [];
  const quick = uniqueAgentName('quick');
  const holder = uniqueAgentName('holder');

  before(async () => {
    server = http.createServer((_req, res) => void held.push(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    stack = await startStack({ REDIS_SHARDS: '2' });
    const adminAccount = await createAccount(stack.runtime.db, 'admin');
    const callerAccount = await createAccount(stack.runtime.db, 'user');
    [adminKey, callerKey] = [adminAccount.key, callerAccount.key];
    admin = new AgentexecClient({ baseUrl: stack.url, apiKey: adminKey });
    caller = new AgentexecClient({ baseUrl: stack.url, apiKey: callerKey });
    await publishAgent(stack.runtime.db, quick, `export default async (sys) => { sys.say('done'); }`);
    await publishAgent(stack.runtime.db, holder, `export default async (sys) => { const r = await sys.fetch(sys.inputs.base + '/hold'); sys.say('held ' + r.status); }`);
  });
  afterEach(async () => {
    await admin.resumeQueues();
  });
  after(async () => {
    for (const res of held) res.end();
    await stack.close();
    server.close();
  });

  it("lists each shard's queue and the live worker with its runs in flight, memory and whether it takes runs", async () => {
    const { runId } = await caller.submit(holder, { base });
    await waitFor(() => held.length === 1, 5000, 'the run to fetch');
    await waitFor(async () => (await admin.getQueues()).workers.some((worker) => worker.runsInFlight === 1), 5000, 'the worker to report its run');
    const state = await admin.getQueues();
    assert.equal(state.paused, false);
    assert.deepEqual(
      state.shards.map((shard) => shard.shard),
      [0, 1],
    );
    assert.equal(state.shards.reduce((sum, shard) => sum + shard.running, 0), 1);
    const [worker] = state.workers.filter((w) => w.pid === process.pid);
    assert.ok(worker, JSON.stringify(state.workers));
    assert.equal(worker.takingRuns, true);
    assert.equal(worker.concurrency, stack.config.workerConcurrency);
    assert.equal(worker.memoryBudgetMb, stack.config.workerMemoryMb);
    assert.ok(worker.rssMb > 0);
    held.shift()!.end('ok');
    assert.equal((await caller.wait(runId)).response?.resultCode, 'success');
  });

  it('starts no submitted run while paused, on any shard, and starts them once resumed', async () => {
    // A run going before the pause: it ends while paused, so the worker is free and polling when the check is made.
    const going = await caller.submit(holder, { base });
    await waitFor(() => held.length === 1, 5000, 'the run to fetch');
    const paused = await admin.pauseQueues();
    assert.equal(paused.paused, true);
    assert.ok(paused.shards.every((shard) => shard.paused));
    // Runs on both shards: a run goes to its new conversation's shard, drawn at random, so submit until each shard has one.
    const queued = await Promise.all(Array.from({ length: 6 }, () => caller.submit(quick)));
    const shardsUsed = () => new Set(queued.map((run) => shardsOf(stack.config).of(run.runId)));
    while (shardsUsed().size < 2 && queued.length < 64) queued.push(await caller.submit(quick));
    assert.equal(shardsUsed().size, 2, 'runs on both shards');
    held.shift()!.end('ok');
    assert.equal((await caller.wait(going.runId)).response?.resultCode, 'success', 'the worker ran on');
    await waitFor(async () => (await admin.getQueues()).workers.every((worker) => worker.runsInFlight === 0), 5000, 'the worker to hold no run');
    for (const run of queued) assert.equal((await admin.adminGetRun(run.runId)).status, 'queued');
    const state = await admin.getQueues();
    assert.equal(state.shards.reduce((sum, shard) => sum + shard.waiting, 0), queued.length);
    // An admin's cancel withdraws a queued run at once: it ends stopped, and no longer waits.
    const [withdrawn, ...rest] = queued;
    assert.equal(await admin.adminCancelRun(withdrawn!.runId), true);
    assert.equal((await admin.adminGetRun(withdrawn!.runId)).resultCode, 'stopped');
    assert.equal((await admin.getQueues()).shards.reduce((sum, shard) => sum + shard.waiting, 0), rest.length);

    const resumed = await admin.resumeQueues();
    assert.equal(resumed.paused, false);
    for (const run of rest) assert.equal((await caller.wait(run.runId)).response?.resultCode, 'success');
  });

  it('leaves out a worker that stopped writing its status, and removes it', async () => {
    const key = workerStatusKey(stack.config.queuePrefix);
    const stale = { id: 'gone:1:abc', host: 'gone', pid: 1, startedAt: new Date(0).toISOString(), seenAt: new Date(Date.now() - workerStatusStaleMs - 1000).toISOString() };
    const redis = new Redis(stack.config.redisUrl);
    try {
      await redis.hset(key, stale.id, JSON.stringify(stale));
      const live = await readWorkerStatuses(redis, stack.config.queuePrefix);
      assert.equal(live.some((worker) => worker.id === stale.id), false);
      assert.ok(live.some((worker) => worker.pid === process.pid));
      assert.equal(await redis.hexists(key, stale.id), 0);
    } finally {
      redis.disconnect();
    }
  });

  it('answers 403 to callers that are not admins, 400 naming an unknown field', async () => {
    for (const path of ['/api/admin/getQueues', '/api/admin/pauseQueues', '/api/admin/resumeQueues']) {
      const forbidden = await post(stack.url, path, {}, { key: callerKey });
      assert.equal(forbidden.status, 403, path);
      const bad = await post(stack.url, path, { now: true }, { key: adminKey });
      assert.equal(bad.status, 400, path);
      assert.ok(bad.body.error.details.fields.now);
    }
    await assert.rejects(caller.pauseQueues(), ForbiddenError);
    assert.equal((await admin.getQueues()).paused, false, 'nothing was paused');
  });
});
