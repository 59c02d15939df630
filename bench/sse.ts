import { createEventStreamParser } from '../shared/server-sent-events.js';

/** One event of an API stream, with when it arrived (the parsing is the client package's). */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
  /** Date.now() when the chunk carrying the event's end arrived (comparable with an agent's Date.now()). */
  receivedAt: number;
  /** performance.now() at the same moment, for intervals measured in this process. */
  receivedHr: number;
}

export interface SseParser {
  /** Feeds the next decoded chunk; calls the handler for every event it completes. */
  push(chunk: string): void;
}

export function createSseParser(onEvent: (event: SseEvent) => void): SseParser {
  const parser = createEventStreamParser();
  return {
    push(chunk) {
      const receivedAt = Date.now();
      const receivedHr = performance.now();
      for (const event of parser.push(chunk)) {
        onEvent({ id: event.id === '' ? undefined : event.id, event: event.event, data: event.data, receivedAt, receivedHr });
      }
    },
  };
}
