import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createRunMetricsRecorder, readRunCounts, readRunDurations, recordRunMetrics } from '../../runs/run-metrics.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/** Run metrics added up in a process and sent to Redis together (runs/run-metrics.ts), read as /metrics reads them. */
describe('run metrics', () => {
  let redis: Redis;
  /** Script calls made on `redis` so far, by hash or whole (the real command runs; only counted on the way). */
  let scriptCalls = 0;
  let prefixes = 0;
  const nextPrefix = () => `${testEnv.QUEUE_PREFIX}-run-metrics-${(prefixes += 1)}`;

  before(() => {
    redis = new Redis(testEnv.REDIS_URL!);
    const counted = redis as unknown as Record<'eval' | 'evalsha', (...args: unknown[]) => Promise<unknown>>;
    for (const command of ['eval', 'evalsha'] as const) {
      const original = counted[command].bind(redis);
      counted[command] = (...args) => {
        // A call by hash that Redis does not know yet is sent again whole: one script call either way.
        if (command === 'evalsha') scriptCalls += 1;
        return original(...args);
      };
    }
  });
  after(() => redis.disconnect());

  it('sends the runs counted between two flushes in one script call, counts and durations together', async () => {
    const prefix = nextPrefix();
    const recorder = createRunMetricsRecorder(redis, prefix, { flushEveryMs: 200 });
    const callsBefore = scriptCalls;
    try {
      recorder.record('success', 3);
      recorder.record('success', 40);
      recorder.record('failCommand', 2_000);
      recorder.record('unexpected');
      await waitFor(async () => (await readRunDurations(redis, prefix)).count === 3, 2000, 'the tally in Redis');
      assert.deepEqual(await readRunCounts(redis, prefix), { success: 2, failCommand: 1, unexpected: 1 });
      const durations = await readRunDurations(redis, prefix);
      assert.equal(durations.sumSeconds, 2.043);
      const bucket = (le: string) => durations.buckets.find((b) => b.le === le)?.count;
      assert.equal(bucket('0.005'), 1);
      assert.equal(bucket('0.05'), 2);
      assert.equal(bucket('2.5'), 3);
      assert.equal(bucket('+Inf'), 3);
      assert.equal(scriptCalls - callsBefore, 1);
    } finally {
      await recorder.close();
    }
  });

  it('sends what it still holds when closed', async () => {
    const prefix = nextPrefix();
    const recorder = createRunMetricsRecorder(redis, prefix, { flushEveryMs: 60_000 });
    recorder.record('success', 12);
    assert.deepEqual(await readRunCounts(redis, prefix), {});
    await recorder.close();
    assert.deepEqual(await readRunCounts(redis, prefix), { success: 1 });
    assert.equal((await readRunDurations(redis, prefix)).count, 1);
  });

  it('does not hold a shutdown up when Redis does not answer: closes within a second', async () => {
    // Takes connections and never says a word: the recorder's connection never gets ready.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const unanswered = new Redis({ port: (silent.address() as AddressInfo).port, host: '127.0.0.1', maxRetriesPerRequest: 1, lazyConnect: false });
    unanswered.on('error', () => undefined);
    try {
      const recorder = createRunMetricsRecorder(unanswered, nextPrefix(), { flushEveryMs: 60_000 });
      recorder.record('success', 5);
      const started = performance.now();
      await recorder.close();
      const took = performance.now() - started;
      assert.ok(took >= 900 && took < 2000, `closed in ${Math.round(took)} ms`);
    } finally {
      unanswered.disconnect();
      silent.close();
    }
  });

  it('adds a run ended off the hot path at once, without a duration when it has none', async () => {
    const prefix = nextPrefix();
    await recordRunMetrics(redis, prefix, 'stopped');
    await recordRunMetrics(redis, prefix, 'success', 7);
    assert.deepEqual(await readRunCounts(redis, prefix), { stopped: 1, success: 1 });
    assert.equal((await readRunDurations(redis, prefix)).count, 1);
  });
});
