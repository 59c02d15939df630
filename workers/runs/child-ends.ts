import { randomUUID } from 'node:crypto';
import type { ExecutionResponse } from '../../shared/api.js';
import { workerInboxChannel } from '../../shared/channels.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { shardsOf } from '../../shared/shards.js';
import type { Db } from '../../db/database.js';
import { findExecutionResponses } from '../../db/executions.repository.js';
import type { RedisClient } from '../../runs/redis-connection.js';
import { openRunEvents } from '../../runs/run-events.js';
import type { ErrorCode } from '../../shared/errors.js';

/**
 * How a worker hears the ends of the child runs its runs wait for (sys.call, DESIGN §19), at no cost
 * per waiting run (§11): the children it starts publish their end on this worker's inbox channel, one
 * subscription for all of them. A child started by an earlier run (a parent resumed after its ask, on
 * any worker) publishes where that run's worker listened: its end is read from its execution record,
 * by one query a second for every such child this worker waits for longer than that (and for every
 * child after the connection was lost, when an end may have been published unheard).
 */
export interface ChildEnds {
  /** Where the children this worker starts publish their end. */
  inboxChannel: string;
  /**
   * Waits for run `runId`'s end, until `stop` is called. `publishesHere`: the child was queued by this
   * worker, so its end comes on `inboxChannel` and its record is read only after a lost connection.
   */
  await(runId: string): { ended: Promise<ChildEnd>; publishesHere(): void; stop(): void };
  close(): Promise<void>;
}

/** A child's end: its execution response, or why it was refused before its agent ran (nothing recorded then). */
export type ChildEnd = { kind: 'response'; response: ExecutionResponse } | { kind: 'refused'; code: ErrorCode; message: string };

const pollMs = 1000;

export async function openChildEnds(deps: { config: Config; db: Db; logger: Logger; reader: RedisClient }): Promise<ChildEnds> {
  const { config, db, logger } = deps;
  const inboxChannel = workerInboxChannel(config.queuePrefix, randomUUID());
  const events = await openRunEvents(config, deps.reader, shardsOf(config).prefixOf, inboxChannel, logger);
  // Each child waited for, by run id: since when, and who waits (a run tried again may wait for it twice).
  const waiting = new Map<string, { since: number; polled: boolean; waiters: Set<(end: ChildEnd) => void>; stopListening: () => void }>();
  const settle = (runId: string, end: ChildEnd) => {
    for (const waiter of waiting.get(runId)?.waiters ?? []) waiter(end);
  };

  let polling = false;
  // A read of every child asked for while another read was under way: made when that one is done.
  let everyChildAgain = false;
  const poll = async (olderThan: number, all = false) => {
    if (polling) {
      everyChildAgain ||= all;
      return;
    }
    polling = true;
    try {
      const ids = [...waiting].filter(([, child]) => (all || child.polled) && child.since <= olderThan).map(([runId]) => runId);
      for (let from = 0; from < ids.length; from += pollBatch) {
        for (const [runId, response] of await findExecutionResponses(db, ids.slice(from, from + pollBatch))) {
          settle(runId, { kind: 'response', response });
        }
      }
    } catch (err) {
      logger.warn({ err: String(err) }, 'child run ends not read; reading again in a second');
    } finally {
      polling = false;
      if (everyChildAgain) {
        everyChildAgain = false;
        void poll(Date.now(), true);
      }
    }
  };
  const timer = setInterval(() => void poll(Date.now() - pollMs), pollMs);
  timer.unref();
  const stopReconnects = events.onReconnect(() => void poll(Date.now(), true));

  return {
    inboxChannel,
    await(runId) {
      let waiter!: (end: ChildEnd) => void;
      const ended = new Promise<ChildEnd>((resolve) => (waiter = resolve));
      let child = waiting.get(runId);
      if (!child) {
        const stopListening = events.listen(runId, (event) => {
          if (event.event === 'end') settle(runId, { kind: 'response', response: event.data });
          else if (event.event === 'refused') settle(runId, { kind: 'refused', code: event.data.code, message: event.data.message });
        });
        waiting.set(runId, (child = { since: Date.now(), polled: true, waiters: new Set(), stopListening }));
      }
      child.waiters.add(waiter);
      return {
        ended,
        publishesHere() {
          child.polled = false;
        },
        stop() {
          child.waiters.delete(waiter);
          if (child.waiters.size > 0 || waiting.get(runId) !== child) return;
          child.stopListening();
          waiting.delete(runId);
        },
      };
    },
    async close() {
      clearInterval(timer);
      stopReconnects();
      await events.close();
    },
  };
}

/** Run ids per query of the execution records. */
const pollBatch = 1000;
