import { Queue, type ConnectionOptions } from 'bullmq';
import { scheduleQueueName } from '../shared/channels.js';
import type { ScheduleFiringData } from '../shared/jobs.js';
import type { Db } from '../db/database.js';
import { listScheduleTimings } from '../db/schedules.repository.js';
import type { ScheduleRow } from '../db/schema.js';

/**
 * The BullMQ side of schedules (DESIGN §19): one job scheduler per schedule, on the one `schedules`
 * queue under the installation's prefix, its id the schedule's row id. The row in PostgreSQL says what
 * runs and as whom; the scheduler only says when, and carries nothing but the row id. Its firings are
 * jobs of that queue, taken by the worker processes (workers/schedules/): each firing is one job
 * whatever the number of workers, and BullMQ adds a scheduler's next job only when a worker takes the
 * current one, so firings missed while no worker ran leave that one job, run once on a worker's return.
 */

export type ScheduleQueue = Queue<ScheduleFiringData>;
type Timing = Pick<ScheduleRow, 'id' | 'cron' | 'tz'>;

export function openScheduleQueue(connection: ConnectionOptions, prefix: string, onError: (err: Error) => void): ScheduleQueue {
  const queue = new Queue<ScheduleFiringData>(scheduleQueueName, { connection, prefix });
  queue.on('error', onError);
  return queue;
}

/** Creates or replaces the schedule's job scheduler; its next firing is computed again from now. */
export async function upsertScheduler(queue: ScheduleQueue, schedule: Timing): Promise<void> {
  await queue.upsertJobScheduler(
    schedule.id,
    { pattern: schedule.cron, tz: schedule.tz },
    { name: 'fire', data: { scheduleId: schedule.id }, opts: { removeOnComplete: true, removeOnFail: true } },
  );
}

export async function removeScheduler(queue: ScheduleQueue, scheduleId: string): Promise<void> {
  await queue.removeJobScheduler(scheduleId);
}

/** The next firing (epoch ms) of every job scheduler, by schedule id. */
export async function readNextFirings(queue: ScheduleQueue): Promise<Map<string, number>> {
  const schedulers = await queue.getJobSchedulers(0, -1);
  return new Map(schedulers.filter((s) => s.next !== undefined && s.next !== null).map((s) => [s.key, s.next!]));
}

/**
 * Makes the job schedulers match the rows: a scheduler for each schedule that has none (a Redis
 * restarted without persistence forgot them) or one of another cron or time zone, none for a schedule
 * that is gone. A scheduler that matches is left alone, so a firing that is due keeps its place.
 * Schedulers are read before rows: a set writes its row before its scheduler, so a scheduler seen
 * without a row here had its row deleted, never one about to be written.
 */
export async function reconcileSchedulers(db: Db, queue: ScheduleQueue): Promise<{ upserted: number; removed: number }> {
  const schedulers = new Map((await queue.getJobSchedulers(0, -1)).map((s) => [s.key, s]));
  const rows = await listScheduleTimings(db);
  let upserted = 0;
  for (const row of rows) {
    const scheduler = schedulers.get(row.id);
    schedulers.delete(row.id);
    if (scheduler && scheduler.pattern === row.cron && (scheduler.tz ?? 'UTC') === row.tz) continue;
    await upsertScheduler(queue, row);
    upserted += 1;
  }
  for (const orphan of schedulers.keys()) await removeScheduler(queue, orphan);
  return { upserted, removed: schedulers.size };
}
