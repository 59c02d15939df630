import { Job } from 'bullmq';
import type { Principal } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { stopRun } from '../../runs/stop-run.js';
import type { WebDeps } from '../deps.js';
import { findActiveRuns } from './active-runs.js';

export type CancelTarget = { convid: string } | { requestId: string } | { runId: string };

/**
 * Stops the caller's calls on a conversation, or the call a request id of theirs started (DESIGN §4).
 * A running call is stopped by its worker, told over the control channel (every worker listens; a
 * worker that is just picking the job up remembers the cancel). A call still waiting in the queue is
 * withdrawn here and answered `stopped` at once. True when some call was still going.
 */
export async function cancelRuns(deps: WebDeps, caller: Principal, target: CancelTarget): Promise<boolean> {
  const prefix = deps.config.queuePrefix;
  const runIds = 'runId' in target ? await ownRunGoingOn(deps, caller, target.runId) : await findActiveRuns(deps.redis, prefix, caller, target);
  return stopRuns(deps, runIds);
}

/** Stops a run whoever called it (the console's Cancel, for admins); true when it was still going. */
export async function cancelAnyRun(deps: WebDeps, runId: string): Promise<boolean> {
  return stopRuns(deps, [runId]);
}

async function stopRuns(deps: WebDeps, runIds: readonly string[]): Promise<boolean> {
  const prefix = deps.config.queuePrefix;
  let cancelled = false;
  for (const runId of runIds) if (await stopRun(deps, runId)) cancelled = true;
  return cancelled;
}

/** The run, when it is the caller's and still queued or running. */
async function ownRunGoingOn(deps: WebDeps, caller: Principal, runId: string): Promise<string[]> {
  const job = await Job.fromId<RunJobData>(deps.runQueues.of(runId), runId);
  return job && job.data.caller.kind === caller.kind && job.data.caller.id === caller.id ? [runId] : [];
}
