import { randomUUID } from 'node:crypto';
import type { JsonObject, Principal } from '../shared/api.js';
import type { Config } from '../shared/config.js';
import { AppError } from '../shared/errors.js';
import type { RunJobData } from '../shared/jobs.js';
import type { SecretBox } from '../shared/secret-box.js';
import { shardsOf } from '../shared/shards.js';
import type { Db } from '../db/database.js';
import { readCallerLimits } from './caller-limits.js';
import { fairPriority, queuePriority } from './fair-priority.js';
import type { RedisClient } from './redis-connection.js';
import type { RunQueues } from './run-queues.js';
import { releaseRunSlot, slotLeftoverAfterMs, takeRunSlot } from './run-slots.js';
import { enqueueTurn, leaveTurn, turnLifetimeMs, type Turn } from './turns.js';

/**
 * Queues a background run for an account from outside an API call (a schedule's firing, DESIGN §19),
 * through the same door a submit goes through (DESIGN §14, §16): the account's limits and fair
 * priority (runs/run-slots.ts), the conversation's turn order (runs/turns.ts), and a job marked
 * `background`, whose end goes to the account's webhook. Its events are logged, so getRun, wait and
 * attach by runId answer it as they answer a submitted run.
 */

export interface BackgroundRunDeps {
  config: Config;
  db: Db;
  redis: RedisClient;
  box: SecretBox;
  runQueues: RunQueues;
}

export interface BackgroundRunRequest {
  caller: Principal;
  agentName: string;
  inputs: JsonObject;
  /** The conversation to continue; a new one when undefined. */
  convid?: string | undefined;
  /** What the execution record names as the run's request id. */
  requestId: string;
}

/** Queues the run and answers its ids; throws 429 rateLimited (nothing queued) when a limit of the account refuses it. */
export async function queueBackgroundRun(deps: BackgroundRunDeps, request: BackgroundRunRequest): Promise<{ runId: string; convid: string }> {
  const { config, redis } = deps;
  const { caller } = request;
  const shards = shardsOf(config);
  const convid = request.convid ?? randomUUID();
  const runId = shards.runIdFor(convid);
  const { limits } = await readCallerLimits(deps.db, config, caller);
  const slot = await takeRunSlot(redis, shards, caller, runId, limits, slotLeftoverAfterMs(config));
  if (!slot.admitted) throw new AppError('rateLimited', `The account's ${slot.refusedBy} limit refused the run; nothing was queued.`);
  const priority = fairPriority(slot.inFlight, limits.weight);
  const shardPrefix = shards.prefixOf(convid);
  let turn: Turn | undefined;
  try {
    turn = await enqueueTurn(redis, shardPrefix, convid, runId, turnLifetimeMs(config));
    const data: RunJobData = {
      runId,
      requestId: request.requestId,
      events: { kind: 'log' },
      agentName: request.agentName,
      convid,
      newConversation: request.convid === undefined,
      turn: turn.member,
      ...(turn.first ? { turnFirst: true } : {}),
      caller,
      sealedInputs: deps.box.seal(JSON.stringify(request.inputs)),
      submittedAt: Date.now(),
      priority,
      background: true,
    };
    await deps.runQueues.of(convid).add('run', data, { jobId: runId, ...queuePriority(priority), removeOnComplete: true, removeOnFail: true });
  } catch (err) {
    if (turn) await leaveTurn(redis, shardPrefix, convid, turn.member).catch(() => undefined);
    await releaseRunSlot(redis, shards, caller, runId).catch(() => undefined);
    throw err;
  }
  return { runId, convid };
}
