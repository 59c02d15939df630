import { createHmac } from 'node:crypto';
import type { RedisClient } from '../../runs/redis-connection.js';
import type { Principal } from '../../shared/api.js';
import { idempotencyRecordKey } from '../../shared/channels.js';
import { AppError, invalidRequest } from '../../shared/errors.js';

/**
 * Idempotency-Key (DESIGN §4): the first call with a key claims it for 24 h and records its run; a
 * retry with the same key from the same caller joins that run instead of starting another. A retry
 * with a different request under the same key is refused, as running it would break the promise.
 */
export const idempotencyHeader = 'Idempotency-Key';
const keepSeconds = 24 * 60 * 60;
const acceptableKey = /^[A-Za-z0-9._:-]{1,128}$/;

export interface IdempotentRun {
  runId: string;
  convid: string;
  agentName: string;
  /** Keyed digest of the request (the inputs may hold passwords, so never the request itself). */
  fingerprint: string;
  /**
   * Set while the web process that claimed the key tries the run as a short run of its own (epoch ms):
   * such a run publishes no events, so a retry meanwhile waits for its record (exec.service.ts).
   */
  inlineSince?: number;
}

/** The header's key, checked; undefined when the caller sent none. */
export function readIdempotencyKey(header: string): string | undefined {
  if (header === '') return undefined;
  if (!acceptableKey.test(header)) {
    throw invalidRequest({ [idempotencyHeader]: 'must be 1-128 letters, digits, or . _ : -' }, 'The Idempotency-Key header is not valid.');
  }
  return header;
}

export function fingerprintRequest(secret: string, request: unknown): string {
  return createHmac('sha256', `agentexec idempotency\0${secret}`).update(JSON.stringify(request)).digest('base64url');
}

/** Claims the key for `run`; resolves with the run that already holds it, if any. */
export async function claimIdempotencyKey(
  redis: RedisClient,
  prefix: string,
  caller: Pick<Principal, 'kind' | 'id'>,
  key: string,
  run: IdempotentRun,
): Promise<IdempotentRun | undefined> {
  const recordKey = idempotencyRecordKey(prefix, caller, key);
  const claimed = await redis.set(recordKey, JSON.stringify(run), 'EX', keepSeconds, 'NX');
  if (claimed === 'OK') return undefined;
  const text = await redis.get(recordKey);
  if (!text) return claimIdempotencyKey(redis, prefix, caller, key, run); // expired between the two commands
  const earlier = JSON.parse(text) as IdempotentRun;
  if (earlier.fingerprint !== run.fingerprint) {
    throw new AppError('invalidRequest', `This ${idempotencyHeader} was used for a different request; use a new key.`, {
      fields: { [idempotencyHeader]: 'already used for a different request' },
    });
  }
  return earlier;
}

/** The run that holds the key now, if any. */
export async function readIdempotencyClaim(redis: RedisClient, prefix: string, caller: Pick<Principal, 'kind' | 'id'>, key: string): Promise<IdempotentRun | undefined> {
  const text = await redis.get(idempotencyRecordKey(prefix, caller, key));
  return text ? (JSON.parse(text) as IdempotentRun) : undefined;
}

/** Records that the key's run, tried as a short run and declined, goes to the queue (its events are logged from now on). */
export async function markIdempotentRunQueued(redis: RedisClient, prefix: string, caller: Pick<Principal, 'kind' | 'id'>, key: string, run: IdempotentRun): Promise<void> {
  const { inlineSince: _inlineSince, ...queued } = run;
  await redis.set(idempotencyRecordKey(prefix, caller, key), JSON.stringify(queued), 'KEEPTTL', 'XX');
}

/** Frees the key of a call that could not be started, so its retry can run. */
export async function releaseIdempotencyKey(redis: RedisClient, prefix: string, caller: Pick<Principal, 'kind' | 'id'>, key: string): Promise<void> {
  await redis.del(idempotencyRecordKey(prefix, caller, key));
}
