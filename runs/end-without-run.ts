import type { RedisClient } from './redis-connection.js';
import { shardsOf } from '../shared/shards.js';
import type { ExecutionResponse } from '../shared/api.js';
import type { Config } from '../shared/config.js';
import type { RunJobData } from '../shared/jobs.js';
import type { Db } from '../db/database.js';
import { recordEndedRun, type RunIdentity } from '../db/executions.repository.js';
import { executionResponse, jobResponse } from './execution-response.js';
import { resumeRunEventPublisher } from './run-event-publisher.js';
import { recordRunMetrics } from './run-metrics.js';
import { endingsWithoutRun } from './run-endings.js';
import { releaseRunSlot } from './run-slots.js';
import { leaveTurn } from './turns.js';

export interface EndWithoutRunDeps {
  db: Db;
  /** The connection the metrics, the turn and the end event go through. */
  redis: RedisClient;
  config: Pick<Config, 'queuePrefix' | 'redisShards' | 'streamReplaySeconds'>;
}

/**
 * A run to end without a run of its agent (run-endings.ts has each ending's result code and message).
 * A job's caller waits for the end (cancelled in the queue, a failed job): it is told through the
 * job's events, and the job's turn and its place among its caller's runs (run-slots.ts) are left. A run given up by the web process waiting for it
 * (noWorkerAnswered) is only recorded: that process answers its caller itself (503), and the run's
 * worker, if any, still holds the turn.
 */
export type RunToEnd =
  | { ending: 'cancelledInQueue'; run: RunJobData }
  | { ending: 'jobFailed'; run: RunJobData; reason: string }
  | { ending: 'noWorkerAnswered'; run: RunIdentity };

export interface EndedWithoutRun {
  response: ExecutionResponse;
  /** False when the run had its execution record already (its worker, or another process, ended it first), or it could not be written. */
  recorded: boolean;
}

/** The steps of ending a job's run, for reporting the one that failed. */
export type EndStep = 'record' | 'turn' | 'announce';

/**
 * Ends a run that never ran, the same way from the web process and from the worker: writes its
 * execution record (the first record of a run is its answer, so one already there stands), then for a
 * job's run counts it in the run metrics (a failed job), leaves its turn and publishes its `end`.
 * Without `onStepFailed` a failed step is thrown; with it, it is reported and the next step still
 * runs (nobody else would tell the caller).
 */
export async function endWithoutRun(deps: EndWithoutRunDeps, end: RunToEnd, onStepFailed?: (step: EndStep, err: unknown) => void): Promise<EndedWithoutRun> {
  const rule = endingsWithoutRun[end.ending];
  const reason = end.ending === 'jobFailed' ? end.reason : rule.reason;
  const error = { message: rule.message };
  if (end.ending === 'noWorkerAnswered') {
    const response = executionResponse(end.run, rule.resultCode, { error });
    return { response, recorded: await recordEndedRun(deps.db, end.run, response, reason) };
  }
  const data = end.run;
  const prefix = deps.config.queuePrefix;
  const response = jobResponse(data, rule.resultCode, { error });
  const step = async <T>(name: EndStep, run: () => Promise<T>, otherwise: T): Promise<T> => {
    if (!onStepFailed) return run();
    try {
      return await run();
    } catch (err) {
      onStepFailed(name, err);
      return otherwise;
    }
  };
  if (rule.counted) void recordRunMetrics(deps.redis, prefix, response.resultCode);
  const recorded = await step('record', () => recordEndedRun(deps.db, data, response, reason), false);
  const turn = data.turn;
  await step('turn', () => Promise.all([turn && leaveTurn(deps.redis, shardsOf(deps.config).prefixOf(data.convid), data.convid, turn), releaseRunSlot(deps.redis, shardsOf(deps.config), data.caller, data.runId)]), undefined);
  await step(
    'announce',
    async () => {
      const publish = await resumeRunEventPublisher(deps.redis, shardsOf(deps.config).prefixOf(data.runId), data, deps.config.streamReplaySeconds * 1000);
      await publish({ event: 'end', data: response });
    },
    undefined,
  );
  return { response, recorded };
}
