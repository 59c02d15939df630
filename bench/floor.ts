import { Queue, Worker } from 'bullmq';
import { openRedis } from '../runs/redis-connection.js';
import { onRunEventMessage, publishRunEvent, subscribeRunEvents } from '../runs/run-event-pubsub.js';
import type { Profile } from './options.js';
import { runConcurrent, runSequential, withTimeout, type LoadResult } from './stats.js';

/**
 * The floor: a raw BullMQ round trip on the same Redis, in this process. Queue.add → a Worker
 * (concurrency 64, trivial processor) → the processor publishes on a pub/sub channel the producer
 * subscribed to before adding — the least any execAgent through the queue can cost.
 */

export interface Floor {
  sequentialP50: number;
  sequentialP99: number;
  sequentialRate: number;
  concurrentP50: number;
  concurrentP99: number;
  concurrentRate: number;
}

export type FloorFigure = keyof Floor;

/** The floor's round trip, ready to make one at a time (measureFloor, and scenarios that pair their calls with it). */
export interface FloorRig {
  roundTrip(id: string): Promise<void>;
  close(): Promise<void>;
}

/** Measures the floor, then closes every connection it opened (its keys stay under `prefix`). */
export async function measureFloor(redisUrl: string, prefix: string, profile: Profile): Promise<Floor> {
  const rig = await openFloorRig(redisUrl, prefix, profile.concurrency);
  try {
    let n = 0;
    const call = () => rig.roundTrip(`f-${++n}`);
    await runSequential(profile.warmupCalls, call);
    const sequential = await runSequential(profile.floorSequentialCalls, call);
    const concurrent = await runConcurrent(profile.floorConcurrentCalls, profile.concurrency, call);
    return toFloor(sequential, concurrent);
  } finally {
    await rig.close();
  }
}

function toFloor(sequential: LoadResult, concurrent: LoadResult): Floor {
  return {
    sequentialP50: sequential.p50,
    sequentialP99: sequential.p99,
    sequentialRate: sequential.callsPerSecond,
    concurrentP50: concurrent.p50,
    concurrentP99: concurrent.p99,
    concurrentRate: concurrent.callsPerSecond,
  };
}

/** On a Redis Cluster (`cluster`), `prefix` must carry a hash tag, and the result goes by sharded pub/sub as run events do. */
export async function openFloorRig(redisUrl: string, prefix: string, concurrency: number, cluster = false): Promise<FloorRig> {
  const channel = `${prefix}:floor:results`;
  const waiting = new Map<string, () => void>();
  const target = { redisUrl, redisCluster: cluster };
  const subscriber = openRedis(target, { maxRetriesPerRequest: null, sharded: true });
  onRunEventMessage(subscriber, (_channel, id) => waiting.get(id)?.());
  await subscribeRunEvents(subscriber, [channel]);

  const publisher = openRedis(target, { maxRetriesPerRequest: 1 });
  const producer = openRedis(target, { maxRetriesPerRequest: 1 });
  const consumer = openRedis(target, { maxRetriesPerRequest: null });
  const queue = new Queue<{ id: string }>('floor', { connection: producer, prefix });
  const worker = new Worker<{ id: string }>(
    'floor',
    async (job) => {
      await publishRunEvent(publisher, channel, job.data.id);
    },
    { connection: consumer, prefix, concurrency },
  );
  await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);

  return {
    async roundTrip(id) {
      const answered = new Promise<void>((resolve) => waiting.set(id, resolve));
      try {
        await queue.add('roundTrip', { id }, { jobId: id, removeOnComplete: true, removeOnFail: true });
        await withTimeout(answered, 10_000, `floor round trip ${id}`);
      } finally {
        waiting.delete(id);
      }
    },
    async close() {
      await worker.close();
      await queue.close();
      subscriber.disconnect();
      publisher.disconnect();
      producer.disconnect();
      consumer.disconnect();
    },
  };
}
