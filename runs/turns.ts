import type { RedisClient } from './redis-connection.js';
import { conversationTicketKey, conversationTurnsKey } from '../shared/channels.js';
import { luaScript, scriptCommand } from './redis-script.js';

/**
 * The conversation is an actor: its calls run one at a time, in the order they arrived at any web
 * process. Arrival order is a per-conversation ticket from Redis; each call waiting for or holding the
 * conversation is a member of a sorted set scored by its ticket, and a worker starts a call only when
 * it is the set's head. (The version fence of the commit, commit.ts, is what keeps a stale writer from
 * keeping anything; this is what gives the order.) A member is `<enqueued epoch ms>:<runId>`, so an entry left behind by a
 * crashed process can be recognised as stale and dropped.
 */

const enqueueScript = luaScript(`
local ticket = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ticket, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if redis.call('ZRANGE', KEYS[2], 0, 0)[1] == ARGV[1] then return 1 end
return 0`);

// As enqueueScript, but only when no live call holds or waits for the conversation (ifBusy: reject):
// -1 then, and nothing is added. A member older than ARGV[3] (epoch ms) is a leftover and not counted.
const enqueueIfIdleScript = luaScript(`
for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local arrived = tonumber(string.match(member, '^(%d+):'))
  if arrived and arrived > tonumber(ARGV[3]) then return -1 end
end
local ticket = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ticket, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`);

/** Extra life of an entry past the longest wait and run: older ones are leftovers of a dead process. */
const graceMs = 60_000;

/** How long an entry may exist; it is removed when its call ends, this only bounds leftovers. */
export function turnLifetimeMs(config: { convWaitMs: number; maxAgentRuntimeMs: number }): number {
  return config.convWaitMs + config.maxAgentRuntimeMs + graceMs;
}

/** When the call of an entry arrived (epoch ms). */
export function turnArrivedAt(member: string): number {
  return Number(member.slice(0, member.indexOf(':')));
}

/** A call's place in its conversation's order. */
export interface Turn {
  /** The member to wait with. */
  member: string;
  /**
   * It was the head when it arrived: no call was waiting or running. Tickets only grow, so nothing can
   * get ahead of it later, and its worker starts it without looking at the order.
   */
  first: boolean;
}

/** Takes a ticket for a call on an existing conversation. */
export async function enqueueTurn(redis: RedisClient, prefix: string, convid: string, runId: string, keepMs: number): Promise<Turn> {
  const member = `${Date.now()}:${runId}`;
  const first = await enqueueScript(redis, 2, conversationTicketKey(prefix, convid), conversationTurnsKey(prefix, convid), member, keepMs);
  return { member, first: first === 1 };
}

/**
 * Takes a ticket only when no call is queued or running on the conversation (DESIGN §16 `ifBusy:
 * reject`); undefined, with nothing taken, when one is.
 */
export async function enqueueTurnIfIdle(redis: RedisClient, prefix: string, convid: string, runId: string, keepMs: number): Promise<Turn | undefined> {
  const now = Date.now();
  const member = `${now}:${runId}`;
  const taken = await enqueueIfIdleScript(redis, 2, conversationTicketKey(prefix, convid), conversationTurnsKey(prefix, convid), member, keepMs, now - keepMs);
  return taken === 1 ? { member, first: true } : undefined;
}

/** Drops a call from the order (it ended, was cancelled while queued, or never ran). */
export async function leaveTurn(redis: RedisClient, prefix: string, convid: string, member: string): Promise<void> {
  await redis.zrem(conversationTurnsKey(prefix, convid), member);
}

/**
 * How a wait for the turn ended. `ready` with `held`: the call before it ended in this process and
 * handed over the conversation as it left it (its committed state), so the call needs no read.
 */
export type TurnWait<Held> = { kind: 'ready'; held?: Held } | { kind: 'busy' } | { kind: 'stopped' };

export interface TurnOptions {
  /** Give up (busy) at this epoch ms. */
  deadline: number;
  signal: AbortSignal;
  /** An entry older than this is a leftover of a dead process. */
  staleMs: number;
  /** Called once if the call is not at the head when it first looks: it will wait. */
  onQueued?: () => void;
  /** The call was the head when it arrived (Turn.first): it is ready without a look. */
  first?: boolean;
}

/**
 * The worker's side: waits until a call is the head of its conversation's order. A waiter is woken
 * at once when a call ends in this process, by a `turn` message when it ends in another, and polls
 * as a safety net.
 */
export interface ConversationTurns<Held = unknown> {
  wait(convid: string, member: string, options: TurnOptions): Promise<TurnWait<Held>>;
  /**
   * Ends a call's turn and wakes whoever is next. `held`: the conversation as the ending call left it,
   * handed to the next call when that call waits in this process (the conversation as a hot actor).
   */
  release(convid: string, member: string, held?: Held, successor?: Promise<string | undefined>): Promise<void>;
  /**
   * Hands the conversation to the call next in line behind `member` before this call's turn ends, when
   * that call waits in this process: it starts from `held` (whose `committed` says whether this call's
   * commit kept it) while this call commits. `successor`: that call, as asked when this one started;
   * when it was not asked, it is asked now if any call on the conversation waits here. True when it
   * handed over; the turn is then ended with `leave`, which wakes nobody.
   */
  handOver(convid: string, member: string, held: Held, successor?: Promise<string | undefined>): Promise<boolean>;
  /** Ends the turn of a call that handed the conversation over already (handOver). */
  leave(convid: string, member: string): Promise<void>;
  /**
   * The call next in line behind `member` as the order stands now: asked as a call starts, so its
   * release can hand the turn to that call at once when it waits in this process. Calls that arrive
   * later queue behind it; if it has gone by the release, the release looks again.
   */
  successor(convid: string, member: string): Promise<string | undefined>;
  /** A `turn` message from another process: wake this process's waiters on the conversation. */
  wake(convid: string): void;
}

