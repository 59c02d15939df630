import type { RedisClient } from './redis-connection.js';
import type { Principal } from '../shared/api.js';
import { callerMinuteKey, callerName, callerRunsKey, callersInFlightKey, refusedCallersKey } from '../shared/channels.js';
import { scriptCommand } from './redis-script.js';
import type { Shards } from '../shared/shards.js';

/**
 * The counts behind the limits per caller (DESIGN §16), in Redis so they hold across every web
 * process. A caller's runs queued or running are a sorted set of run ids scored by when each becomes
 * a leftover: a run is added when its call is accepted and removed when it ends (the worker, the web
 * process for a run it answered itself or never queued, end-without-run.ts for a run ended in the
 * queue), and a run whose end was never heard (its worker died) falls out once past its score rather
 * than holding a place for ever. Runs started per minute are a counter per fixed one-minute window.
 *
 * A caller's counts live on one shard (DESIGN §17), chosen by a hash of the caller's name: with many
 * callers, admission spreads over the shards as the runs do, and one caller's limit is still checked
 * and taken in one script. callerLoad reads every shard's sets.
 */

type Account = Pick<Principal, 'kind' | 'id'>;

/** The key prefix of the shard that holds the caller's counts. */
function callerPrefix(shards: Shards, caller: Account): string {
  return shards.prefixOf(callerName(caller));
}

export const minuteMs = 60_000;

/** The one-minute window `at` (epoch ms) falls in. */
export function minuteWindow(at: number): number {
  return Math.floor(at / minuteMs);
}

// One round trip per call: drops leftovers, checks both limits, and takes the place or counts the refusal.
const admitScript = scriptCommand<[string, string, string, string, number, string, string, number, number, string, number, number]>(
  4,
  `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local inFlight = redis.call('ZCARD', KEYS[1])
local maxInFlight = tonumber(ARGV[4])
local perMinute = tonumber(ARGV[5])
local used = 0
if perMinute > 0 then used = tonumber(redis.call('GET', KEYS[2]) or '0') end
local refusedBy = ''
if maxInFlight > 0 and inFlight >= maxInFlight then refusedBy = 'runsInFlight'
elseif perMinute > 0 and used >= perMinute then refusedBy = 'runsPerMinute' end
if refusedBy ~= '' then
  redis.call('ZINCRBY', KEYS[4], 1, ARGV[6])
  redis.call('PEXPIRE', KEYS[4], 2 * tonumber(ARGV[7]))
  redis.call('ZADD', KEYS[3], inFlight, ARGV[6])
  return {0, refusedBy, used, inFlight}
end
if perMinute > 0 then
  used = redis.call('INCR', KEYS[2])
  if used == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[7]) end
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('ZADD', KEYS[3], inFlight + 1, ARGV[6])
return {1, '', used, inFlight + 1}`,
);

// Removes the run and counts the caller's runs again for callerLoad (dropping a caller with none).
const releaseScript = scriptCommand<[string, string, string, string, number]>(
  2,
  `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local left = redis.call('ZCARD', KEYS[1])
if left == 0 then redis.call('ZREM', KEYS[2], ARGV[2]) else redis.call('ZADD', KEYS[2], left, ARGV[2]) end
return left`,
);

/** The limits one admission checks (0 = none). */
export interface SlotLimits {
  runsPerMinute: number;
  runsInFlight: number;
}

export type SlotAnswer =
  | { admitted: true; usedInMinute: number; inFlight: number }
  | { admitted: false; refusedBy: 'runsPerMinute' | 'runsInFlight'; usedInMinute: number; inFlight: number };

/**
 * Takes a place for the run among its caller's runs in flight, and counts it in the current minute,
 * unless either limit is reached: then nothing is taken and the refusal is counted for callerLoad.
 * `leftoverAfterMs`: how long the place may outlive a run whose end is never heard.
 */
