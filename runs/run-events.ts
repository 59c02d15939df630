import { runChannel, runEventsKey } from '../shared/channels.js';
import { firstWorkerEventId, type LoggedEvent, type RunEvent } from '../shared/events.js';
import { afterIoPoll } from '../shared/after-io-poll.js';
import { settledPerTurn } from './per-turn-batch.js';
import type { Logger } from '../shared/logger.js';
import { openRedis, type RedisClient, type RedisTarget } from './redis-connection.js';
import { onRunEventMessage, onRunEventSubscriptions, subscribeRunEvents, unsubscribeRunEvents } from './run-event-pubsub.js';

/**
 * How a web process receives the events of runs, over one subscriber connection:
 * - `listen`: a non-streamed run started here publishes to this process's inbox channel (subscribed at
 *   start-up, so a call costs no subscribe round trip);
 * - `follow`: a logged run (streamed, or with an Idempotency-Key) publishes numbered events on its own
 *   channel and keeps them in a list; following subscribes, reads what is stored, and relays each event
 *   once and in order from any web process, which is what re-attaching and joining need;
 * - `followUnqueued`: the same for a run this process is about to queue, subscribed before its job
 *   exists, so nothing of it can have been published unheard and its list is not read (but for a gap).
 */
export interface RunEvents {
  inboxChannel: string;
  listen(runId: string, handler: (event: RunEvent) => void): () => void;
  /** Relays the events numbered after `afterId`, then the live ones, until the returned function is called. */
  follow(runId: string, afterId: number, handler: (event: LoggedEvent) => void): () => void;
  /**
   * Starts following a run whose job is not queued yet: queue it once `subscribed` has settled, and
   * every event it publishes is heard without reading its list (a streamed call's start costs a
   * SUBSCRIBE that overlaps its admission instead of a SUBSCRIBE and a read after its job is queued).
   */
  followUnqueued(runId: string): UnqueuedFollow;
  /**
   * Calls `listener` each time the connection comes back after it was lost, with when it was lost
   * (epoch ms): events published meanwhile are gone, so whoever waits for one must look elsewhere.
   */
  onReconnect(listener: (lostAt: number) => void): () => void;
  close(): Promise<void>;
}

/** A follow begun before its run's job is queued (RunEvents `followUnqueued`). */
export interface UnqueuedFollow {
  /** Settles once the run's channel is subscribed (or the subscription failed, which is logged). Never rejects. */
  subscribed: Promise<void>;
  /**
   * Relays the run's events to `handler` (those heard before it first, in order) until the returned
   * function is called. Those heard before are handed over before relayTo returns: the run's end may
   * be among them.
   */
  relayTo(handler: (event: LoggedEvent) => void): () => void;
  /** Stops following (the run was not queued, or its relay is over). */
  stop(): void;
}

/** An event this long (characters of JSON) is handed to its handler in a later turn of the event loop. */
const largeEventChars = 256 * 1024;

