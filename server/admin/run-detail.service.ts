import { Job } from 'bullmq';
import type { z } from 'zod';
import { callerName } from '../../shared/channels.js';
import type { RunJobData } from '../../shared/jobs.js';
import { findAccountLabels } from '../../db/caller-limits.repository.js';
import { findRunDetail, type RunDetailRow } from '../../db/run-detail.repository.js';
import { accountLabel } from '../../runs/caller-limits.js';
import type { WebDeps } from '../deps.js';
import type { adminRunAnswer } from './run-detail.schemas.js';

export type AdminRun = z.input<typeof adminRunAnswer>;

/**
 * Any caller's run, for the console's Run page (DESIGN §18): ended (its execution record, timeline
 * included), or still queued or running (its job). Undefined for an unknown id.
 */
export async function readAdminRun(deps: WebDeps, runId: string): Promise<AdminRun | undefined> {
  const record = await findRunDetail(deps.db, runId);
  if (record) return withLabel(deps, ended(record));
  const job = await Job.fromId<RunJobData>(deps.runQueues.of(runId), runId);
  // The run may have ended between the two reads (its job is removed once its record is written).
  if (!job) {
    const late = await findRunDetail(deps.db, runId);
    return late && withLabel(deps, ended(late));
  }
  return withLabel(deps, inFlight(job));
}

function ended(row: RunDetailRow): AdminRun {
  return {
    runId: row.runId,
    convid: row.convid,
    agentName: row.agentName,
    status: 'ended',
    account: { kind: row.principalKind, id: row.principalId },
    agentVersion: row.agentVersion,
    draftId: row.draftId,
    requestId: row.requestId,
    background: row.background,
    submittedAt: row.submittedAt?.toISOString() ?? null,
    startedAt: row.startedAt.toISOString(),
    finishedAt: row.finishedAt.toISOString(),
    durationMs: row.durationMs,
    resultCode: row.resultCode,
    errorMessage: row.errorMessage,
    response: row.response,
    traceId: row.traceId,
    timeline: row.timeline ?? [],
    parentRunId: row.parentRunId,
  };
}

function inFlight(job: Job<RunJobData>): AdminRun {
  const { data } = job;
  return {
    runId: data.runId,
    convid: data.convid,
    agentName: data.agentName,
    status: job.processedOn ? 'running' : 'queued',
    account: { kind: data.caller.kind, id: data.caller.id },
    agentVersion: null,
    draftId: data.draft?.id ?? null,
    requestId: data.requestId,
    background: data.background === true,
    submittedAt: new Date(data.submittedAt ?? job.timestamp).toISOString(),
    startedAt: job.processedOn ? new Date(job.processedOn).toISOString() : null,
    finishedAt: null,
    durationMs: null,
    resultCode: null,
    errorMessage: null,
    response: null,
    traceId: null,
    timeline: [],
    parentRunId: data.parent?.runId ?? null,
  };
}

async function withLabel(deps: WebDeps, run: AdminRun): Promise<AdminRun> {
  const labels = await findAccountLabels(deps.db, [run.account]);
  return { ...run, account: { ...run.account, ...accountLabel(run.account.kind, labels.get(callerName(run.account))) } };
}
