/** Every Redis key and channel name, built from the configured prefix. */

/** BullMQ queue that carries agent runs. */
export const runQueueName = 'runs';

/** Pub/sub channel a web process listens on for the events of the runs it started. */
export function webInboxChannel(prefix: string, webId: string): string {
  return `${prefix}:inbox:${webId}`;
}
