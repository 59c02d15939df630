import { randomUUID } from 'node:crypto';
import type { ExecutionResponse, JsonObject, Principal } from '../../shared/api.js';
import { AppError } from '../../shared/errors.js';
import type { RunEvent } from '../../shared/events.js';
import type { RunJobData } from '../../shared/jobs.js';
import { findExecutionResponse } from '../../db/executions.repository.js';
import type { WebDeps } from '../deps.js';
import type { ExecAgentBody } from './exec.schemas.js';

export interface ExecCall {
  caller: Principal;
  body: ExecAgentBody;
  requestId: string;
}

export interface RunIds {
  runId: string;
  convid: string;
}

/** The run's id, and the conversation's: the given one, or a new one the run will create. */
export function planRun(call: ExecCall): RunIds {
  return { runId: randomUUID(), convid: call.body.convid ?? randomUUID() };
}

/** Extra wait past the longest possible run: a dead worker's job is declared stalled after ~30 s. */
const stallGraceMs = 35_000;

/**
 * Runs an agent through the queue and resolves with its execution response. The run's events reach
 * `onEvent` as they arrive (parts, deltas) so a streamed call can relay them.
 */
export async function executeAgent(
  deps: WebDeps,
  call: ExecCall,
  onEvent?: (event: RunEvent) => void,
  { runId, convid }: RunIds = planRun(call),
): Promise<ExecutionResponse> {
  const data: RunJobData = {
    runId,
    requestId: call.requestId,
    replyTo: deps.inbox.channel,
    stream: call.body.stream ?? false,
    agentName: call.body.agentName,
    convid,
    newConversation: call.body.convid === undefined,
    caller: call.caller,
    sealedInputs: deps.box.seal(JSON.stringify(call.body.inputs ?? ({} as JsonObject))),
  };
  let stopListening: () => void = () => undefined;
  const ended = new Promise<ExecutionResponse>((resolve, reject) => {
    // Listening starts before the job exists: pub/sub keeps nothing for late subscribers.
    stopListening = deps.inbox.listen(runId, (event) => {
      if (event.event === 'end') resolve(event.data);
      else if (event.event === 'refused') reject(new AppError(event.data.code, event.data.message));
      else onEvent?.(event);
    });
  });
  try {
    await deps.queue.add('run', data, { jobId: runId, removeOnComplete: true, removeOnFail: true });
    const waitMs = deps.config.convWaitMs + deps.config.maxAgentRuntimeMs + stallGraceMs;
    return await withDeadline(ended, waitMs, () => recoverLostAnswer(deps, runId));
  } finally {
    stopListening();
  }
}

/**
 * Pub/sub delivers at most once: when the end event was lost, the execution record has the answer.
 * A job no worker ever took is withdrawn so it cannot run after its caller was told it failed.
 */
async function recoverLostAnswer(deps: WebDeps, runId: string): Promise<ExecutionResponse> {
  const stored = await findExecutionResponse(deps.db, runId);
  if (stored) return stored as ExecutionResponse;
  await deps.queue.remove(runId).catch(() => 0);
  throw new AppError('unavailable', 'No worker finished the run in time; try again shortly.');
}

function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => onTimeout().then(resolve, reject), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
