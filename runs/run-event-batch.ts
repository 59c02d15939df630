import { Command } from 'ioredis';
import { isCluster, type RedisClient } from './redis-connection.js';
import { settledPerTurn } from './per-turn-batch.js';
import { publishCommandOf } from './run-event-pubsub.js';
import { hashedPart } from '../shared/key-slot.js';

/** One logged run's event, as the batch sends it (run-event-publisher.ts). */
export interface BatchedRunEvent {
  listKey: string;
  channel: string;
  text: string;
  replayMs: number;
}

/** Events a single script call carries at most; a longer turn's events go out in several, in order. */
export const maxEventsPerCall = 256;

/**
 * Appends each event to its run's list, renews the list's expiry and publishes it on the run's
 * channel, event after event in the order given: one atomic script for a whole batch. ARGV holds
 * (text, channel, replayMs) for each key. Published with SPUBLISH on a cluster (run-event-pubsub.ts).
 */
const appendRunEventsLua = (publish: 'SPUBLISH' | 'PUBLISH') => `
for i = 1, #KEYS do
  local text = ARGV[3 * i - 2]
  redis.call('RPUSH', KEYS[i], text)
  redis.call('PEXPIRE', KEYS[i], ARGV[3 * i])
  redis.call('${publish}', ARGV[3 * i - 1], text)
end
`;

/**
 * Sends the logged events of every run made in one turn of the event loop as one script call. At a
 * thousand streaming runs a worker makes thousands of token events a second: a command each cost a
 * command object, a promise and a reply each, and ioredis's auto-pipelining sends a turn's commands
 * only once the previous turn's replies are back, so a token could wait a round trip more. The batch
 * goes out at the same point auto-pipelining would (after the turn's I/O: per-turn-batch.ts), straight
 * to the connection: a batch never waits for the one before. Events keep their order: a run's events
 * are sent in the order they were made, batches in the order they were closed, on one connection.
 */
export interface RunEventBatch {
  /** Resolves once Redis has the event (with the rest of its batch); rejects with the batch's error. */
  append(event: BatchedRunEvent): Promise<void>;
}

export function createRunEventBatch(redis: RedisClient): RunEventBatch {
  // One promise for a whole batch, settled by its sending: not one per event.
  const lua = appendRunEventsLua(publishCommandOf(redis));
  return { append: settledPerTurn<BatchedRunEvent, void>((events) => sendEvents(redis, lua, events)) };
}

/**
 * The events in calls of at most maxEventsPerCall, written one after the other (never waiting between).
 * A script's keys must share a slot on a cluster: there, events of runs on several shards (DESIGN §17)
 * go in a call per shard, each run's in its order.
 */
function sendEvents(redis: RedisClient, lua: string, events: readonly BatchedRunEvent[]): Promise<void> {
  const calls: Promise<unknown>[] = [];
  for (const group of isCluster(redis) ? bySlot(events) : [events]) {
    for (let from = 0; from < group.length; from += maxEventsPerCall) {
      const slice = group.slice(from, from + maxEventsPerCall);
      const args: (string | number)[] = [lua, slice.length];
      for (const event of slice) args.push(event.listKey);
      for (const event of slice) args.push(event.text, event.channel, event.replayMs);
      // Not redis.eval: that would ride the connection's auto-pipeline, and wait for its last replies.
      const command = new Command('eval', args);
      redis.sendCommand(command);
      calls.push(command.promise);
    }
  }
  return Promise.all(calls).then(() => undefined);
}

/** The events by the part of their list key a slot is hashed from (one group when every key shares a hash tag). */
function bySlot(events: readonly BatchedRunEvent[]): (readonly BatchedRunEvent[])[] {
  const first = hashedPart(events[0]?.listKey ?? '');
  if (events.every((event) => hashedPart(event.listKey) === first)) return [events];
  const groups = new Map<string, BatchedRunEvent[]>();
  for (const event of events) {
    const part = hashedPart(event.listKey);
    let group = groups.get(part);
    if (!group) groups.set(part, (group = []));
    group.push(event);
  }
  return [...groups.values()];
}
