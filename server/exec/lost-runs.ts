import type { ExecutionResponse } from '../../shared/api.js';
import { AppError } from '../../shared/errors.js';
import { findExecutionResponse, type RunIdentity } from '../../db/executions.repository.js';
import { endWithoutRun } from '../../runs/end-without-run.js';
import type { WebDeps } from '../deps.js';

/**
 * What a web process does when a run's answer may be lost: pub/sub delivers at most once, and a Redis
 * restart loses what was published (and, without persistence, the queued jobs) meanwhile. The
 * execution record in PostgreSQL is the answer of record. A call is never left waiting for a run that
 * can no longer answer: the web process records the run as given up, which the worker's own record
 * then cannot overwrite, so a caller told 503 finds nothing of the run kept (runs/commit.ts).
 */

/** How long after the run's last possible end a record may still be on its way. */
const commitGraceMs = 1000;
const pollMs = 250;

/** The stored answer, or, when there is none, the run given up (503) after withdrawing its job. */
export async function recoverLostAnswer(deps: WebDeps, run: RunIdentity): Promise<ExecutionResponse> {
  const stored = await findExecutionResponse(deps.db, run.runId);
  if (stored) return stored;
  await deps.runQueues.of(run.runId).remove(run.runId).catch(() => 0);
  return giveUp(deps, run);
}

/**
 * Watches a waiting call's run through reconnects of the run events connection. After one, the run's
 * end may have been published while nobody heard it: the stored answer settles the call; a job still
 * in the queue will still answer; a job gone from Redis can no longer start, and a run that had
 * started before the connection was lost ends within the max runtime, so the call waits that long for
 * its record and is then given up (503).
 */
export function watchForLostAnswer(
  deps: WebDeps,
  run: RunIdentity,
  settle: { answer(response: ExecutionResponse): void; fail(err: AppError): void },
): () => void {
  let watching = true;
  const stop = deps.runEvents.onReconnect((lostAt) => {
    void answerAfterReconnect(deps, run, lostAt, () => watching).then(
      (response) => response && watching && settle.answer(response),
      (err: unknown) => watching && settle.fail(err instanceof AppError ? err : new AppError('unavailable', 'The run could not be followed; try again.')),
    );
  });
  return () => {
    watching = false;
    stop();
  };
}

async function answerAfterReconnect(deps: WebDeps, run: RunIdentity, lostAt: number, watching: () => boolean): Promise<ExecutionResponse | undefined> {
  const stored = await findExecutionResponse(deps.db, run.runId);
  if (stored) return stored;
  if (await deps.runQueues.of(run.runId).getJob(run.runId)) return undefined;
  const deadline = lostAt + deps.config.maxAgentRuntimeMs + commitGraceMs;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    if (!watching()) return undefined;
    const late = await findExecutionResponse(deps.db, run.runId);
    if (late) return late;
  }
  return giveUp(deps, run);
}

/** Records the run as given up (runs/end-without-run.ts); if its worker recorded it first, that answer stands. */
async function giveUp(deps: WebDeps, run: RunIdentity): Promise<ExecutionResponse> {
  if ((await endWithoutRun(deps, { ending: 'noWorkerAnswered', run })).recorded) {
    throw new AppError('unavailable', 'No worker finished the run in time; nothing of it was kept. Try again shortly.');
  }
  const stored = await findExecutionResponse(deps.db, run.runId);
  if (stored) return stored;
  throw new AppError('unavailable', 'No worker finished the run in time; try again shortly.');
}
