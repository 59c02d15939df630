import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JsonObject } from '../shared/api.js';
import type { RunEvent } from '../shared/events.js';
import type { RunJobData } from '../shared/jobs.js';
import type { Logger } from '../shared/logger.js';
import { insertExecution } from '../db/executions.repository.js';
import { executeRun, type RunDeps, type RunEventSink } from './runs/execute-run.js';

export interface ProcessorDeps extends RunDeps {
  /** Connection for PUBLISH (not the worker's blocking one). */
  publisher: Redis;
  logger: Logger;
}

/** Publishes one event of a run to the web process that waits for it. */
export async function publishRunEvent(publisher: Redis, channel: string, event: RunEvent): Promise<void> {
  await publisher.publish(channel, JSON.stringify(event));
}

/**
 * The BullMQ processor for run jobs. Declares the third parameter so BullMQ hands it the AbortSignal
 * of worker.cancelJob.
 */
export function createRunAgentProcessor(deps: ProcessorDeps) {
  return async (job: Job<RunJobData>, _token?: string, signal?: AbortSignal): Promise<void> => {
    const data = job.data;
    const publish = (event: RunEvent) =>
      publishRunEvent(deps.publisher, data.replyTo, event).catch((err) => deps.logger.warn({ err, runId: data.runId }, 'run event not published'));
    const sink: RunEventSink = {
      part: (part) => void publish({ runId: data.runId, event: 'part', data: part }),
      delta: (text) => void publish({ runId: data.runId, event: 'delta', data: { text } }),
    };
    const inputs = JSON.parse(deps.box.open(data.sealedInputs)) as JsonObject;
    const result = await executeRun(deps, data, inputs, sink, signal);
    if (result.kind === 'refused') {
      await publish({ runId: data.runId, event: 'refused', data: { code: result.code, message: result.message } });
      return;
    }
    deps.logger.info({ runId: data.runId, requestId: data.requestId, agentName: data.agentName, resultCode: result.response.resultCode }, 'run ended');
    await publish({ runId: data.runId, event: 'end', data: result.response });
  };
}

/**
 * A run whose job failed (its worker died and the stall checker gave up on it, or the processor threw):
 * nothing of it was committed, so the caller is told `unexpected` and the error report gets a row.
 */
export async function reportFailedRun(deps: ProcessorDeps, data: RunJobData, reason: string): Promise<void> {
  const response = {
    resultCode: 'unexpected' as const,
    convid: data.convid,
    agentName: data.agentName,
    output: [],
    error: { message: 'The run ended unexpectedly.' },
  };
  deps.logger.error({ runId: data.runId, requestId: data.requestId, reason }, 'run failed');
  const now = new Date();
  await insertExecution(deps.db, {
    id: data.runId,
    convid: data.convid,
    agent_name: data.agentName,
    agent_version: null,
    principal_kind: data.caller.kind,
    principal_id: data.caller.id,
    request_id: data.requestId,
    result_code: 'unexpected',
    error_message: reason,
    response: JSON.stringify(response),
    started_at: now,
    finished_at: now,
    duration_ms: 0,
  }).catch((err) => deps.logger.warn({ err, runId: data.runId }, 'failed run not recorded'));
  await publishRunEvent(deps.publisher, data.replyTo, { runId: data.runId, event: 'end', data: response }).catch(() => undefined);
}
