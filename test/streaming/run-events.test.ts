import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { runChannel, runEventsKey, webInboxChannel } from '../../shared/channels.js';
import type { LoggedEvent } from '../../shared/events.js';
import { createLogger } from '../../shared/logger.js';
import { openRunEvents, type RunEvents } from '../../runs/run-events.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/**
 * How a web process follows a logged run (runs/run-events.ts `follow`), against a real Redis:
 * what it relays, and how often it reads the run's event list for it (a MONITOR connection sees every
 * command).
 */
describe('following a logged run', () => {
  const prefix = `${testEnv.QUEUE_PREFIX}-run-events`;
  let redis: Redis;
  let reader: Redis;
  let monitor: Redis;
  let runEvents: RunEvents;
  const traffic: string[] = [];

  before(async () => {
    redis = new Redis(testEnv.REDIS_URL!);
    reader = new Redis(testEnv.REDIS_URL!);
    runEvents = await openRunEvents({ redisUrl: testEnv.REDIS_URL!, redisCluster: false }, reader, () => prefix, webInboxChannel(prefix, 'web-under-test'), createLogger('silent'));
    monitor = await new Redis(testEnv.REDIS_URL!).monitor();
    monitor.on('monitor', (_time: string, args: string[]) => traffic.push(args.join(' ').toLowerCase()));
  });
  after(async () => {
    monitor.disconnect();
    await runEvents.close();
    reader.disconnect();
    redis.disconnect();
  });

  /** As the worker does: appends the event to the run's list and publishes it on the run's channel (either can be left out). */
  const publish = async (runId: string, id: number, { live = true, stored = true } = {}) => {
    const text = JSON.stringify({ runId, id, event: 'delta', data: { text: `t${id}` } } satisfies LoggedEvent);
    if (stored) await redis.rpush(runEventsKey(prefix, runId), text);
    if (live) await redis.publish(runChannel(prefix, runId), text);
  };
  /** Once the monitor has seen every command sent so far. */
  const monitored = async () => {
    const marker = randomUUID();
    await redis.echo(marker);
    await waitFor(() => traffic.some((line) => line.includes(marker)), 2000, 'the monitor caught up');
  };
  const listReads = (runId: string) => traffic.filter((line) => line.startsWith('lrange ') && line.includes(runId)).length;

  it('relays what is stored, then the live events, reading the list once', async () => {
    const runId = randomUUID();
    await publish(runId, 2, { live: false });
    const got: number[] = [];
    const stop = runEvents.follow(runId, 0, (e) => got.push(e.id));
    await waitFor(() => got.length === 1, 2000, 'the stored event relayed');
    await publish(runId, 3);
    await waitFor(() => got.length === 2, 2000, 'the live event relayed');
    stop();
    await monitored();
    assert.deepEqual(got, [2, 3]);
    assert.equal(listReads(runId), 1);
  });

  it('takes the first worker event (number 2) for no gap when nothing was stored yet', async () => {
    const runId = randomUUID();
    const got: number[] = [];
    const stop = runEvents.follow(runId, 0, (e) => got.push(e.id));
    await waitFor(() => listReads(runId) === 1, 2000, 'the list read once subscribed');
    await publish(runId, 2);
    await publish(runId, 3);
    await waitFor(() => got.length === 2, 2000, 'two events relayed');
    stop();
    await monitored();
    assert.deepEqual(got, [2, 3]);
    assert.equal(listReads(runId), 1, 'no second read');
  });

  it('reads the list again for an event the channel missed, and relays each once, in order', async () => {
    const runId = randomUUID();
    const got: number[] = [];
    const stop = runEvents.follow(runId, 0, (e) => got.push(e.id));
    await waitFor(() => listReads(runId) === 1, 2000, 'the list read once subscribed');
    await publish(runId, 2);
    await publish(runId, 3, { live: false });
    await publish(runId, 4);
    await publish(runId, 5);
    await waitFor(() => got.length === 4, 2000, 'four events relayed');
    stop();
    await monitored();
    assert.deepEqual(got, [2, 3, 4, 5]);
    assert.equal(listReads(runId), 2, 'one more read, for the gap');
  });

  it('relays what comes after an event the list no longer has, reading for it once', async () => {
    const runId = randomUUID();
    const got: number[] = [];
    const stop = runEvents.follow(runId, 0, (e) => got.push(e.id));
    await waitFor(() => listReads(runId) === 1, 2000, 'the list read once subscribed');
    await publish(runId, 2);
    // Gone from the list (it expired) and never heard; the next one heard but not in the list either.
    await publish(runId, 3, { live: false, stored: false });
    await publish(runId, 4, { stored: false });
    await waitFor(() => got.length === 2, 2000, 'the event after the gap relayed');
    await publish(runId, 5);
    await waitFor(() => got.length === 3, 2000, 'the next one relayed');
    stop();
    await monitored();
    assert.deepEqual(got, [2, 4, 5]);
    assert.equal(listReads(runId), 2, 'one more read, for the gap');
  });

  it('follows a run not queued yet without reading its list, once subscribed', async () => {
    const runId = randomUUID();
    const followed = runEvents.followUnqueued(runId);
    await followed.subscribed;
    // As the worker would, once the job is queued after the subscription.
    await publish(runId, 2);
    await publish(runId, 3);
    // A run published on after them, on the same connection: once its event is relayed, theirs were heard too.
    const marker = randomUUID();
    const markers: number[] = [];
    const markerFollow = runEvents.followUnqueued(marker);
    const stopMarker = markerFollow.relayTo((e) => markers.push(e.id));
    await markerFollow.subscribed;
    await publish(marker, 2);
    await waitFor(() => markers.length === 1, 2000, 'the later event relayed');
    stopMarker();
    // Heard before a handler was given: kept for it, in order.
    const got: number[] = [];
    const stop = followed.relayTo((e) => got.push(e.id));
    assert.deepEqual(got, [2, 3], 'the events heard before, at once');
    await publish(runId, 4);
    await waitFor(() => got.length === 3, 2000, 'three events relayed');
    stop();
    await monitored();
    assert.deepEqual(got, [2, 3, 4]);
    assert.equal(listReads(runId), 0, 'the list never read');
  });

  it('reads the list of a run followed before it was queued only for a gap', async () => {
    const runId = randomUUID();
    const followed = runEvents.followUnqueued(runId);
    const got: number[] = [];
    const stop = followed.relayTo((e) => got.push(e.id));
    await followed.subscribed;
    await publish(runId, 2);
    await publish(runId, 3, { live: false });
    await publish(runId, 4);
    await waitFor(() => got.length === 3, 2000, 'three events relayed');
    stop();
    await monitored();
    assert.deepEqual(got, [2, 3, 4]);
    assert.equal(listReads(runId), 1, 'one read, for the gap');
  });

  it('stops a follow of a run that was never queued', async () => {
    const runId = randomUUID();
    const followed = runEvents.followUnqueued(runId);
    await followed.subscribed;
    followed.stop();
    await waitFor(() => subscriptionCommands('unsubscribe', [runId]).length > 0, 2000, 'unsubscribed');
    await monitored();
    assert.equal(subscriptionCommands('subscribe', [runId]).length, 1);
    assert.equal(listReads(runId), 0);
  });

  const subscriptionCommands = (command: 'subscribe' | 'unsubscribe', runIds: string[]) =>
    traffic.filter((line) => line.startsWith(`${command} `) && runIds.some((runId) => line.includes(runId)));

  it('subscribes for the follows started in one turn with one command, and unsubscribes them with one', async () => {
    const runIds = [randomUUID(), randomUUID(), randomUUID()];
    const got = new Map<string, number[]>(runIds.map((runId) => [runId, []]));
    const stops = runIds.map((runId) => runEvents.follow(runId, 0, (e) => got.get(runId)!.push(e.id)));
    await waitFor(() => runIds.every((runId) => listReads(runId) === 1), 2000, 'each list read once subscribed');
    for (const runId of runIds) await publish(runId, 2);
    await waitFor(() => runIds.every((runId) => got.get(runId)!.length === 1), 2000, "each run's event relayed");
    for (const stop of stops) stop();
    await publish(runIds[0]!, 3);
    await waitFor(() => subscriptionCommands('unsubscribe', runIds).length > 0, 2000, 'unsubscribed');
    await monitored();
    const subscribes = subscriptionCommands('subscribe', runIds);
    assert.equal(subscribes.length, 1, subscribes.join('\n'));
    assert.ok(runIds.every((runId) => subscribes[0]!.includes(runId)), 'all three channels in it');
    const unsubscribes = subscriptionCommands('unsubscribe', runIds);
    assert.equal(unsubscribes.length, 1, unsubscribes.join('\n'));
    assert.ok(runIds.every((runId) => unsubscribes[0]!.includes(runId)), 'all three channels in it');
    assert.deepEqual(got.get(runIds[0]!), [2], 'nothing relayed once stopped');
  });

  it('keeps the channel of a follow stopped and started again in one turn, and relays to the new one', async () => {
    const runId = randomUUID();
    const first: number[] = [];
    const stopFirst = runEvents.follow(runId, 0, (e) => first.push(e.id));
    await waitFor(() => listReads(runId) === 1, 2000, 'the list read once subscribed');
    stopFirst();
    const second: number[] = [];
    const stopSecond = runEvents.follow(runId, 1, (e) => second.push(e.id));
    await waitFor(() => listReads(runId) === 2, 2000, 'the list read for the second follow');
    await publish(runId, 2);
    await waitFor(() => second.length === 1, 2000, 'the event relayed to the second follow');
    stopSecond();
    await waitFor(() => subscriptionCommands('unsubscribe', [runId]).length > 0, 2000, 'unsubscribed');
    await monitored();
    assert.deepEqual(first, []);
    assert.deepEqual(second, [2]);
    assert.equal(subscriptionCommands('subscribe', [runId]).length, 1, 'subscribed once');
    assert.equal(subscriptionCommands('unsubscribe', [runId]).length, 1, 'unsubscribed once, at the end');
  });
});
