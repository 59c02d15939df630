import type { Redis } from 'ioredis';
import { runChannel, runEventsKey } from '../shared/channels.js';
import { firstWorkerEventId, type RunEvent } from '../shared/events.js';
import type { RunJobData } from '../shared/jobs.js';
import { scriptCommand } from './redis-script.js';

type EventOf<E> = E extends RunEvent ? Omit<E, 'runId'> : never;
/** An event of the run, without its run id (the publisher adds it). */
export type RunEventBody = EventOf<RunEvent>;

export type PublishRunEvent = (event: RunEventBody) => Promise<void>;

/**
 * Appends a logged run's event to its list, renews the list's expiry and publishes the event, in one
 * command: atomic, so list and channel never disagree, and a plain command, so a connection with
 * auto-pipelining sends the events of every run made in the same turn of the event loop in one write
 * (a MULTI per event cost a socket write each: a quarter of a worker's time when agents stream tokens).
 */
const appendRunEvent = scriptCommand<[listKey: string, text: string, replayMs: number, channel: string]>(
  1,
  `
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[1])
`,
);

/**
 * Publishes one run's events where its job says (RunJobData.events). A logged run's events are
 * numbered, appended to its event list (kept `replayMs` for re-attaching) and published on its
 * channel. Events go out in call order: one connection, commands in order.
 */
export function createRunEventPublisher(redis: Redis, prefix: string, data: RunJobData, replayMs: number, firstId = firstWorkerEventId): PublishRunEvent {
  const events = data.events;
  if (events.kind === 'inbox') {
    return async (event) => {
      await redis.publish(events.channel, JSON.stringify({ runId: data.runId, ...event }));
    };
  }
  const listKey = runEventsKey(prefix, data.runId);
  const channel = runChannel(prefix, data.runId);
  let nextId = firstId;
  return async (event) => {
    const text = JSON.stringify({ runId: data.runId, id: nextId++, ...event });
    await appendRunEvent(redis, listKey, text, replayMs, channel);
  };
}

/** For a process other than the run's own (its worker died): continues the numbering after what is stored. */
export async function resumeRunEventPublisher(redis: Redis, prefix: string, data: RunJobData, replayMs: number): Promise<PublishRunEvent> {
  const stored = data.events.kind === 'log' ? await redis.llen(runEventsKey(prefix, data.runId)) : 0;
  return createRunEventPublisher(redis, prefix, data, replayMs, firstWorkerEventId + stored);
}
