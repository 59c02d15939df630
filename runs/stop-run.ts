import { Job } from 'bullmq';
import { controlChannel } from '../shared/channels.js';
import type { ControlMessage } from '../shared/events.js';
import type { RunJobData } from '../shared/jobs.js';
import { endWithoutRun, type EndWithoutRunDeps } from './end-without-run.js';
import type { RunQueues } from './run-queues.js';

export interface StopRunDeps extends EndWithoutRunDeps {
  runQueues: RunQueues;
}

/**
 * Stops one run that is still queued or running (DESIGN §4 `stopped`). A running one is stopped by its
 * worker, told over the control channel (every worker listens; a worker that is just picking the job
 * up remembers the cancel). One still waiting in the queue is withdrawn here and ends `stopped` at
 * once. False when the run had ended already.
 */
export async function stopRun(deps: StopRunDeps, runId: string): Promise<boolean> {
  const job = await Job.fromId<RunJobData>(deps.runQueues.of(runId), runId);
  if (!job) return false;
  const message: ControlMessage = { type: 'cancel', runId };
  await deps.redis.publish(controlChannel(deps.config.queuePrefix), JSON.stringify(message));
  if (await withdraw(job)) await endWithoutRun(deps, { ending: 'cancelledInQueue', run: job.data });
  return true;
}

/** Removes a job no worker holds; false when a worker has it (BullMQ refuses to remove a locked job). */
async function withdraw(job: Job<RunJobData>): Promise<boolean> {
  try {
    await job.remove();
    return true;
  } catch {
    return false;
  }
}
