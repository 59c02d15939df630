import { isCluster, type RedisClient } from './redis-connection.js';

/**
 * How run events travel (DESIGN §17): on a cluster by sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis 7),
 * so a message goes only to the node that serves its channel's slot (a plain PUBLISH is copied to every
 * node of a cluster); on one Redis by plain PUBLISH/SUBSCRIBE. A run's channel carries the same hash
 * tag as its event list, so the script that appends and publishes stays on one slot.
 */

/** The publish command for `redis`, as a script calls it. */
export function publishCommandOf(redis: RedisClient): 'SPUBLISH' | 'PUBLISH' {
  return isCluster(redis) ? 'SPUBLISH' : 'PUBLISH';
}

/** Publishes one message on a run event channel. */
export function publishRunEvent(redis: RedisClient, channel: string, message: string): Promise<unknown> {
  return isCluster(redis) ? redis.spublish(channel, message) : redis.publish(channel, message);
}

/**
 * Subscribes to run event channels. On a cluster one SSUBSCRIBE per hash tag, since the channels of one
 * SSUBSCRIBE must share a slot.
 */
export function subscribeRunEvents(subscriber: RedisClient, channels: Iterable<string>): Promise<unknown> {
  if (!isCluster(subscriber)) return subscriber.subscribe(...channels);
  return Promise.all([...byHashTag(channels).values()].map((group) => subscriber.ssubscribe(...group)));
}

export function unsubscribeRunEvents(subscriber: RedisClient, channels: Iterable<string>): Promise<unknown> {
  if (!isCluster(subscriber)) return subscriber.unsubscribe(...channels);
  return Promise.all([...byHashTag(channels).values()].map((group) => subscriber.sunsubscribe(...group)));
}

/** Calls `handler` with each run event message the subscriber receives. */
export function onRunEventMessage(subscriber: RedisClient, handler: (channel: string, message: string) => void): void {
  subscriber.on(isCluster(subscriber) ? 'smessage' : 'message', handler);
}

/**
 * Tells when the subscriptions were lost (messages published from then on are gone) and when they are
 * back. A plain connection: it closed, and is ready again (ioredis subscribes again before `ready`).
 * A cluster: it closed, or one of its sharded subscriber connections went (a node failed or left), and
 * the set was made again (ioredis subscribes the channels of every slot again before `subscribersReady`).
 */
export function onRunEventSubscriptions(subscriber: RedisClient, lost: () => void, back: () => void): void {
  if (isCluster(subscriber)) {
    // The whole cluster connection lost stops every sharded subscriber; they are made again after it is back.
    subscriber.on('close', lost);
    subscriber.on('-subscriber', lost);
    subscriber.on('subscribersReady', back);
    return;
  }
  subscriber.on('close', lost);
  subscriber.on('ready', back);
}

/** Redis's rule: a key is hashed by the part between its first `{` and the next `}` when that is not empty. */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

function byHashTag(channels: Iterable<string>): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const channel of channels) {
    const tag = hashTagOf(channel);
    const group = groups.get(tag);
    if (group) group.push(channel);
    else groups.set(tag, [channel]);
  }
  return groups;
}
