import { Redis } from 'ioredis';
import type { RunEvent } from '../../shared/events.js';
import type { Logger } from '../../shared/logger.js';

/**
 * The pub/sub channel this web process receives its runs' events on. One subscription per process
 * (made at start-up) instead of one per run saves a Redis round trip on every call.
 */
export interface RunInbox {
  channel: string;
  /** Routes the events of one run to `handler` until the returned function is called. */
  listen(runId: string, handler: (event: RunEvent) => void): () => void;
  close(): Promise<void>;
}

export async function openRunInbox(redisUrl: string, channel: string, logger: Logger): Promise<RunInbox> {
  const subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const handlers = new Map<string, (event: RunEvent) => void>();
  subscriber.on('message', (_channel: string, message: string) => {
    let event: RunEvent;
    try {
      event = JSON.parse(message) as RunEvent;
    } catch {
      logger.warn({ channel }, 'unreadable run event');
      return;
    }
    handlers.get(event.runId)?.(event);
  });
  subscriber.on('error', (err) => logger.warn({ err: String(err) }, 'run inbox connection error'));
  await subscriber.subscribe(channel);
  return {
    channel,
    listen(runId, handler) {
      handlers.set(runId, handler);
      return () => handlers.delete(runId);
    },
    async close() {
      subscriber.disconnect();
    },
  };
}
