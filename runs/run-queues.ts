import { Queue, type ConnectionOptions } from 'bullmq';
import { runQueueName } from '../shared/channels.js';
import type { RunJobData } from '../shared/jobs.js';
import type { Shards } from '../shared/shards.js';

/**
 * The run queue of each shard (DESIGN §17): a run is queued on its conversation's shard, and found
 * there again from its id alone (a run id hashes to its conversation's shard: shared/shards.ts).
 * With one shard, the one queue of before, under the installation's prefix.
 */
export interface RunQueues {
  /** By shard number. */
  readonly all: readonly Queue<RunJobData>[];
  /** The queue of the shard a conversation or a run belongs to. */
  of(id: string): Queue<RunJobData>;
  close(): Promise<void>;
}

export function openRunQueues(shards: Shards, connection: ConnectionOptions, onError: (err: Error) => void): RunQueues {
  const all = shards.prefixes.map((prefix) => {
    const queue = new Queue<RunJobData>(runQueueName, { connection, prefix });
    queue.on('error', onError);
    return queue;
  });
  return {
    all,
    of: (id) => all[shards.of(id)]!,
    close: () => Promise.all(all.map((queue) => queue.close())).then(() => undefined),
  };
}

/** Whether intake is paused (an admin paused the run queues: server/admin/queues.service.ts). */
export async function isIntakePaused(queues: RunQueues): Promise<boolean> {
  return (await Promise.all(queues.all.map((queue) => queue.isPaused()))).some(Boolean);
}
