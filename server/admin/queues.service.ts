import type { z } from 'zod';
import { controlChannel } from '../../shared/channels.js';
import type { ControlMessage } from '../../shared/events.js';
import { readWorkerStatuses } from '../../runs/worker-status.js';
import type { WebDeps } from '../deps.js';
import type { queuesAnswer } from './queues.schemas.js';

export type QueuesState = z.input<typeof queuesAnswer>;

/** Each shard's run queue (waiting, running, delayed, paused) and each live worker (DESIGN §18). */
export async function readQueues(deps: WebDeps): Promise<QueuesState> {
  const [shards, workers] = await Promise.all([
    Promise.all(
      deps.runQueues.all.map(async (queue, shard) => {
        const [counts, paused] = await Promise.all([queue.getJobCounts('wait', 'prioritized', 'active', 'delayed'), queue.isPaused()]);
        return { shard, paused, waiting: (counts.wait ?? 0) + (counts.prioritized ?? 0), running: counts.active ?? 0, delayed: counts.delayed ?? 0 };
      }),
    ),
    readWorkerStatuses(deps.redis, deps.config.queuePrefix),
  ]);
  return { paused: shards.some((shard) => shard.paused), shards, workers };
}

/**
 * Pauses or resumes intake: every shard's run queue (BullMQ's pause, across workers: running runs go on,
 * queued ones wait), and the runs web processes answer themselves (told over the control channel).
 */
export async function setIntakePaused(deps: WebDeps, paused: boolean): Promise<QueuesState> {
  await Promise.all(deps.runQueues.all.map((queue) => (paused ? queue.pause() : queue.resume())));
  const message: ControlMessage = { type: 'intake', paused };
  await deps.redis.publish(controlChannel(deps.config.queuePrefix), JSON.stringify(message));
  return readQueues(deps);
}
