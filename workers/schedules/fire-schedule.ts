import type { Job } from 'bullmq';
import type { ScheduleFiringData } from '../../shared/jobs.js';
import type { Logger } from '../../shared/logger.js';
import { findFiringSchedule } from '../../db/schedules.repository.js';
import { queueBackgroundRun, type BackgroundRunDeps } from '../../runs/queue-background-run.js';
import { removeScheduler, type ScheduleQueue } from '../../runs/schedulers.js';

export interface FiringDeps extends BackgroundRunDeps {
  queue: ScheduleQueue;
  logger: Logger;
}

/**
 * One firing of a schedule (DESIGN §19): a background run of its service account, of the schedule as
 * its row is now, in a new conversation unless the schedule names one. Its request id names the
 * schedule and the firing's time (`schedule:NAME:ISO-TIME`), as its execution record keeps it. A
 * firing whose schedule is gone removes its scheduler (a delete that could not reach BullMQ).
 */
export async function fireSchedule(deps: FiringDeps, job: Job<ScheduleFiringData>): Promise<void> {
  const { scheduleId } = job.data;
  const schedule = await findFiringSchedule(deps.db, scheduleId);
  if (!schedule) {
    await removeScheduler(deps.queue, scheduleId);
    deps.logger.info({ scheduleId }, 'schedule gone: its scheduler removed');
    return;
  }
  // prevMillis: the time this firing was due, whenever a worker took it.
  const firedAt = new Date(job.opts.prevMillis ?? job.timestamp).toISOString();
  const run = await queueBackgroundRun(deps, {
    caller: { kind: 'serviceAccount', id: schedule.service_account_id, role: schedule.role, plan: schedule.plan },
    agentName: schedule.agent_name,
    inputs: schedule.inputs,
    convid: schedule.convid ?? undefined,
    requestId: `schedule:${schedule.name}:${firedAt}`,
  });
  deps.logger.info({ schedule: schedule.name, firedAt, runId: run.runId, convid: run.convid }, 'schedule fired');
}
