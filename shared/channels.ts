import type { Principal } from './api.js';

/**
 * Every Redis key and channel name, built from the configured prefix. Keys that belong to a caller
 * carry its principal, so a lookup by another caller finds nothing (and learns nothing).
 */

/** BullMQ queue that carries agent runs. */
export const runQueueName = 'runs';

/** BullMQ queue of periodic housekeeping (the retention sweep). */
export const maintenanceQueueName = 'maintenance';

/** BullMQ queue that holds the schedules' job schedulers and their firings (DESIGN §19). */
export const scheduleQueueName = 'schedules';

/** Pub/sub channel a web process listens on for the events of the non-streamed runs it started. */
export function webInboxChannel(prefix: string, webId: string): string {
  return `${prefix}:inbox:${webId}`;
}

/** Pub/sub channel a worker listens on for the ends of the child runs its runs started (sys.call, DESIGN §19). */
export function workerInboxChannel(prefix: string, workerId: string): string {
  return `${prefix}:child-ends:${workerId}`;
}

/** Pub/sub channel of one logged run's events (streamed or idempotent calls). */
export function runChannel(prefix: string, runId: string): string {
  return `${prefix}:run:${runId}`;
}

/** List of one logged run's events, kept STREAM_REPLAY_SECONDS for re-attaching. */
export function runEventsKey(prefix: string, runId: string): string {
  return `${prefix}:run-events:${runId}`;
}

/** A key never written: /readyz asks whether it exists, so the question goes where this installation's keys are. */
export function readinessKey(prefix: string): string {
  return `${prefix}:readiness`;
}

/** Hash of each live worker process's status (runs/worker-status.ts), by worker id. */
export function workerStatusKey(prefix: string): string {
  return `${prefix}:workers`;
}

/** Pub/sub channel every worker listens on for cancels. */
export function controlChannel(prefix: string): string {
  return `${prefix}:control`;
}

/** An account as keys and caches name it: `<kind>:<id>`. */
export function callerName(principal: Pick<Principal, 'kind' | 'id'>): string {
  return `${principal.kind}:${principal.id}`;
}

/** Set of the run ids a caller has going (queued or running) on one conversation. */
export function activeRunsKey(prefix: string, principal: Pick<Principal, 'kind' | 'id'>, convid: string): string {
  return `${prefix}:active:${callerName(principal)}:${convid}`;
}

/** The run a caller's request id (X-Request-Id or Idempotency-Key) started. */
export function requestRunKey(prefix: string, principal: Pick<Principal, 'kind' | 'id'>, requestId: string): string {
  return `${prefix}:request:${callerName(principal)}:${requestId}`;
}

/** The last streamed run on a conversation, for /api/exec/attach. */
export function conversationStreamKey(prefix: string, principal: Pick<Principal, 'kind' | 'id'>, convid: string): string {
  return `${prefix}:stream:${callerName(principal)}:${convid}`;
}


/** Sorted set of the calls waiting for or holding a conversation, in arrival order; and its ticket counter. */
export function conversationTurnsKey(prefix: string, convid: string): string {
  return `${prefix}:turns:${convid}`;
}

export function conversationTicketKey(prefix: string, convid: string): string {
  return `${prefix}:ticket:${convid}`;
}

/** Failed logins for one address (by a hash of it, known or not): count and time of the last, for the growing delay. */
export function loginFailuresKey(prefix: string, emailHash: string): string {
  return `${prefix}:login-failures:${emailHash}`;
}

/** Failed logins from one client address: a sorted set of the times (ms) of its newest LOGIN_IP_MAX_FAILURES, gone 15 minutes after the last. */
export function loginIpFailuresKey(prefix: string, ip: string): string {
  return `${prefix}:login-ip-failed-at:${ip}`;
}

/** When a code was last mailed to an address (by a hash of it): at most one per minute. */
export function codeMailKey(prefix: string, emailHash: string): string {
  return `${prefix}:code-mail:${emailHash}`;
}

/** Hash of runs ended so far, cluster-wide: field resultCode → count (runs/run-metrics.ts). */
export function runCountsMetricsKey(prefix: string): string {
  return `${prefix}:metrics:runs`;
}

/** Hash of the run duration histogram, cluster-wide: cumulative bucket counts by `le`, `sum_ms`, `count`. */
export function runDurationMetricsKey(prefix: string): string {
  return `${prefix}:metrics:run-duration`;
}

/**
 * Pub/sub channel on which a change to a service account (key rotated, account deleted, role or plan
 * changed) is announced after it is committed. The message is the account's id and nothing else (never
 * a key or a hash); every web process drops what it cached of that account (server/auth/bearer-keys.ts).
 */
export function serviceAccountsChannel(prefix: string): string {
  return `${prefix}:service-accounts`;
}

/** Sorted set of a caller's runs queued or running (DESIGN §16): member runId, score the epoch ms after which it is a leftover. */
export function callerRunsKey(prefix: string, principal: Pick<Principal, 'kind' | 'id'>): string {
  return `${prefix}:limits:runs:${callerName(principal)}`;
}

/** Count of the runs a caller started in one fixed minute window (`window` = epoch ms / 60,000, floored). */
export function callerMinuteKey(prefix: string, principal: Pick<Principal, 'kind' | 'id'>, window: number): string {
  return `${prefix}:limits:minute:${callerName(principal)}:${window}`;
}

/**
 * Set of the callers that may have runs in flight (member callerName), for /api/admin/callerLoad: a
 * caller is added when its first run in flight is admitted, and dropped by callerLoad once found with none.
 */
export function activeCallersKey(prefix: string): string {
  return `${prefix}:limits:active-callers`;
}

/** Sorted set of callers by calls refused by a limit in one minute window (member callerName). */
export function refusedCallersKey(prefix: string, window: number): string {
  return `${prefix}:limits:refused:${window}`;
}