export async function openRunEvents(target: RedisTarget, reader: RedisClient, prefixOf: (runId: string) => string, inboxChannel: string, logger: Logger): Promise<RunEvents> {
  // On a cluster, by sharded pub/sub: one subscriber connection to each master whose slots it listens on.
  const subscriber = openRedis(target, { maxRetriesPerRequest: null, sharded: true });
  const inboxHandlers = new Map<string, (event: RunEvent) => void>();
  const channelHandlers = new Map<string, Set<(event: LoggedEvent) => void>>();

  const deliver = (channel: string, event: LoggedEvent) => {
    if (channel === inboxChannel) inboxHandlers.get(event.runId)?.(event);
    else for (const handler of channelHandlers.get(channel) ?? []) handler(event);
  };
  // A large event (an answer of megabytes) is handed on after the event loop has polled for I/O once
  // more, so its parsing and what its handler does next (a response serialised and written) never hold
  // the loop as one piece: a request that came meanwhile is read in between. Events that come meanwhile
  // wait behind it.
  let deferred: [string, LoggedEvent][] | undefined;
  const deliverDeferred = () => {
    const batch = deferred!;
    deferred = undefined;
    for (const [channel, event] of batch) deliver(channel, event);
  };
  onRunEventMessage(subscriber, (channel, message) => {
    let event: LoggedEvent;
    try {
      event = JSON.parse(message) as LoggedEvent;
    } catch {
      logger.warn({ channel }, 'unreadable run event');
      return;
    }
    if (!deferred && message.length < largeEventChars) return deliver(channel, event);
    if (!deferred) {
      deferred = [];
      afterIoPoll(deliverDeferred);
    }
    deferred.push([channel, event]);
  });
  subscriber.on('error', (err) => logger.warn({ err: String(err) }, 'run events connection error'));
  await subscribeInbox(subscriber, inboxChannel, logger);
  const reconnectListeners = new Set<(lostAt: number) => void>();
  let lostAt: number | undefined;
  onRunEventSubscriptions(
    subscriber,
    () => (lostAt ??= Date.now()),
    () => {
      if (lostAt === undefined) return;
      const since = lostAt;
      lostAt = undefined;
      logger.warn({ lostForMs: Date.now() - since }, 'run events connection back');
      for (const listener of reconnectListeners) listener(since);
    },
  );

  // The channels subscribed to (SUBSCRIBE sent, no UNSUBSCRIBE since), each with the promise of its SUBSCRIBE.
  const live = new Map<string, Promise<unknown>>();
  // The follows started and stopped in one turn of the event loop change the subscriptions in one
  // SUBSCRIBE and one UNSUBSCRIBE at the next (a write to Redis each, not one per run).
  const changeSubscription = settledPerTurn<string, unknown>((channels) => {
    const toSubscribe = new Set<string>();
    const toUnsubscribe = new Set<string>();
    for (const channel of channels) {
      const wanted = channelHandlers.has(channel);
      if (wanted && !live.has(channel)) toSubscribe.add(channel);
      else if (!wanted && live.has(channel)) toUnsubscribe.add(channel);
    }
    const subscribed = toSubscribe.size ? subscribeRunEvents(subscriber, toSubscribe) : Promise.resolve();
    for (const channel of toSubscribe) live.set(channel, subscribed);
    for (const channel of toUnsubscribe) live.delete(channel);
    if (toUnsubscribe.size) void unsubscribeRunEvents(subscriber, toUnsubscribe).catch(() => undefined);
    return subscribed;
  });

  /** Resolves once the channel is subscribed (at once if it still is, an UNSUBSCRIBE not yet sent). */
  const subscribe = (channel: string, handler: (event: LoggedEvent) => void): Promise<unknown> => {
    let handlers = channelHandlers.get(channel);
    if (!handlers) channelHandlers.set(channel, (handlers = new Set()));
    handlers.add(handler);
    return live.get(channel) ?? changeSubscription(channel);
  };
  const unsubscribe = (channel: string, handler: (event: LoggedEvent) => void) => {
    const handlers = channelHandlers.get(channel);
    handlers?.delete(handler);
    if (handlers?.size !== 0) return;
    channelHandlers.delete(channel);
    void changeSubscription(channel);
  };

  /**
   * Follows the run's channel from `afterId` on. `readStored`: the run's list is read once subscribed,
   * for what was published before (a run already queued); otherwise only for a gap. Events come in order
   * and once each; those relayed before `relayTo` has a handler wait for it.
   */
  const openFollow = (runId: string, afterId: number, { readStored }: { readStored: boolean }): UnqueuedFollow => {
    const channel = runChannel(prefixOf(runId), runId);
    // The worker numbers from firstWorkerEventId (the web process's own `start` is 1): none is missing before.
    let last = Math.max(afterId, firstWorkerEventId - 1);
    let stopped = false;
    let handler: ((event: LoggedEvent) => void) | undefined;
    let early: LoggedEvent[] = [];
    // Live events wait here while the stored ones are read, so each goes out once and in order.
    let held: LoggedEvent[] | undefined = readStored ? [] : undefined;
    const relay = (event: LoggedEvent) => {
      if (stopped || event.id <= last) return;
      last = event.id;
      if (handler) handler(event);
      else early.push(event);
    };
    const catchUp = async () => {
      let read = false;
      try {
        const from = last + 1 - firstWorkerEventId;
        for (const text of await reader.lrange(runEventsKey(prefixOf(runId), runId), from, -1)) relay(JSON.parse(text) as LoggedEvent);
        read = true;
      } catch (err) {
        logger.warn({ err: String(err), runId }, 'stored run events not read');
      }
      const waiting = held ?? [];
      held = undefined;
      // Once the list is read, an event still missing is gone with it (expired) and is not looked for
      // again; after a failed read, the next gap reads again.
      for (const event of waiting.sort((a, b) => a.id - b.id)) (read ? relay : onLive)(event);
    };
    const onLive = (event: LoggedEvent) => {
      if (held) return void held.push(event);
      // A gap means messages were lost (a reconnect): read them from the list (once per gap).
      if (event.id > last + 1) {
        held = [event];
        void catchUp();
        return;
      }
      relay(event);
    };
    const subscribed = subscribe(channel, onLive).then(
      () => (readStored ? catchUp() : undefined),
      (err: unknown) => logger.warn({ err: String(err), runId }, 'run channel not subscribed'),
    );
    const stop = () => {
      if (stopped) return;
      stopped = true;
      unsubscribe(channel, onLive);
    };
    return {
      subscribed: subscribed.then(() => undefined),
      relayTo(given) {
        handler = given;
        const waiting = early;
        early = [];
        for (const event of waiting) if (!stopped) given(event);
        return stop;
      },
      stop,
    };
  };

  return {
    inboxChannel,
    listen(runId, handler) {
      inboxHandlers.set(runId, handler);
      return () => inboxHandlers.delete(runId);
    },
    follow(runId, afterId, handler) {
      const followed = openFollow(runId, afterId, { readStored: true });
      return followed.relayTo(handler);
    },
    followUnqueued(runId) {
      return openFollow(runId, 0, { readStored: false });
    },
    onReconnect(listener) {
      reconnectListeners.add(listener);
      return () => reconnectListeners.delete(listener);
    },
    async close() {
      reconnectListeners.clear();
      subscriber.disconnect();
    },
  };
}

/**
 * Subscribes to the process's inbox, trying again while it is refused: a cluster client may be ready a
 * moment before its sharded subscriber connections are.
 */
async function subscribeInbox(subscriber: RedisClient, inboxChannel: string, logger: Logger): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await subscribeRunEvents(subscriber, [inboxChannel]);
      return;
    } catch (err) {
      if (attempt % 10 === 1) logger.warn({ err: String(err) }, 'run events inbox not subscribed yet; trying again');
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * attempt, 2000)));
    }
  }
}
