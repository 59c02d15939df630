/** An incremental parser of `text/event-stream` (the subset the server speaks, per the SSE spec). */

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
  /** Comment lines seen (`: keep-alive`). */
  comments(): number;
}

export function createSseParser(onEvent: (event: SseEvent) => void): SseParser {
  let buffer = '';
  let comments = 0;
  let fields: { id: string | undefined; event: string; data: string[] } = { id: undefined, event: 'message', data: [] };

  const takeLine = (line: string, receivedAt: number, receivedHr: number) => {
    if (line === '') {
      if (fields.data.length > 0) onEvent({ id: fields.id, event: fields.event, data: fields.data.join('\n'), receivedAt, receivedHr });
      fields = { id: undefined, event: 'message', data: [] };
      return;
    }
    if (line.startsWith(':')) {
      comments += 1;
      return;
    }
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (name === 'data') fields.data.push(value);
    else if (name === 'event') fields.event = value;
    else if (name === 'id') fields.id = value;
  };

  return {
    push(chunk) {
      const receivedAt = Date.now();
      const receivedHr = performance.now();
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, end).replace(/\r$/, '');
        buffer = buffer.slice(end + 1);
        takeLine(line, receivedAt, receivedHr);
      }
    },
    comments: () => comments,
  };
}
