import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient } from '../../runs/redis-connection.js';
import { codeMailKey, loginFailuresKey, loginIpFailuresKey } from '../../shared/channels.js';

/**
 * Brute-force limits kept in Redis, with the time from the server's clock. Addresses are counted by a
 * hash, whether or not they belong to a user, so the answers tell nothing about which do.
 */

/** Failed logins in a row after which each next try must wait, doubling from 1 s up to a minute. */
const freeFailures = 5;
const maxDelayMs = 60_000;
const ipWindowMs = 15 * 60_000;
/** Failures per address are forgotten a day after the last one. */
const failuresKeptMs = 24 * 3_600_000;
/** One code mail per address per minute. */
export const codeMailIntervalMs = 60_000;

export type Throttle = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** The wait required after `failures` failed logins in a row. */
export function loginDelayMs(failures: number): number {
  return failures < freeFailures ? 0 : Math.min(1000 * 2 ** (failures - freeFailures), maxDelayMs);
}

export function emailHash(email: string): string {
  return createHash('sha256').update(email).digest('base64url');
}

interface LoginSource {
  prefix: string;
  email: string;
  ip: string;
  now: Date;
}

/** May this address be tried from this client now? Refused while the growing delay runs or the client is over its limit. */
export async function checkLogin(redis: RedisClient, source: LoginSource, ipLimit: number): Promise<Throttle> {
  const nowMs = source.now.getTime();
  const ipKey = loginIpFailuresKey(source.prefix, source.ip);
  // The set holds at most the client's newest ipLimit failures (recordLoginFailure); older than the window count for nothing.
  const [[, counts], [, ipFailedAt]] = (await redis
    .multi()
    .hmget(loginFailuresKey(source.prefix, emailHash(source.email)), 'n', 'last')
    .zrange(ipKey, 0, -1, 'WITHSCORES')
    .exec()) as [[null, [string | null, string | null]], [null, string[]]];
  const ipWaitMs = clientLimitWaitMs(ipFailedAt.filter((_, i) => i % 2 === 1).map(Number), ipLimit, nowMs);
  if (ipWaitMs > 0) return refuse(ipWaitMs);
  const waitUntil = Number(counts[1] ?? 0) + loginDelayMs(Number(counts[0] ?? 0));
  return waitUntil > nowMs ? refuse(waitUntil - nowMs) : { allowed: true };
}

/**
 * How long a client that failed at these times (ms) must wait before it may try again: until fewer
 * than `limit` of its failures are within the last 15 minutes (0: it may now). A window that slides,
 * not one per quarter of an hour: three failures on either side of a quarter's turn count together.
 */
export function clientLimitWaitMs(failedAt: readonly number[], limit: number, nowMs: number): number {
  const recent = failedAt.filter((at) => at > nowMs - ipWindowMs).sort((a, b) => a - b);
  if (recent.length < limit) return 0;
  // The oldest must leave the window until limit - 1 are left; the last of them to leave is this one.
  return recent[recent.length - limit]! + ipWindowMs - nowMs;
}

/**
 * Counts a failed login against the address and the client. The client's newest `ipLimit` failures are
 * all its limit needs: concurrent tries that all passed the check cannot grow its set past that.
 */
export async function recordLoginFailure(redis: RedisClient, source: LoginSource, ipLimit: number): Promise<void> {
  const nowMs = source.now.getTime();
  const key = loginFailuresKey(source.prefix, emailHash(source.email));
  const ipKey = loginIpFailuresKey(source.prefix, source.ip);
  // A member of its own per failure: two in the same millisecond are two.
  const member = `${nowMs}:${randomBytes(6).toString('base64url')}`;
  await redis
    .multi()
    .hincrby(key, 'n', 1)
    .hset(key, 'last', nowMs)
    .pexpire(key, failuresKeptMs)
    .zadd(ipKey, nowMs, member)
    .zremrangebyrank(ipKey, 0, -(ipLimit + 1))
    .pexpire(ipKey, ipWindowMs)
    .exec();
}

/** A successful login or a new password starts the address's count over. */
export async function clearLoginFailures(redis: RedisClient, prefix: string, email: string): Promise<void> {
  await redis.del(loginFailuresKey(prefix, emailHash(email)));
}

// Answers 0 when the slot is taken now, else the milliseconds until it frees.
const takeSlotScript = `
local last = redis.call('GET', KEYS[1])
if last then
  local waited = tonumber(ARGV[1]) - tonumber(last)
  if waited < tonumber(ARGV[2]) then return tonumber(ARGV[2]) - waited end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 0`;

/** Allowed (and the minute starts) when no code was mailed to this address in the last minute; else how long until one may be. */
export async function takeCodeMailSlot(redis: RedisClient, prefix: string, email: string, now: Date): Promise<Throttle> {
  const waitMs = Number(await redis.eval(takeSlotScript, 1, codeMailKey(prefix, emailHash(email)), now.getTime(), codeMailIntervalMs, 2 * codeMailIntervalMs));
  return waitMs > 0 ? refuse(waitMs) : { allowed: true };
}

export async function releaseCodeMailSlot(redis: RedisClient, prefix: string, email: string): Promise<void> {
  await redis.del(codeMailKey(prefix, emailHash(email)));
}

function refuse(waitMs: number): Throttle {
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
}
