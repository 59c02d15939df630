import { controlChannel } from '../shared/channels.js';
import type { ControlMessage } from '../shared/events.js';
import type { Logger } from '../shared/logger.js';
import { openRedis, type RedisClient, type RedisTarget } from '../runs/redis-connection.js';

/**
 * Hands every message of the control channel (cancels, turns, secret changes) to `handle`, on a
 * connection of its own; the caller disconnects it when done.
 */
export async function subscribeToControl(target: RedisTarget, prefix: string, logger: Logger, handle: (message: ControlMessage) => void): Promise<RedisClient> {
  const subscriber = openRedis(target, { maxRetriesPerRequest: null });
  subscriber.on('error', (err) => logger.warn({ err: String(err) }, 'control channel connection error'));
  subscriber.on('message', (_channel: string, text: string) => {
    try {
      handle(JSON.parse(text) as ControlMessage);
    } catch (err) {
      logger.warn({ err }, 'unreadable control message');
    }
  });
  await subscriber.subscribe(controlChannel(prefix));
  return subscriber;
}
