import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { releaseRunSlot, sweepCallerLeftovers, takeRunSlot } from '../../runs/run-slots.js';
import { activeCallersKey, callerName, callerRunsKey } from '../../shared/channels.js';
import { shardsOf } from '../../shared/shards.js';
import { testEnv } from '../helpers/test-env.js';

/** The counts behind the limits per caller (runs/run-slots.ts, DESIGN §16), on the real Redis. */
describe('run slots', () => {
  let redis: Redis;
  const shards = shardsOf({ queuePrefix: `${testEnv.QUEUE_PREFIX}-run-slots`, redisShards: 1 });
  const limits = { runsInFlight: 2, runsPerMinute: 0 };
  const leftoverAfterMs = 60_000;
  const newCaller = () => ({ kind: 'serviceAccount' as const, id: randomUUID() });

  before(() => {
    redis = new Redis(testEnv.REDIS_URL!);
  });
  after(() => redis.disconnect());

  it('takes places up to runsInFlight, refuses the next, and takes one again once a run gives its place back', async () => {
    const caller = newCaller();
    const [first, second] = [randomUUID(), randomUUID()];
    assert.deepEqual(await takeRunSlot(redis, shards, caller, first, limits, leftoverAfterMs), { admitted: true, usedInMinute: 0, inFlight: 1 });
    assert.deepEqual(await takeRunSlot(redis, shards, caller, second, limits, leftoverAfterMs), { admitted: true, usedInMinute: 0, inFlight: 2 });
    assert.deepEqual(await takeRunSlot(redis, shards, caller, randomUUID(), limits, leftoverAfterMs), { admitted: false, refusedBy: 'runsInFlight', usedInMinute: 0, inFlight: 2 });
    await releaseRunSlot(redis, shards, caller, first);
    assert.equal((await takeRunSlot(redis, shards, caller, randomUUID(), limits, leftoverAfterMs)).admitted, true);
  });

  it("drops a place whose run's end was never heard once past its time, at the caller's next admission", async () => {
    const caller = newCaller();
    const start = Date.now();
    await takeRunSlot(redis, shards, caller, randomUUID(), limits, 1000, start);
    await takeRunSlot(redis, shards, caller, randomUUID(), limits, 1000, start);
    // Both places outlived their runs (a worker died): the caller is not refused for ever.
    const later = await takeRunSlot(redis, shards, caller, randomUUID(), limits, 1000, start + 2000);
    assert.deepEqual(later, { admitted: true, usedInMinute: 0, inFlight: 1 });
  });

  it("sweeps away the leftovers of a caller that never calls again, and the caller from the active callers; a caller's live run stays", async () => {
    const [gone, busy] = [newCaller(), newCaller()];
    const start = Date.now();
    await takeRunSlot(redis, shards, gone, randomUUID(), limits, 1000, start - 5000);
    const live = randomUUID();
    await takeRunSlot(redis, shards, busy, live, limits, leftoverAfterMs, start);
    const prefix = shards.prefixes[0]!;
    assert.ok((await sweepCallerLeftovers(redis, shards, start)) >= 2);
    assert.equal(await redis.exists(callerRunsKey(prefix, gone)), 0, 'the leftover is gone');
    assert.equal(await redis.sismember(activeCallersKey(prefix), callerName(gone)), 0);
    assert.deepEqual(await redis.zrange(callerRunsKey(prefix, busy), 0, -1), [live]);
    assert.equal(await redis.sismember(activeCallersKey(prefix), callerName(busy)), 1);
  });

  it('still admits after Redis has forgotten its scripts (a restarted or new node): the script is sent again', async () => {
    const caller = newCaller();
    await takeRunSlot(redis, shards, caller, randomUUID(), limits, leftoverAfterMs);
    await redis.script('FLUSH');
    assert.deepEqual(await takeRunSlot(redis, shards, caller, randomUUID(), limits, leftoverAfterMs), { admitted: true, usedInMinute: 0, inFlight: 2 });
  });
});
