import type { RedisClient } from './redis-connection.js';
import { runChannel, runEventsKey } from '../shared/channels.js';
import { firstWorkerEventId, type RunEvent } from '../shared/events.js';
import type { RunJobData } from '../shared/jobs.js';
import { createRunEventBatch, type RunEventBatch } from './run-event-batch.js';
import { publishRunEvent } from './run-event-pubsub.js';

type EventOf<E> = E extends RunEvent ? Omit<E, 'runId'> : never;
/** An event of the run, without its run id (the publisher adds it). */
export type RunEventBody = EventOf<RunEvent>;

export type PublishRunEvent = (event: RunEventBody) => Promise<void>;

/**
 * Publishes one run's events where its job says (RunJobData.events). A logged run's events are
 * numbered, appended to its event list (kept `replayMs` for re-attaching) and published on its
 * channel, with the events of every run on the same connection made in the same turn of the event
 * loop (run-event-batch.ts). Events go out in call order: one connection, commands in order.
 */
export function createRunEventPublisher(redis: RedisClient, prefix: string, data: RunJobData, replayMs: number, firstId = firstWorkerEventId): PublishRunEvent {
  const events = data.events;
  if (events.kind === 'inbox') {
    return async (event) => {
      await publishRunEvent(redis, events.channel, JSON.stringify({ runId: data.runId, ...event }));
    };
  }
  const listKey = runEventsKey(prefix, data.runId);
  const channel = runChannel(prefix, data.runId);
  const batch = batchOf(redis);
  let nextId = firstId;
  return (event) => batch.append({ listKey, channel, text: JSON.stringify({ runId: data.runId, id: nextId++, ...event }), replayMs });
}

/** One batch per connection, so the events of every run publishing on it in a turn go out together. */
const batches = new WeakMap<RedisClient, RunEventBatch>();

function batchOf(redis: RedisClient): RunEventBatch {
  let batch = batches.get(redis);
  if (!batch) batches.set(redis, (batch = createRunEventBatch(redis)));
  return batch;
}

/** For a process other than the run's own (its worker died): continues the numbering after what is stored. */
export async function resumeRunEventPublisher(redis: RedisClient, prefix: string, data: RunJobData, replayMs: number): Promise<PublishRunEvent> {
  const stored = data.events.kind === 'log' ? await redis.llen(runEventsKey(prefix, data.runId)) : 0;
  return createRunEventPublisher(redis, prefix, data, replayMs, firstWorkerEventId + stored);
}
