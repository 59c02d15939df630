import type { Redis } from 'ioredis';
import type { Principal } from '../../shared/api.js';
import { activeRunsKey, conversationStreamKey, requestRunKey } from '../../shared/channels.js';

/**
 * The calls each caller has going, by conversation and by request id, so /api/exec/cancel and
 * /api/exec/attach can find them from any web process. Keys are per caller: another caller's lookup
 * finds nothing. Entries are removed when the call ends and expire on their own after `keepMs`
 * (a web process that died cannot remove them).
 */
export interface ActiveRun {
  runId: string;
  convid: string;
  agentName: string;
  caller: Pick<Principal, 'kind' | 'id'>;
  /** The request ids the caller can cancel it by (X-Request-Id, Idempotency-Key). */
  requestIds: string[];
  /** Whether the caller can cancel it by convid (it knows the convid while the call runs). */
  byConversation: boolean;
  /** True when the run's events are logged (it can be attached to). */
  logged: boolean;
}

/** What attach needs about the last logged run of a conversation. */
export interface AttachableRun {
  runId: string;
  agentName: string;
}

/** Whether registering the run is of any use: nothing to register is no Redis command on the call's path. */
export function isFindable(run: ActiveRun): boolean {
  return run.byConversation || run.requestIds.length > 0 || run.logged;
}

export async function registerRun(redis: Redis, prefix: string, run: ActiveRun, keepMs: number, replaySeconds: number): Promise<void> {
  const batch = redis.multi();
  if (run.byConversation) {
    const byConversation = activeRunsKey(prefix, run.caller, run.convid);
    batch.sadd(byConversation, run.runId).pexpire(byConversation, keepMs);
  }
  for (const id of run.requestIds) batch.set(requestRunKey(prefix, run.caller, id), run.runId, 'PX', keepMs);
  if (run.logged) {
    const streamed: AttachableRun = { runId: run.runId, agentName: run.agentName };
    batch.set(conversationStreamKey(prefix, run.caller, run.convid), JSON.stringify(streamed), 'EX', replaySeconds);
  }
  await batch.exec();
}

export async function unregisterRun(redis: Redis, prefix: string, run: ActiveRun): Promise<void> {
  const batch = redis.multi();
  if (run.byConversation) batch.srem(activeRunsKey(prefix, run.caller, run.convid), run.runId);
  for (const id of run.requestIds) batch.del(requestRunKey(prefix, run.caller, id));
  await batch.exec();
}

/** The runs a caller has going on a conversation, or the run a request id of theirs started. */
export async function findActiveRuns(
  redis: Redis,
  prefix: string,
  caller: Pick<Principal, 'kind' | 'id'>,
  target: { convid: string } | { requestId: string },
): Promise<string[]> {
  if ('convid' in target) return redis.smembers(activeRunsKey(prefix, caller, target.convid));
  const runId = await redis.get(requestRunKey(prefix, caller, target.requestId));
  return runId ? [runId] : [];
}

export async function findStreamedRun(redis: Redis, prefix: string, caller: Pick<Principal, 'kind' | 'id'>, convid: string): Promise<AttachableRun | undefined> {
  const text = await redis.get(conversationStreamKey(prefix, caller, convid));
  return text ? (JSON.parse(text) as AttachableRun) : undefined;
}
