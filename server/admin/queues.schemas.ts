import { z } from 'zod';

/** What /api/admin/getQueues, pauseQueues and resumeQueues answer (DESIGN §18). */
export const queuesAnswer = z.object({
  paused: z.boolean().describe('Intake paused: no worker starts a queued run, and no web process runs a call itself, until resumed.'),
  shards: z
    .array(
      z.object({
        shard: z.number().int().describe('0 to REDIS_SHARDS − 1.'),
        paused: z.boolean(),
        waiting: z.number().int().describe('Runs queued for a worker (in their fair order).'),
        running: z.number().int().describe('Runs a worker holds.'),
        delayed: z.number().int().describe('Runs queued to start later.'),
      }),
    )
    .describe("Each shard's run queue."),
  workers: z
    .array(
      z.object({
        id: z.string().describe('host:pid:random'),
        host: z.string(),
        pid: z.number().int(),
        startedAt: z.iso.datetime(),
        seenAt: z.iso.datetime().describe('When the worker last wrote its status (every 2 s; a worker not heard of for 10 s is left out).'),
        runsInFlight: z.number().int(),
        concurrency: z.number().int().describe('WORKER_CONCURRENCY.'),
        rssMb: z.number().int(),
        memoryBudgetMb: z.number().int().describe('WORKER_MEMORY_MB.'),
        takingRuns: z.boolean().describe('False while over its memory budget or closing: its runs go on, it takes no new one.'),
      }),
    )
    .describe('Each live worker process.'),
});
