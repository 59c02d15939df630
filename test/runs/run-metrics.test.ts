import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { createRunMetricsRecorder, readRunCounts, readRunDurations, recordRunMetrics } from '../../runs/run-metrics.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/** Run metrics added up in a process and sent to Redis together (runs/run-metrics.ts), read as /metrics reads them. */
describe('run metrics', () => {
  let redis: Redis;
  let sent: string[];
  let prefixes = 0;
  const nextPrefix = () => `${testEnv.QUEUE_PREFIX}-run-metrics-${(prefixes += 1)}`;

  before(async () => {
    redis = new Redis(testEnv.REDIS_URL!);
    // Every command this connection sends, as Redis saw it: how many script calls a tally took.
    sent = [];
    const monitor = await redis.duplicate().monitor();
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'eval') sent.push(args.join(' '));
    });
    after(() => monitor.disconnect());
  });
  after(() => redis.disconnect());

  it('sends the runs counted between two flushes in one script call, counts and durations together', async () => {
    const prefix = nextPrefix();
    const recorder = createRunMetricsRecorder(redis, prefix, { flushEveryMs: 200 });
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
      await waitFor(() => sent.some((command) => command.includes(prefix)), 2000, 'the command in MONITOR');
      assert.equal(sent.filter((command) => command.includes(prefix)).length, 1);
    } finally {
      await recorder.close();
    }
  });

  it('sends what it still holds when closed, and nothing more after', async () => {
    const prefix = nextPrefix();
    const recorder = createRunMetricsRecorder(redis, prefix, { flushEveryMs: 60_000 });
    recorder.record('success', 12);
    assert.deepEqual(await readRunCounts(redis, prefix), {});
    await recorder.close();
    assert.deepEqual(await readRunCounts(redis, prefix), { success: 1 });
    assert.equal((await readRunDurations(redis, prefix)).count, 1);
  });

  it('adds a run ended off the hot path at once, without a duration when it has none', async () => {
    const prefix = nextPrefix();
    await recordRunMetrics(redis, prefix, 'stopped');
    await recordRunMetrics(redis, prefix, 'success', 7);
    assert.deepEqual(await readRunCounts(redis, prefix), { stopped: 1, success: 1 });
    assert.equal((await readRunDurations(redis, prefix)).count, 1);
  });
});
