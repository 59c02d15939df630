import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { conversationTicketKey, runQueueName } from '../../shared/channels.js';
import type { Db } from '../../db/database.js';
import { testEnv } from './test-env.js';

/** Polls `condition` until it holds, failing after `timeoutMs`. */
export async function waitFor(condition: () => Promise<boolean> | boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** True while some transaction holds the conversation's row lock. */
export async function isConversationLocked(db: Db, convid: string): Promise<boolean> {
  try {
    await db.transaction().execute((trx) => sql`select 1 from conversations where id = ${convid} for update nowait`.execute(trx));
    return false;
  } catch (err) {
    if ((err as { code?: string }).code === '55P03') return true;
    throw err;
  }
}

const runQueues = new Map<string, Queue>();

/** True while a worker holds a run on the conversation (its job is active in the queue with this prefix). */
export async function isRunActive(convid: string, prefix = testEnv.QUEUE_PREFIX!): Promise<boolean> {
  let queue = runQueues.get(prefix);
  if (!queue) {
    queue = new Queue(runQueueName, { connection: new Redis(testEnv.REDIS_URL!, { maxRetriesPerRequest: null }), prefix });
    runQueues.set(prefix, queue);
  }
  const jobs = await queue.getJobs(['active']);
  return jobs.some((job) => (job.data as { convid?: string } | undefined)?.convid === convid);
}

const redisClients = new Map<string, Redis>();

/**
 * How many calls have arrived on the conversation: each takes the next ticket of its counter as it
 * arrives at a web process (runs/turns.ts), so a call sent after this grew has arrived after it.
 */
export async function ticketsTaken(convid: string, prefix = testEnv.QUEUE_PREFIX!): Promise<number> {
  let redis = redisClients.get(prefix);
  if (!redis) {
    redis = new Redis(testEnv.REDIS_URL!, { maxRetriesPerRequest: null });
    redisClients.set(prefix, redis);
  }
  return Number((await redis.get(conversationTicketKey(prefix, convid))) ?? 0);
}