/**
 * A waiting call looks at the order again after this long, doubling up to `maxPollMs`: a safety net
 * only (a call is woken at once by a release in this process or a `turn` message from another), and
 * the calls queued on a busy conversation would otherwise look some twenty times a second each.
 */
const firstPollMs = 50;
const maxPollMs = 800;

/** The member right behind ARGV[1] in the order (nil when it is last or gone). */
const successorScript = scriptCommand<[key: string, member: string]>(
  1,
  `local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if not rank then return false end
return redis.call('ZRANGE', KEYS[1], rank + 1, rank + 1)[1]`,
);

interface Handover<Held> {
  held: Held | undefined;
}

/** This process's side of the turn order (a conversation's keys under its shard's prefix, `prefixOf`); `announce` tells the other processes a conversation's next call may start. */
export function createConversationTurns<Held>(redis: RedisClient, prefixOf: (convid: string) => string, announce: (convid: string) => Promise<unknown>): ConversationTurns<Held> {
  /**
   * This process's waiting calls: convid → member → how to wake it. Woken with a hand-over by a release
   * that saw it at the head of the order (in the same MULTI as its removal): it may start at once, with
   * the conversation as the call before it left it.
   */
  const waiters = new Map<string, Map<string, (handover?: Handover<Held>) => void>>();

  const wake = (convid: string) => {
    for (const resolve of waiters.get(convid)?.values() ?? []) resolve();
  };

  const nap = (convid: string, member: string, ms: number, signal: AbortSignal) =>
    new Promise<Handover<Held> | undefined>((resolve) => {
      const done = (handover?: Handover<Held>) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const local = waiters.get(convid);
        local?.delete(member);
        if (local?.size === 0) waiters.delete(convid);
        resolve(handover);
      };
      const timer = setTimeout(() => done(), ms);
      const onAbort = () => done();
      signal.addEventListener('abort', onAbort, { once: true });
      let local = waiters.get(convid);
      if (!local) waiters.set(convid, (local = new Map()));
      local.set(member, done);
    });

  /** How to wake `member` when it waits for the conversation in this process. */
  const waiterOf = (convid: string, member: string | undefined) => (member === undefined ? undefined : waiters.get(convid)?.get(member));

  // Not only at the head: a call handed the conversation early starts while the call before it still holds the turn.
  const successorOf = async (convid: string, member: string): Promise<string | undefined> => {
    const next = await successorScript(redis, conversationTurnsKey(prefixOf(convid), convid), member);
    return typeof next === 'string' ? next : undefined;
  };

  return {
    async wait(convid, member, { deadline, signal, staleMs, onQueued, first }) {
      if (signal.aborted) return { kind: 'stopped' };
      if (first) return { kind: 'ready' };
      const key = conversationTurnsKey(prefixOf(convid), convid);
      let queued = false;
      let handover: Handover<Held> | undefined;
      let pollMs = firstPollMs;
      for (;;) {
        if (signal.aborted) return { kind: 'stopped' };
        // Handed the turn by this process's release of the call before it: no need to read the head again.
        if (handover) return { kind: 'ready', held: handover.held };
        const [head] = await redis.zrange(key, 0, 0);
        // No head: the order was lost (Redis flushed); the version fence still keeps stale writers out.
        if (head === undefined || head === member) return { kind: 'ready' };
        if (Date.now() - turnArrivedAt(head) > staleMs) {
          await redis.zrem(key, head);
          continue;
        }
        const left = deadline - Date.now();
        if (left <= 0) return { kind: 'busy' };
        if (!queued) {
          queued = true;
          onQueued?.();
        }
        handover = await nap(convid, member, Math.min(pollMs, left), signal);
        pollMs = Math.min(pollMs * 2, maxPollMs);
      }
    },
    successor: successorOf,
    async handOver(convid, member, held, successor) {
      if (!successor && !waiters.has(convid)) return false;
      const waiting = waiterOf(convid, await (successor ?? successorOf(convid, member)).catch(() => undefined));
      if (!waiting) return false;
      waiting({ held });
      return true;
    },
    leave: (convid, member) => leaveTurn(redis, prefixOf(convid), convid, member),
    async release(convid, member, held, successor) {
      const key = conversationTurnsKey(prefixOf(convid), convid);
      const waiting = waiterOf(convid, await successor?.catch(() => undefined));
      if (waiting) {
        // Its successor waits here: it starts now, and the removal follows on the same connection,
        // before anything this process does to the order next. Other processes' waiters still see this
        // call at the head until then, and keep waiting.
        const removed = redis.zrem(key, member);
        waiting({ held });
        await removed;
        return;
      }
      const [, head] = (await redis.multi().zrem(key, member).zrange(key, 0, 0).exec()) ?? [];
      const next = (head?.[1] as string[] | undefined)?.[0];
      if (next === undefined) return;
      const local = waiterOf(convid, next);
      if (local) local({ held });
      else await announce(convid);
    },
    wake,
  };
}
