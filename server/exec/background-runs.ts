import { Job } from 'bullmq';
import type { ExecutionResponse, Principal } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { findRunRecord, type RunRecord } from '../../db/run-records.repository.js';
import type { WebDeps } from '../deps.js';

/** A run as getRun and wait answer it (DESIGN §14). */
export interface RunInfo {
  runId: string;
  convid: string;
  agentName: string;
  status: 'queued' | 'running' | 'ended';
  createdAt: string;
  endedAt?: string;
  /** Once ended: the execution response, output included. */
  response?: ExecutionResponse;
  /** A child run's parent: the run whose agent called this one (sys.call, DESIGN §19); absent for any other run. */
  parentRunId?: string;
}

/** Longest and default wait of /api/exec/wait. */
export const maxWaitMs = 60_000;
export const defaultWaitMs = 30_000;

/**
 * The caller's run: ended (its execution record, kept as long as its conversation), or still queued or
 * running (its job). Undefined for another caller's run or an unknown id, so neither is revealed.
 */
export async function readRun(deps: WebDeps, caller: Pick<Principal, 'kind' | 'id'>, runId: string): Promise<RunInfo | undefined> {
  const record = await findRunRecord(deps.db, caller, runId);
  if (record) return ended(record);
  const job = await Job.fromId<RunJobData>(deps.runQueues.of(runId), runId);
  if (job && job.data.caller.kind === caller.kind && job.data.caller.id === caller.id) {
    return {
      runId,
      convid: job.data.convid,
      agentName: job.data.agentName,
      status: job.processedOn ? 'running' : 'queued',
      createdAt: new Date(job.data.submittedAt ?? job.timestamp).toISOString(),
      ...(job.data.parent ? { parentRunId: job.data.parent.runId } : {}),
    };
  }
  // The run may have ended between the two reads (its job is removed once its record is written).
  const late = job ? undefined : await findRunRecord(deps.db, caller, runId);
  return late && ended(late);
}

/**
 * The run once it has ended, or as it is after `timeoutMs`. While it waits it holds no database
 * connection and no worker: it follows the run's events on the web process's one subscriber
 * connection (which replays what was published before it started following), and reads the run
 * again when the `end` comes or the time is up.
 */
export async function waitForRun(deps: WebDeps, caller: Pick<Principal, 'kind' | 'id'>, runId: string, timeoutMs: number): Promise<RunInfo | undefined> {
  const now = await readRun(deps, caller, runId);
  if (!now || now.status === 'ended') return now;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stopFollowing();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    const stopFollowing = deps.runEvents.follow(runId, 0, (event) => {
      if (event.event === 'end' || event.event === 'refused') done();
    });
  });
  return (await readRun(deps, caller, runId)) ?? now;
}

function ended(record: RunRecord): RunInfo {
  return {
    runId: record.runId,
    convid: record.convid,
    agentName: record.agentName,
    status: 'ended',
    createdAt: (record.submittedAt ?? record.startedAt).toISOString(),
    endedAt: record.finishedAt.toISOString(),
    response: record.response,
    ...(record.parentRunId ? { parentRunId: record.parentRunId } : {}),
  };
}
