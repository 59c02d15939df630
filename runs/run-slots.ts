import type { RedisClient } from './redis-connection.js';
import type { Principal } from '../shared/api.js';
import { callerMinuteKey, callerName, callerRunsKey, activeCallersKey, refusedCallersKey } from '../shared/channels.js';
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
 * The sorted set has no expiry to keep up (one command less on every admission): it vanishes with its
 * last run, and a caller's set holding only leftovers is emptied at its next admission, when callerLoad
 * reads it, or by the maintenance sweep (sweepCallerLeftovers). A caller is in its shard's active
 * callers whenever its set is not empty, so the sweep finds every set that could hold a leftover.
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

/** How long a place outlives a run whose end is never heard: the longest a call waits for its run, and a margin. */
export function slotLeftoverAfterMs(config: { convWaitMs: number; maxAgentRuntimeMs: number; jobLockMs: number }): number {
  return config.convWaitMs + config.maxAgentRuntimeMs + 2 * config.jobLockMs + 60_000;
}

/** The one-minute window `at` (epoch ms) falls in. */
export function minuteWindow(at: number): number {
  return Math.floor(at / minuteMs);
}

// One round trip per call: drops leftovers, checks both limits, and takes the place or counts the
// refusal; a caller's first run in flight adds it to the callers callerLoad looks at. A caller with
// no run in flight has no leftover to drop: the common case of an idle caller costs two commands
// in the script (ZCARD, ZADD) and the SADD.
const admitScript = scriptCommand<[string, string, string, string, number, string, string, number, number, string, number]>(
  4,
  `
local now = tonumber(ARGV[1])
local inFlight = redis.call('ZCARD', KEYS[1])
if inFlight > 0 then inFlight = inFlight - redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) end
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
  return {0, refusedBy, used, inFlight}
end
if perMinute > 0 then
  used = redis.call('INCR', KEYS[2])
  if used == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[7]) end
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
if inFlight == 0 then redis.call('SADD', KEYS[3], ARGV[6]) end
return {1, '', used, inFlight + 1}`,
);

// Drops a caller's leftovers, and the caller from the callers callerLoad looks at when it has no run
// left (atomically: one admitted meanwhile has a run and stays).
const dropLeftoversScript = scriptCommand<[string, string, string, number]>(
  2,
  `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end`,
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
    activeCallersKey(prefix),
    refusedCallersKey(prefix, window),
    now,
    runId,
    String(now + leftoverAfterMs),
    limits.runsInFlight,
    limits.runsPerMinute,
    callerName(caller),
    minuteMs,
  )) as [number, string, number, number];
  if (admitted === 1) return { admitted: true, usedInMinute: used, inFlight };
  return { admitted: false, refusedBy: refusedBy as 'runsPerMinute' | 'runsInFlight', usedInMinute: used, inFlight };
}

/**
 * Gives the run's place back (its run ended, or was never queued): one command. Removing a place
 * already gone does nothing; leftovers go at the next admission, and a caller left with none leaves
 * callerLoad's list when callerLoad next reads it.
 */
export async function releaseRunSlot(redis: RedisClient, shards: Shards, caller: Account, runId: string): Promise<void> {
  await redis.zrem(callerRunsKey(callerPrefix(shards, caller), caller), runId);
}

/** One caller's load as callerLoad shows it. */
export interface CallerLoadCount {
  caller: Account;
  /** Runs queued or running now. */
  inFlight: number;
  /** Calls refused by a limit in the last minute (the current window, and the part of the one before still within the minute). */
  refused: number;
}

/** Callers with the most refusals considered per shard and window: more than the top 20 shown. */
const refusedCandidates = 100;

/** The callers with the most runs in flight plus refusals in the last minute, most first. */
export async function readCallerLoad(redis: RedisClient, shards: Shards, top: number, now = Date.now()): Promise<CallerLoadCount[]> {
  const window = minuteWindow(now);
  const perShard = await Promise.all(
    shards.prefixes.map((prefix) =>
      Promise.all([
        redis.smembers(activeCallersKey(prefix)),
        redis.zrevrange(refusedCallersKey(prefix, window), 0, refusedCandidates - 1, 'WITHSCORES'),
        redis.zrevrange(refusedCallersKey(prefix, window - 1), 0, refusedCandidates - 1, 'WITHSCORES'),
      ]),
    ),
  );
  // A sliding minute estimated from two fixed windows: the previous one weighted by how much of it is still within the minute.
  const previousWeight = 1 - (now - window * minuteMs) / minuteMs;
  const refused = new Map<string, number>();
  const active: string[] = [];
  for (const [names, current, previous] of perShard) {
    active.push(...names);
    for (let i = 0; i < current.length; i += 2) refused.set(current[i]!, (refused.get(current[i]!) ?? 0) + Number(current[i + 1]));
    for (let i = 0; i < previous.length; i += 2) refused.set(previous[i]!, (refused.get(previous[i]!) ?? 0) + Number(previous[i + 1]) * previousWeight);
  }
  const names = [...new Set([...active, ...refused.keys()])];
  const accounts = names.map(parseCallerName);
  // Counted now (past leftovers excluded).
  const counts = await Promise.all(accounts.map((account) => redis.zcount(callerRunsKey(callerPrefix(shards, account), account), `(${now}`, '+inf')));
  const listed = new Set(active);
  const idle = accounts.filter((_, i) => counts[i] === 0 && listed.has(names[i]!));
  await Promise.all(idle.map((account) => dropLeftovers(redis, shards, account, now)));
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

function dropLeftovers(redis: RedisClient, shards: Shards, caller: Account, now: number): Promise<unknown> {
  const prefix = callerPrefix(shards, caller);
  return dropLeftoversScript(redis, callerRunsKey(prefix, caller), activeCallersKey(prefix), callerName(caller), now);
}

/**
 * Drops every leftover place of every caller, on every shard, and the callers left with no run from
 * the active callers: what a caller that never calls again would otherwise keep. The maintenance
 * worker runs it with the retention sweep. Answers how many callers it looked at.
 */
export async function sweepCallerLeftovers(redis: RedisClient, shards: Shards, now = Date.now()): Promise<number> {
  let callers = 0;
  for (const prefix of shards.prefixes) {
    const names = await redis.smembers(activeCallersKey(prefix));
    callers += names.length;
    await Promise.all(names.map((name) => dropLeftovers(redis, shards, parseCallerName(name), now)));
  }
  return callers;
}
