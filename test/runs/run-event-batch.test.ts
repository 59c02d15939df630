import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRunEventBatch, maxEventsPerCall, type BatchedRunEvent, type RunEventBatch } from '../../runs/run-event-batch.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { testEnv } from '../helpers/test-env.js';
import { clusterClient, clusterReachable } from '../helpers/redis-cluster.js';
import { waitForReady } from '../../runs/redis-connection.js';
import { createShards } from '../../shared/shards.js';
import { waitFor } from '../helpers/wait.js';

/** Logged runs' events sent together, one script call a turn, never waiting for the turn before (runs/run-event-batch.ts). */
describe('run event batch', () => {
  let proxy: TcpProxy;
  /** Through the proxy, which sees every command sent and can hold the replies. */
  let redis: Redis;
  let subscriber: Redis;
  let batch: RunEventBatch;
  const prefix = `${testEnv.QUEUE_PREFIX}-event-batch`;
  const received: { channel: string; text: string }[] = [];
  /** Script calls the proxy has passed to Redis so far. */
  const scriptCalls = () => proxy.sent().toLowerCase().split('\r\neval\r\n').length - 1;
  const event = (run: string, text: string): BatchedRunEvent => ({ listKey: `${prefix}:list:${run}`, channel: `${prefix}:channel:${run}`, text, replayMs: 60_000 });
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  before(async () => {
    const target = new URL(testEnv.REDIS_URL!);
    proxy = await startTcpProxy(target.hostname, Number(target.port));
    const proxied = new URL(target);
    proxied.port = String(proxy.port);
    // As the worker's publisher connection is made: auto-pipelining on.
    redis = new Redis(proxied.toString(), { enableAutoPipelining: true, maxRetriesPerRequest: 1 });
    await redis.ping();
    batch = createRunEventBatch(redis);
    subscriber = new Redis(testEnv.REDIS_URL!);
    subscriber.on('pmessage', (_pattern: string, channel: string, text: string) => received.push({ channel, text }));
    await subscriber.psubscribe(`${prefix}:channel:*`);
  });
  after(async () => {
    redis.disconnect();
    subscriber.disconnect();
    await proxy.close();
  });
  beforeEach(() => {
    received.length = 0;
  });

  it('sends the events of every run made in one turn as one script call, each run\'s in order', async () => {
    const before = scriptCalls();
    const events = ['a', 'b', 'c'].flatMap((run) => [1, 2, 3].map((n) => event(`one-turn-${run}`, `${run}${n}`)));
    // Interleaved as runs make them.
    const order = [0, 3, 6, 1, 4, 7, 2, 5, 8].map((i) => events[i]!);
    await Promise.all(order.map((e) => batch.append(e)));
    assert.equal(scriptCalls() - before, 1);
    for (const run of ['a', 'b', 'c']) {
      const key = `${prefix}:list:one-turn-${run}`;
      assert.deepEqual(await redis.lrange(key, 0, -1), [`${run}1`, `${run}2`, `${run}3`]);
      const ttl = await redis.pttl(key);
      assert.ok(ttl > 50_000 && ttl <= 60_000, `expiry renewed (${ttl} ms)`);
    }
    await waitFor(() => received.length === 9, 2000, 'the nine events published');
    for (const run of ['a', 'b', 'c']) {
      assert.deepEqual(received.filter((r) => r.channel === `${prefix}:channel:one-turn-${run}`).map((r) => r.text), [`${run}1`, `${run}2`, `${run}3`]);
    }
  });

  it('sends a turn\'s events while the turn before still waits for its reply', async () => {
    const before = scriptCalls();
    proxy.holdReplies();
    let first: Promise<void> | undefined;
    let second: Promise<void> | undefined;
    try {
      first = batch.append(event('held', 'first'));
      await waitFor(() => scriptCalls() - before === 1, 2000, 'the first batch sent');
      await nextTurn();
      second = batch.append(event('held', 'second'));
      await waitFor(() => scriptCalls() - before === 2, 2000, 'the second batch sent before the first one\'s reply came');
    } finally {
      proxy.releaseReplies();
    }
    await Promise.all([first, second]);
    assert.deepEqual(await redis.lrange(`${prefix}:list:held`, 0, -1), ['first', 'second']);
  });

  it(`splits a turn of more than ${maxEventsPerCall} events into calls sent in order`, async () => {
    const before = scriptCalls();
    const count = maxEventsPerCall * 2 + 5;
    await Promise.all(Array.from({ length: count }, (_, i) => batch.append(event('long-turn', String(i)))));
    assert.equal(scriptCalls() - before, 3);
    assert.deepEqual(await redis.lrange(`${prefix}:list:long-turn`, 0, -1), Array.from({ length: count }, (_, i) => String(i)));
  });
});

/** On a cluster, a turn's events of runs on several shards (DESIGN §17) go in a script call per shard's slot. */
describe('run event batch on a Redis Cluster with shards', () => {
  const shards = createShards(`{${testEnv.QUEUE_PREFIX}-event-batch}`, 3);

  it("appends each run's events in order whatever shard the run is on", async function () {
    if (!(await clusterReachable())) this.skip();
    const cluster = clusterClient();
    try {
      await waitForReady(cluster);
      const batch = createRunEventBatch(cluster);
      const runs = shards.prefixes.map((prefix) => ({ prefix, runId: shards.runIdFor(randomUUID()) }));
      const keyOf = (run: (typeof runs)[number]) => `${run.prefix}:run-events:${run.runId}`;
      // All in one turn of the event loop: one batch, events of three slots interleaved.
      const sent: Promise<void>[] = [];
      for (let i = 0; i < 5; i += 1) {
        for (const run of runs) sent.push(batch.append({ listKey: keyOf(run), channel: `${run.prefix}:run:${run.runId}`, text: String(i), replayMs: 60_000 }));
      }
      await Promise.all(sent);
      for (const run of runs) assert.deepEqual(await cluster.lrange(keyOf(run), 0, -1), ['0', '1', '2', '3', '4']);
      for (const run of runs) await cluster.del(keyOf(run));
    } finally {
      cluster.disconnect();
    }
  });
});