export async function takeRunSlot(redis: RedisClient, shards: Shards, caller: Account, runId: string, limits: SlotLimits, leftoverAfterMs: number, now = Date.now()): Promise<SlotAnswer> {
  const window = minuteWindow(now);
  const prefix = callerPrefix(shards, caller);
  const [admitted, refusedBy, used, inFlight] = (await admitScript(
    redis,
    callerRunsKey(prefix, caller),
    callerMinuteKey(prefix, caller, window),
    callersInFlightKey(prefix),
    refusedCallersKey(prefix, window),
    now,
    runId,
    String(now + leftoverAfterMs),
    limits.runsInFlight,
    limits.runsPerMinute,
    callerName(caller),
    minuteMs,
    leftoverAfterMs,
  )) as [number, string, number, number];
  if (admitted === 1) return { admitted: true, usedInMinute: used, inFlight };
  return { admitted: false, refusedBy: refusedBy as 'runsPerMinute' | 'runsInFlight', usedInMinute: used, inFlight };
}

/** Gives the run's place back (its run ended, or was never queued). Removing a place already gone does nothing. */
export async function releaseRunSlot(redis: RedisClient, shards: Shards, caller: Account, runId: string, now = Date.now()): Promise<void> {
  const prefix = callerPrefix(shards, caller);
  await releaseScript(redis, callerRunsKey(prefix, caller), callersInFlightKey(prefix), runId, callerName(caller), now);
}

/** One caller's load as callerLoad shows it. */
export interface CallerLoadCount {
  caller: Account;
  /** Runs queued or running now. */
  inFlight: number;
  /** Calls refused by a limit in the last minute (the current window, and the part of the one before still within the minute). */
  refused: number;
}

/** Callers considered per source: more than the top 20 shown, since a caller's counted score may be stale. */
const candidates = 100;

/** The callers with the most runs in flight plus refusals in the last minute, most first. */
export async function readCallerLoad(redis: RedisClient, shards: Shards, top: number, now = Date.now()): Promise<CallerLoadCount[]> {
  const window = minuteWindow(now);
  const perShard = await Promise.all(
    shards.prefixes.map((prefix) =>
      Promise.all([
        redis.zrevrange(callersInFlightKey(prefix), 0, candidates - 1),
        redis.zrevrange(refusedCallersKey(prefix, window), 0, candidates - 1, 'WITHSCORES'),
        redis.zrevrange(refusedCallersKey(prefix, window - 1), 0, candidates - 1, 'WITHSCORES'),
      ]),
    ),
  );
  // A sliding minute estimated from two fixed windows: the previous one weighted by how much of it is still within the minute.
  const previousWeight = 1 - (now - window * minuteMs) / minuteMs;
  const refused = new Map<string, number>();
  const inFlight: string[] = [];
  for (const [names, current, previous] of perShard) {
    inFlight.push(...names);
    for (let i = 0; i < current.length; i += 2) refused.set(current[i]!, (refused.get(current[i]!) ?? 0) + Number(current[i + 1]));
    for (let i = 0; i < previous.length; i += 2) refused.set(previous[i]!, (refused.get(previous[i]!) ?? 0) + Number(previous[i + 1]) * previousWeight);
  }
  const names = [...new Set([...inFlight, ...refused.keys()])];
  const accounts = names.map(parseCallerName);
  // Counted now (past leftovers excluded), not as last counted.
  const counts = await Promise.all(accounts.map((account) => redis.zcount(callerRunsKey(callerPrefix(shards, account), account), `(${now}`, '+inf')));
  return accounts
    .map((caller, i) => ({ caller, inFlight: counts[i]!, refused: Math.round(refused.get(names[i]!) ?? 0) }))
    .filter((load) => load.inFlight + load.refused > 0)
    .sort((a, b) => b.inFlight + b.refused - (a.inFlight + a.refused))
    .slice(0, top);
}

function parseCallerName(name: string): Account {
  const at = name.indexOf(':');
  return { kind: name.slice(0, at) as Account['kind'], id: name.slice(at + 1) };
}
