import type { Redis } from 'ioredis';
import { conversationTicketKey, conversationTurnsKey } from '../shared/channels.js';

/**
 * The conversation is an actor: its calls run one at a time, in the order they arrived at any web
 * process. Arrival order is a per-conversation ticket from Redis; each call waiting for or holding the
 * conversation is a member of a sorted set scored by its ticket, and a worker starts a call only when
 * it is the set's head. (The version fence of the commit, commit.ts, is what keeps a stale writer from
 * keeping anything; this is what gives the order.) A member is `<enqueued epoch ms>:<runId>`, so an entry left behind by a
 * crashed process can be recognised as stale and dropped.
 */

const enqueueScript = `
local ticket = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ticket, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return ticket`;

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

/** Takes a ticket for a call on an existing conversation; returns the member to wait with. */
export async function enqueueTurn(redis: Redis, prefix: string, convid: string, runId: string, keepMs: number): Promise<string> {
  const member = `${Date.now()}:${runId}`;
  await redis.eval(enqueueScript, 2, conversationTicketKey(prefix, convid), conversationTurnsKey(prefix, convid), member, keepMs);
  return member;
}

/** Drops a call from the order (it ended, was cancelled while queued, or never ran). */
export async function leaveTurn(redis: Redis, prefix: string, convid: string, member: string): Promise<void> {
  await redis.zrem(conversationTurnsKey(prefix, convid), member);
}

export type TurnWait = 'ready' | 'busy' | 'stopped';

export interface TurnOptions {
  /** Give up (busy) at this epoch ms. */
  deadline: number;
  signal: AbortSignal;
  /** An entry older than this is a leftover of a dead process. */
  staleMs: number;
}

/**
 * The worker's side: waits until a call is the head of its conversation's order. A waiter is woken
 * at once when a call ends in this process, by a `turn` message when it ends in another, and polls
 * as a safety net.
 */
export interface ConversationTurns {
  wait(convid: string, member: string, options: TurnOptions): Promise<TurnWait>;
  /** Ends a call's turn and wakes whoever is next. */
  release(convid: string, member: string): Promise<void>;
  /** A `turn` message from another process: wake this process's waiters on the conversation. */
  wake(convid: string): void;
}

const pollMs = 50;

/** This process's side of the turn order; `announce` tells the other processes a conversation's next call may start. */
export function createConversationTurns(redis: Redis, prefix: string, announce: (convid: string) => Promise<unknown>): ConversationTurns {
  /**
   * This process's waiting calls: convid → member → how to wake it. Woken with `true` by a release
   * that saw it at the head of the order (in the same MULTI as its removal): it may start at once.
   */
  const waiters = new Map<string, Map<string, (isHead?: boolean) => void>>();

  const wake = (convid: string) => {
    for (const resolve of waiters.get(convid)?.values() ?? []) resolve();
  };

  const nap = (convid: string, member: string, ms: number, signal: AbortSignal) =>
    new Promise<boolean>((resolve) => {
      const done = (isHead = false) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const local = waiters.get(convid);
        local?.delete(member);
        if (local?.size === 0) waiters.delete(convid);
        resolve(isHead);
      };
      const timer = setTimeout(() => done(), ms);
      const onAbort = () => done();
      signal.addEventListener('abort', onAbort, { once: true });
      let local = waiters.get(convid);
      if (!local) waiters.set(convid, (local = new Map()));
      local.set(member, done);
    });

  return {
    async wait(convid, member, { deadline, signal, staleMs }) {
      const key = conversationTurnsKey(prefix, convid);
      let handedOver = false;
      for (;;) {
        if (signal.aborted) return 'stopped';
        // Handed the turn by this process's release of the call before it: no need to read the head again.
        if (handedOver) return 'ready';
        const [head] = await redis.zrange(key, 0, 0);
        // No head: the order was lost (Redis flushed); the version fence still keeps stale writers out.
        if (head === undefined || head === member) return 'ready';
        if (Date.now() - turnArrivedAt(head) > staleMs) {
          await redis.zrem(key, head);
          continue;
        }
        const left = deadline - Date.now();
        if (left <= 0) return 'busy';
        handedOver = await nap(convid, member, Math.min(pollMs, left), signal);
      }
    },
    async release(convid, member) {
      const key = conversationTurnsKey(prefix, convid);
      const [, head] = (await redis.multi().zrem(key, member).zrange(key, 0, 0).exec()) ?? [];
      const next = (head?.[1] as string[] | undefined)?.[0];
      if (next === undefined) return;
      const local = waiters.get(convid)?.get(next);
      if (local) local(true);
      else await announce(convid);
    },
    wake,
  };
}
